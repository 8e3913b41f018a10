import {
  type ChannelSpec,
  type CloseCode,
  type Connection,
  type ConnectionEventMap,
  type ConnectionLimits,
  type ConnectionState,
  type ConnectionStats,
  decodeCloseReason,
  Emitter,
  encodeCloseReason,
  type Handler,
  MutableConnectionStats,
  RateBudget,
  RttEstimator,
  type Timer,
  TransportError,
  type Unsubscribe,
  validateChannels,
} from '@netplay/transport';
import { ClientHandshake, HandshakeReply } from './client-handshake.js';
import { fragmentSize, maxUnreliable, type UdpConfig } from './config.js';
import { CongestionWindow } from './congestion-window.js';
import type { DropCounters } from './counters.js';
import { InFlightPackets } from './in-flight.js';
import { LossRules } from './loss-rules.js';
import { channelHash, type PeerIo, type UdpPeerCounters } from './peer-io.js';
import { ReceiveChannels } from './receive-channels.js';
import { ReceivedPackets } from './received-packets.js';
import { SendQueues } from './send-queues.js';
import type { SentPacket } from './sent-packet.js';
import { TickSchedule } from './tick-schedule.js';
import {
  ACK_BITS,
  crcOk,
  DATA_HEADER_BYTES,
  DATA_MARK,
  DataFlag,
  dataCrcOk,
  FrameType,
  isData,
  PacketType,
  resolve16,
  sealData,
  sessionOf,
  u16,
  u32,
} from './wire.js';

const CLOSE_ATTEMPTS = 5;
/** Where the frames of a DATA packet start in the scratch buffer (room for the longest header). */
const FRAMES_AT = DATA_HEADER_BYTES - 4;

/**
 * One end of a UDP connection, as a sans-I/O state machine: it is fed datagrams with
 * {@link input} and time through its {@link PeerIo.clock}, and emits datagrams through
 * {@link PeerIo.output}. It implements the whole {@link Connection} contract: the client
 * handshake (HELLO → CHALLENGE → CONNECT → ACCEPT), reliable channels (packet sequence numbers,
 * acks with a 32-bit ack bitfield, retransmission after an RFC 6298 RTO or when three later
 * packets were acknowledged, fragmentation and reassembly), unreliable-sequenced channels,
 * congestion and flow control, keepalives, `interrupted` and the disconnect timeout.
 *
 * This class is the glue: it reads and writes DATA packets and runs the connection's life
 * (handshake, liveness, close); the rules live in modules of their own: {@link SendQueues} (what
 * goes next), {@link ReceiveChannels} (delivery and reassembly), {@link ReceivedPackets} (acks we
 * send), {@link InFlightPackets} and {@link LossRules} (acks we get: loss, spurious-loss undo,
 * reordering tolerance), {@link CongestionWindow}, {@link TickSchedule} (the late-tick rule) and
 * {@link ClientHandshake}.
 *
 * The dgram shell (`listenUdp`, `connectUdp`) wraps it; tests also run it on a simulated network.
 */
export class UdpPeer implements Connection {
  readonly channels: readonly ChannelSpec[];
  readonly limits: ConnectionLimits;
  readonly stats: ConnectionStats;
  /** Extra UDP counters (live). */
  readonly counters: UdpPeerCounters = {
    packetsLost: 0,
    spuriousLosses: 0,
    acksSent: 0,
    windowBytes: 0,
    reassemblyBytes: 0,
  };
  private readonly mstats = new MutableConnectionStats();
  private readonly emitter = new Emitter<ConnectionEventMap>();
  private readonly rtt: RttEstimator;
  private readonly queues: SendQueues;
  private readonly inbound: ReceiveChannels;
  private readonly received = new ReceivedPackets();
  private readonly inFlight = new InFlightPackets();
  private readonly window: CongestionWindow;
  private readonly loss: LossRules;
  private readonly ticks: TickSchedule;
  /** What the peer may send us (undefined: `rateLimits: false`). Past it: {@link flooded}. */
  private readonly budget: RateBudget | undefined;
  /** When the datagram being read arrived (whole ms): the time its messages are charged at. */
  private readAt = 0;
  private readonly hash: number;
  private currentState: ConnectionState;
  private sessionId: number;

  // packets
  private nextPacketSeq = 1;
  /** Views of `scratch` by length: the datagrams handed to `output`. */
  private readonly views: Array<Uint8Array | undefined> = [];
  /** Scratch for a DATA header (at most {@link FRAMES_AT} bytes). */
  private readonly hdr = new Uint8Array(FRAMES_AT);
  /** When the last DATA packet went out (any kind): keepalive Pings only go on a silent link. */
  private lastSentAt = 0;
  private rtoBackoff = 1;

  // liveness
  private lastHeard: number;
  private lastTrackedSent: number;
  private interruptedSince = -1;
  private flushScheduled = false;
  private pingDue = false;
  private readonly scratch: Uint8Array;

  // closing
  private lingering = false;
  /** Closing after a flood: the Close goes out without waiting for the send queue. */
  private abandon = false;
  private dead = false;
  private closeReason: Uint8Array | undefined;
  private closeSentCount = 0;
  private closeSentAt = -1e9;
  private closeAckDue = false;

  // client handshake
  private nonce = 0;
  private handshake: ClientHandshake | undefined;
  private handshakeTimer: Timer | undefined;
  private connectDeadline: Timer | undefined;

  private constructor(
    private readonly io: PeerIo,
    readonly config: UdpConfig,
    channels: readonly ChannelSpec[],
    readonly remoteAddress: string,
    state: ConnectionState,
    sessionId: number,
  ) {
    this.channels = validateChannels(channels);
    if (this.channels.length > 255) throw new TransportError('invalid-argument', 'at most 255 channels');
    this.hash = channelHash(this.channels);
    this.limits = Object.freeze({ maxMessageBytes: config.maxMessageBytes, maxUnreliableBytes: maxUnreliable(config) });
    this.stats = this.mstats;
    this.rtt = new RttEstimator(config.minRtoMs, 2000, 200, 1);
    this.window = new CongestionWindow(config, this.counters);
    this.loss = new LossRules(this.rtt, config.tickMs);
    this.scratch = new Uint8Array(FRAMES_AT + config.mtu);
    const idleTickMs = Math.max(config.tickMs, Math.min(config.keepaliveMs / 2, config.timeouts.interruptMs / 8));
    this.ticks = new TickSchedule(io.clock, config.tickMs, idleTickMs, () => this.onTick());
    this.queues = new SendQueues(
      this.channels,
      config,
      this.limits,
      fragmentSize(config),
      this.mstats,
      this.inFlight,
      this.window,
    );
    this.currentState = state;
    this.sessionId = sessionId;
    this.lastHeard = io.clock.now();
    this.lastTrackedSent = this.lastHeard;
    const peer = this;
    this.inbound = new ReceiveChannels(
      this.channels,
      config,
      this.counters,
      {
        get open() {
          return peer.currentState === 'open';
        },
        deliver: (channel, data) => this.deliver(channel, data),
        fail: (error) => this.fail(error),
        malformed: (what) => this.malformed(what),
      },
      io.reassemblyBudget,
    );
    this.budget = config.rateLimits ? new RateBudget(config.rateLimits, this.lastHeard) : undefined;
  }

  /** Starts the client side: sends HELLO and retries until ACCEPT, REFUSE or `connectMs`. */
  static client(io: PeerIo, config: UdpConfig, channels: readonly ChannelSpec[], remoteAddress: string): UdpPeer {
    const p = new UdpPeer(io, config, channels, remoteAddress, 'connecting', 0);
    const random = io.random ?? ((n: number) => crypto.getRandomValues(new Uint8Array(n)));
    p.nonce = u32(random(4), 0) || 1;
    p.handshake = new ClientHandshake(p.nonce, p.hash);
    p.connectDeadline = io.clock.setTimer(config.timeouts.connectMs, () => {
      if (p.currentState === 'connecting') {
        p.finish('timeout', 'connect timed out', new TransportError('timeout', 'the handshake did not finish'));
      }
    });
    p.handshakeStep();
    return p;
  }

  /** The server side of an accepted session (already open). */
  static server(
    io: PeerIo,
    config: UdpConfig,
    channels: readonly ChannelSpec[],
    remoteAddress: string,
    sessionId: number,
    clientNonce: number,
  ): UdpPeer {
    const p = new UdpPeer(io, config, channels, remoteAddress, 'open', sessionId);
    p.nonce = clientNonce;
    p.ticks.arm(config.tickMs);
    return p;
  }

  get state(): ConnectionState {
    return this.currentState;
  }

  /** The session id (0 until the handshake finished). */
  get session(): number {
    return this.sessionId;
  }

  /** The client's handshake nonce. */
  get clientNonce(): number {
    return this.nonce;
  }

  /** Where this peer counts dropped datagrams. */
  get drops(): DropCounters {
    return this.io.drops;
  }

  /** Whether the peer has finished completely (closed and no longer lingering). */
  get finished(): boolean {
    return this.dead;
  }

  on<K extends keyof ConnectionEventMap>(type: K, handler: Handler<ConnectionEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  send(channel: string, data: Uint8Array): void {
    if (this.currentState === 'closed') throw new TransportError('closed', 'the connection is closed');
    this.queues.enqueue(channel, data);
    if (this.currentState === 'open') this.scheduleFlush();
  }

  close(reason = ''): void {
    this.end('local', reason, undefined);
  }

  /** Closes, sending `reason` to the peer (after the reliable queue unless {@link abandon}). */
  private end(code: CloseCode, reason: string, error: TransportError | undefined): void {
    if (this.currentState === 'closed') return;
    if (this.currentState === 'connecting') {
      this.finish(code, reason, error);
      return;
    }
    this.closeReason = encodeCloseReason(reason);
    this.currentState = 'closed';
    this.lingering = true;
    // Unsent unreliable messages are dropped; reliable ones are still delivered before the Close.
    this.queues.dropUnsent();
    this.scheduleFlush();
    this.emitClose(code, reason, error);
  }

  /**
   * Charges one unit of `bytes` to the peer's rate budget; past it (now or before), closes with
   * `flood` (the first time) and returns true: whatever the peer sends from then on is ignored.
   */
  private overBudget(bytes: number): boolean {
    if (!this.budget || this.budget.take(bytes, this.readAt)) return false;
    const reason = this.budget.describe();
    this.abandon = true;
    this.end('error', reason, new TransportError('flood', reason));
    return true;
  }

  /** Delivers a message, charging it to the peer's rate budget. */
  private deliver(channel: string, data: Uint8Array): void {
    if (!this.overBudget(0)) this.emitter.emit('message', { channel, data });
  }

  // ------------------------------------------------------------------ input

  /** Feeds one datagram received from the peer's address. Never throws. */
  input(d: Uint8Array): void {
    if (this.dead || this.budget?.exceeded) return; // closed for flooding: ignored unread
    if (this.currentState !== 'connecting' && isData(d) && u16(d, 1) === (this.sessionId & 0xffff)) {
      this.dataInput(d);
      return;
    }
    if (!crcOk(d)) {
      this.io.drops.badCrc++;
      return;
    }
    const session = sessionOf(d);
    const type = d[8]!;
    if (this.currentState === 'connecting') {
      this.handshakeInput(d, session, type);
      return;
    }
    if (type === PacketType.Challenge || type === PacketType.Accept || type === PacketType.Refuse) {
      // Late or repeated handshake replies after we are connected.
      this.io.drops.handshakeIgnored++;
      return;
    }
    if (session !== this.sessionId) {
      this.io.drops.badSession++;
      return;
    }
    // A version-1 DATA packet (or anything else with our session id): not ours to read.
    this.io.drops.malformed++;
  }

  /** A version-2 DATA packet whose connection id is ours (see wire.ts). */
  private dataInput(d: Uint8Array): void {
    const flags = d[0]!;
    let end = d.length;
    if ((flags & DataFlag.Crc) !== 0) {
      if (!dataCrcOk(d)) {
        this.io.drops.badCrc++;
        return;
      }
      end -= 4;
    } else if ((flags & (DataFlag.Tracked | DataFlag.Ack)) !== 0 || (flags & 0x07) !== 0) {
      this.io.drops.malformed++;
      return;
    }
    // Valid datagrams only are charged: an off-path spoofer cannot get an honest peer closed.
    // Whole ms, read once per datagram: a small integer, which V8 passes to `take` without boxing.
    this.readAt = Math.floor(this.io.clock.now());
    if (this.overBudget(d.length)) return;
    let o = 3;
    let seq = 0;
    if ((flags & DataFlag.Tracked) !== 0) {
      if (o + 2 > end) {
        this.io.drops.malformed++;
        return;
      }
      seq = this.received.resolve(u16(d, o));
      o += 2;
      if (!this.received.receive(seq, this.io.clock.now())) {
        this.io.drops.duplicate++;
        return;
      }
    }
    let ack = 0;
    let delay = 0;
    let bitsAt = 0;
    let bitBytes = 0;
    if ((flags & DataFlag.Ack) !== 0) {
      if (o + 2 > end) {
        this.io.drops.malformed++;
        return;
      }
      ack = resolve16(u16(d, o), this.nextPacketSeq - 1);
      o += 2;
      let shift = 0;
      for (;;) {
        if (o >= end || shift > 14) {
          this.io.drops.malformed++;
          return;
        }
        const byte = d[o++]!;
        delay += (byte & 0x7f) << shift;
        shift += 7;
        if (byte < 0x80) break;
      }
      if (o >= end) {
        this.io.drops.malformed++;
        return;
      }
      bitBytes = d[o++]!;
      bitsAt = o;
      o += bitBytes;
      if (bitBytes > ACK_BITS / 8 || o > end) {
        this.io.drops.malformed++;
        return;
      }
    }
    this.mstats.packetsReceived++;
    this.mstats.bytesReceived += d.length;
    this.heard();
    if (ack !== 0 && ack < this.nextPacketSeq) this.processAcks(ack, d, bitsAt, bitBytes, delay / 10);
    let elicits = false;
    while (o < end && !this.dead) {
      const fb = d[o]!;
      const ft = fb >> 4;
      let ch = fb & 15;
      let p = o + 1;
      if (ch === 15 && (ft === FrameType.Fragment || ft === FrameType.Unreliable)) {
        if (p >= end) {
          this.malformed('truncated frame');
          return;
        }
        ch = d[p++]!;
      }
      if (ft === FrameType.Fragment) {
        if ((flags & DataFlag.Tracked) === 0) {
          this.malformed('fragment in an untracked packet');
          return;
        }
        if (p + 14 > end) {
          this.malformed('truncated fragment frame');
          return;
        }
        const n = this.inbound.fragment(d, p, ch, end);
        if (n < 0) return;
        o = n;
        elicits = true;
      } else if (ft === FrameType.Unreliable) {
        if (p + 3 > end) {
          this.malformed('truncated unreliable frame');
          return;
        }
        const useq = u16(d, p);
        p += 2;
        let len = 0;
        let shift = 0;
        for (;;) {
          if (p >= end || shift > 14) {
            this.malformed('truncated unreliable frame');
            return;
          }
          const byte = d[p++]!;
          len += (byte & 0x7f) << shift;
          shift += 7;
          if (byte < 0x80) break;
        }
        const stop = p + len;
        if (stop > end) {
          this.malformed('truncated unreliable frame');
          return;
        }
        this.inbound.unreliable(ch, useq, d, p, stop);
        o = stop;
      } else if (ft === FrameType.Ping && fb === FrameType.Ping << 4) {
        o += 1;
        elicits = true;
      } else if (ft === FrameType.Close && fb === FrameType.Close << 4) {
        if (o + 2 > end || o + 2 + d[o + 1]! > end) {
          this.malformed('truncated close frame');
          return;
        }
        const reason = decodeCloseReason(d.subarray(o + 2, o + 2 + d[o + 1]!));
        o += 2 + d[o + 1]!;
        this.closeAckDue = true;
        elicits = true;
        this.scheduleFlush();
        if (this.currentState !== 'closed') this.finish('remote', reason, undefined, true);
      } else if (ft === FrameType.CloseAck && fb === FrameType.CloseAck << 4) {
        o += 1;
        if (this.lingering && this.closeSentCount > 0) this.die();
      } else {
        this.malformed(`unknown frame type ${ft}`);
        return;
      }
    }
    if (elicits && seq !== 0) {
      if (this.received.elicited(this.io.clock.now())) this.scheduleFlush();
      else this.busy();
    }
  }

  /**
   * Counts a malformed frame; the rest of its datagram is ignored. Not fatal: a peer that passes
   * the CRC and session checks but sends garbage is dropped, not trusted to end the connection.
   */
  private malformed(_what: string): void {
    this.io.drops.malformed++;
  }

  private processAcks(ack: number, d: Uint8Array, bitsAt: number, bitBytes: number, ackDelayMs: number): void {
    if (ack === 0 || this.inFlight.count === 0) return;
    const now = this.io.clock.now();
    // Sample the RTT from the newest acknowledged packet first, so the loss threshold below uses it.
    const newest = this.inFlight.live(ack);
    if (newest) {
      const rtt = Math.max(0, now - newest.sentAt - ackDelayMs);
      this.rtt.sample(rtt);
      this.window.onRttSample(rtt, now, this.rtt.srtt);
    }
    const spurious = this.loss.scanSpurious(ack, d, bitsAt, bitBytes, this.window.cutSeq, now);
    if (spurious > 0) {
      // Delayed or reordered, not lost: jitter alone never shrinks the window.
      this.counters.spuriousLosses += spurious;
      if (this.loss.cutWasSpurious) this.window.undoCut();
    }
    const reorderWindow = this.loss.reorderWindow();
    let any = false;
    const end = Math.min(this.inFlight.length, ack - this.inFlight.base + 1);
    for (let i = 0; i < end; i++) {
      const p = this.inFlight.at(i);
      if (!p.live) continue;
      const back = ack - p.seq;
      const acked =
        back === 0 || (back <= bitBytes * 8 && (d[bitsAt + ((back - 1) >> 3)]! & (1 << ((back - 1) & 7))) !== 0);
      if (acked) {
        this.inFlight.retire(p);
        this.onPacketAcked(p);
        if (this.dead) return;
        any = true;
      } else if (this.loss.lostByAck(back, now - p.sentAt, reorderWindow)) {
        this.inFlight.retire(p);
        this.onPacketLost(p);
      }
    }
    this.inFlight.trim();
    if (any) {
      this.rtoBackoff = 1;
      this.mstats.rttMs = this.rtt.srtt;
      this.mstats.rttVarMs = this.rtt.rttvar;
      this.mstats.rttSamples = this.rtt.samples;
      this.scheduleFlush();
    }
  }

  private onPacketAcked(p: SentPacket): void {
    this.mstats.lossRate += (0 - this.mstats.lossRate) / 32;
    if (p.close && this.lingering) {
      this.die();
      return;
    }
    if (p.fragCount === 0) return;
    if (this.queues.acked(p) && this.lingering) this.scheduleFlush();
  }

  private onPacketLost(p: SentPacket): void {
    this.counters.packetsLost++;
    this.mstats.lossRate += (1 - this.mstats.lossRate) / 32;
    this.loss.onLost(p.seq, p.sentAt);
    if (p.fragCount === 0) return;
    this.window.onLoss(p.seq, this.io.clock.now(), this.rtt.srtt);
    this.queues.lost(p);
  }

  // ------------------------------------------------------------------ handshake (client)

  private handshakeStep(): void {
    if (this.currentState !== 'connecting' || this.dead || !this.handshake) return;
    this.emit(this.handshake.datagram());
    const delay = this.handshake.sent();
    this.handshakeTimer?.cancel();
    this.handshakeTimer = this.io.clock.setTimer(delay, () => this.handshakeStep());
  }

  private handshakeInput(d: Uint8Array, session: number, type: number): void {
    const hs = this.handshake;
    if (!hs?.answersUs(d)) {
      if (this.currentState === 'connecting') this.io.drops.handshakeIgnored++;
      else this.io.drops.badSession++;
      return;
    }
    const reply = hs.read(d, session, type);
    if (reply === HandshakeReply.Challenge) {
      this.mstats.packetsReceived++;
      this.mstats.bytesReceived += d.length;
      this.handshakeStep();
    } else if (reply === HandshakeReply.Accept) {
      this.mstats.packetsReceived++;
      this.mstats.bytesReceived += d.length;
      this.sessionId = session;
      this.handshakeTimer?.cancel();
      this.connectDeadline?.cancel();
      this.currentState = 'open';
      this.pingDue = true; // at once: the server admits the session when it hears from us
      this.heard();
      this.ticks.arm(this.config.tickMs);
      this.emitter.emit('open', undefined);
      this.scheduleFlush();
    } else if (reply === HandshakeReply.Refuse) {
      const why = hs.refusal;
      this.finish('refused', why, new TransportError('refused', `connection refused: ${why}`));
    } else {
      this.io.drops.handshakeIgnored++;
    }
  }

  // ------------------------------------------------------------------ output

  private scheduleFlush(): void {
    if (this.flushScheduled || this.dead) return;
    this.flushScheduled = true;
    if (this.io.defer) this.io.defer(this.runFlush);
    else queueMicrotask(this.runFlush);
  }

  /** The deferred flush, allocated once. */
  private readonly runFlush = (): void => {
    this.flushScheduled = false;
    this.flush();
  };

  private emit(d: Uint8Array): void {
    this.mstats.packetsSent++;
    this.mstats.bytesSent += d.length;
    this.io.output(d);
  }

  /** The first `length` bytes of `scratch`, as a view made once per length. */
  private datagram(length: number): Uint8Array {
    let v = this.views[length];
    if (!v) {
      v = this.scratch.subarray(0, length);
      this.views[length] = v;
    }
    return v;
  }

  /** Sends everything that may be sent now. */
  flush(): void {
    if (this.dead || this.currentState === 'connecting' || this.sessionId === 0) return;
    // Frames are written from FRAMES_AT; the header (up to FRAMES_AT bytes) goes right before them
    // and the CRC (4) after: the datagram stays within the MTU.
    const limit = FRAMES_AT + this.config.mtu - DATA_HEADER_BYTES;
    this.queues.beginFlush();
    for (let guard = 0; guard < 100_000; guard++) {
      const now = this.io.clock.now();
      const buf = this.scratch;
      let o = FRAMES_AT;
      let close = false;
      // Tracked packets (reliable fragments, Close, Ping) get a sequence number and are acknowledged;
      // the others (acks, unreliable messages, CloseAck) carry sequence number 0.
      let elicit = false;
      // 1. Close handshake frames.
      if (this.closeAckDue) {
        buf[o++] = FrameType.CloseAck << 4;
        this.closeAckDue = false;
      }
      // 2. Unreliable messages, newest state first to go out.
      o = this.queues.writeUnreliable(buf, o, limit);
      // 3. Reliable fragments: resends first, round robin over channels, one fragment per turn.
      o = this.queues.writeFragments(buf, o, limit);
      // The record of this packet, taken when its first fragment went in.
      let packet = this.queues.packet;
      if (packet) elicit = true;
      // 4. Close, once every reliable message is acknowledged.
      if (
        this.lingering &&
        (this.mstats.sendQueueLength === 0 || this.abandon) &&
        this.closeReason &&
        o + 2 + this.closeReason.length <= limit
      ) {
        if (this.closeSentCount === 0 || now - this.closeSentAt >= this.rtt.rto()) {
          if (this.closeSentCount >= CLOSE_ATTEMPTS) {
            this.die();
            return;
          }
          buf[o] = FrameType.Close << 4;
          buf[o + 1] = this.closeReason.length;
          buf.set(this.closeReason, o + 2);
          o += 2 + this.closeReason.length;
          this.closeSentCount++;
          this.closeSentAt = now;
          close = true;
          elicit = true;
        }
      }
      // 5. Keepalive.
      if (!elicit && this.pingDue) {
        buf[o++] = FrameType.Ping << 4;
        elicit = true;
      }
      const ackOnly = !elicit && o === FRAMES_AT;
      if (ackOnly && this.received.holdBack(now, this.config.tickMs)) return;
      if (elicit) {
        this.pingDue = false;
        this.lastTrackedSent = now;
      }
      const seq = elicit ? this.nextPacketSeq++ : 0;
      // The header goes right before the frames: flags, connection id, [seq], [acks].
      const withAck = this.received.due;
      const hdr = this.hdr;
      let h = 3;
      if (elicit) {
        hdr[h++] = seq >>> 8;
        hdr[h++] = seq;
      }
      if (withAck) h = this.received.writeAck(hdr, h, now);
      hdr[0] =
        DATA_MARK |
        (elicit ? DataFlag.Tracked : 0) |
        (withAck ? DataFlag.Ack : 0) |
        (elicit || withAck ? DataFlag.Crc : 0);
      hdr[1] = this.sessionId >>> 8;
      hdr[2] = this.sessionId;
      // The frames move up behind the header (a memmove), so every datagram starts at 0 and its
      // views are made once per length.
      buf.copyWithin(h, FRAMES_AT, o);
      for (let i = 0; i < h; i++) buf[i] = hdr[i]!;
      o = o - FRAMES_AT + h;
      this.received.acked();
      if (elicit || withAck) o = sealData(buf, o, this.datagram(o));
      if (elicit) {
        packet ??= this.inFlight.take();
        packet.seq = seq;
        packet.sentAt = now;
        packet.close = close;
        this.inFlight.push(packet);
        this.busy();
      } else if (withAck && o <= h + 4) this.counters.acksSent++;
      this.lastSentAt = now;
      this.emit(this.datagram(o));
      if (ackOnly) return;
    }
  }

  // ------------------------------------------------------------------ time

  /**
   * The periodic tick ({@link TickSchedule}: every `tickMs` while anything is in flight, queued or
   * unacknowledged, every `idleTickMs` on an idle connection, put off once when it ran late).
   */
  private onTick(): void {
    this.judge();
    if (this.dead) return;
    const busy =
      this.inFlight.count > 0 || this.received.pending > 0 || this.lingering || this.mstats.sendQueueLength > 0;
    this.ticks.next(busy);
  }

  /** Wakes the fast tick if the connection was idle. */
  private busy(): void {
    if (!this.dead) this.ticks.wake();
  }

  /** Silence, interruption, retransmission timeouts and keepalives, once per tick. */
  private judge(): void {
    const now = this.io.clock.now();
    const silent = now - this.lastHeard;
    const t = this.config.timeouts;
    if (silent >= t.disconnectMs) {
      if (this.currentState === 'open') {
        this.finish(
          'timeout',
          'the peer went silent',
          new TransportError('timeout', `no packet for ${Math.round(silent)} ms`),
        );
      } else this.die();
      return;
    }
    if (this.currentState === 'open' && silent >= t.interruptMs && this.interruptedSince < 0) {
      this.interruptedSince = this.lastHeard;
      this.emitter.emit('interrupted', { silentMs: silent });
      if (this.dead) return;
    }
    // Retransmission timeouts: the oldest packets first.
    // The peer may hold an ack back for up to one tick (plus timer slack): allow for it, as QUIC's
    // PTO adds max_ack_delay.
    const rto = (this.rtt.rto() + 2 * this.config.tickMs) * this.rtoBackoff;
    let expired = false;
    for (let i = 0; i < this.inFlight.length; i++) {
      const p = this.inFlight.at(i);
      if (!p.live) continue;
      if (now - p.sentAt < rto) break;
      this.inFlight.retire(p);
      this.onPacketLost(p);
      expired = true;
    }
    this.inFlight.trim();
    if (expired) this.rtoBackoff = Math.min(8, this.rtoBackoff * 2);
    // Keepalive, and a fresh RTT sample even when only untracked (unreliable) packets flow.
    if (
      this.currentState === 'open' &&
      now - this.lastTrackedSent >= this.config.keepaliveMs &&
      now - this.lastSentAt >= this.config.keepaliveMs
    )
      this.pingDue = true;
    this.flush();
  }

  private heard(): void {
    const now = this.io.clock.now();
    this.lastHeard = now;
    if (this.interruptedSince >= 0 && this.currentState === 'open') {
      const since = this.interruptedSince;
      this.interruptedSince = -1;
      this.emitter.emit('resumed', { interruptedMs: now - since });
    }
  }

  // ------------------------------------------------------------------ ending

  /**
   * Ends the connection at once with `error` (no close handshake): used by the server when the
   * same address proves a new connection. Emits `error` and `close` (code `error`) if still open.
   */
  abort(error: TransportError): void {
    this.fail(error);
  }

  private fail(error: TransportError): void {
    if (this.currentState === 'closed') {
      this.die();
      return;
    }
    this.emitter.emit('error', error);
    this.finish('error', error.message, error);
  }

  /** Closes without lingering (the peer is gone or broke the protocol) and emits `close`. */
  private finish(code: CloseCode, reason: string, error: TransportError | undefined, flushFirst = false): void {
    if (this.currentState === 'closed') return;
    this.currentState = 'closed';
    if (flushFirst) {
      // Let the pending CloseAck go out before the timers stop.
      this.flushScheduled = false;
      this.flush();
    }
    this.die();
    this.emitClose(code, reason, error);
  }

  private emitClose(code: CloseCode, reason: string, error: TransportError | undefined): void {
    this.emitter.emit('close', error ? { code, reason, error } : { code, reason });
  }

  private die(): void {
    if (this.dead) return;
    this.dead = true;
    this.lingering = false;
    this.ticks.stop();
    this.handshakeTimer?.cancel();
    this.connectDeadline?.cancel();
    this.inFlight.clear();
    this.queues.clear();
    this.inbound.clear();
    this.mstats.sendQueueLength = 0;
    this.mstats.sendQueueBytes = 0;
    this.io.onDead?.();
  }
}

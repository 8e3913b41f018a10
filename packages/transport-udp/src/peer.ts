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
import { fragmentSize, maxUnreliable, type UdpConfig } from './config.js';
import type { DropCounters } from './counters.js';
import { Deque } from './deque.js';
import { LossLedger } from './loss-ledger.js';
import { MessagePool, type OutMessage } from './out-message.js';
import { channelHash, type PeerIo, type UdpPeerCounters } from './peer-io.js';
import { QueueDelayFilter } from './queue-delay.js';
import { AddResult, Reassembly } from './reassembly.js';
import { SentPacket } from './sent-packet.js';
import {
  ACK_BITS,
  COOKIE_BYTES,
  crcOk,
  DATA_HEADER_BYTES,
  DATA_MARK,
  DataFlag,
  dataCrcOk,
  FRAGMENT_HEADER_BYTES,
  FrameType,
  HEADER_BYTES,
  HELLO_BYTES,
  isData,
  PacketType,
  PROTOCOL_MAGIC,
  putFrameStart,
  putU32,
  putVarint,
  RefuseReason,
  resolve16,
  seal,
  sealData,
  sessionOf,
  UNRELIABLE_HEADER_BYTES,
  u16,
  u32,
} from './wire.js';

interface OutChannel {
  readonly index: number;
  readonly reliable: boolean;
  nextSeq: number;
  /**
   * Reliable: messages not yet released, oldest first. The front one leaves (back to the pool) once
   * it and every earlier one are fully acknowledged.
   */
  readonly pending: Deque<OutMessage>;
  /** Index in `pending` of the first message that may have never-sent fragments. */
  cursor: number;
  /** Fragments to resend: message and fragment index, in two parallel rings. */
  readonly resendMsg: Deque<OutMessage>;
  readonly resendIdx: Deque<number>;
  inFlightBytes: number;
  /** Unreliable: messages not yet sent. */
  readonly unsent: Deque<OutMessage>;
}

interface InChannel {
  readonly reliable: boolean;
  nextDeliver: number;
  lastUnreliable: number;
}

const MAX_UNRELIABLE_QUEUE = 64;
const MAX_REORDER_MESSAGES = 1 << 16;
const CLOSE_ATTEMPTS = 5;
/** Where the frames of a DATA packet start in the scratch buffer (room for the longest header). */
const FRAMES_AT = DATA_HEADER_BYTES - 4;
/** Packets that repeat the acks after new ones went out. */
const ACK_ECHOES = 2;
/** Most tracked packets in flight: the span of the ack bitfield. */
const MAX_TRACKED = ACK_BITS;
/** Size of the receive ring (a power of two above ACK_BITS). */
const RING_PACKETS = 1024;
/**
 * An ack-only packet goes out after this many tracked packets arrived, one tick after the first, or
 * at once when one arrived out of order (a gap, or a hole filled: the sender's loss detection wants
 * to know), whichever comes first. Every ack covers the 128 packets below the highest, so the ones
 * in between are acknowledged too; its delay field keeps RTT samples exact.
 */
const ACK_EVERY = 16;
/** Tracked-packet slots only express traffic may use. */
const EXPRESS_RESERVE = 8;
/**
 * A tick running this much later than it was due means the process was frozen: it looks again
 * after reading its input instead of taking the peer's silence for loss.
 */
const STALL_MS = 20;
/** Most free {@link SentPacket}s kept for reuse. */
const MAX_FREE_PACKETS = 256;

/**
 * One end of a UDP connection, as a sans-I/O state machine: it is fed datagrams with
 * {@link input} and time through its {@link PeerIo.clock}, and emits datagrams through
 * {@link PeerIo.output}. It implements the whole {@link Connection} contract: the client
 * handshake (HELLO → CHALLENGE → CONNECT → ACCEPT), reliable channels (packet sequence numbers,
 * acks with a 32-bit ack bitfield, retransmission after an RFC 6298 RTO or when three later
 * packets were acknowledged, fragmentation and reassembly), unreliable-sequenced channels,
 * congestion and flow control, keepalives, `interrupted` and the disconnect timeout.
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
  private readonly out: OutChannel[];
  private readonly inp: InChannel[];
  private readonly byName = new Map<string, OutChannel>();
  private readonly rtt: RttEstimator;
  private readonly reassembly: Reassembly;
  /** What the peer may send us (undefined: `rateLimits: false`). Past it: {@link flooded}. */
  private readonly budget: RateBudget | undefined;
  /** When the datagram being read arrived (whole ms): the time its messages are charged at. */
  private readAt = 0;
  private readonly fragSize: number;
  private readonly hash: number;
  private currentState: ConnectionState;
  private sessionId: number;

  // packets
  private nextPacketSeq = 1;
  /**
   * Tracked packets sent, in sequence order from `sentBase`: the ones in flight (`live`) and the
   * acknowledged or lost ones not yet trimmed from the front. Slot i holds packet `sentBase + i`.
   */
  private readonly sent = new Deque<SentPacket>(256);
  private sentBase = 1;
  private inFlightCount = 0;
  private readonly freePackets = new Deque<SentPacket>();
  private readonly pool = new MessagePool();
  /** Views of `scratch` by length: the datagrams handed to `output`. */
  private readonly views: Array<Uint8Array | undefined> = [];
  /** Scratch for a DATA header (at most {@link FRAMES_AT} bytes). */
  private readonly hdr = new Uint8Array(FRAMES_AT);
  /** Packets still to carry the acks again after the last new ones (in case one is lost). */
  private ackEchoes = 0;
  /** When the last DATA packet went out (any kind): keepalive Pings only go on a silent link. */
  private lastSentAt = 0;
  // The fragment chosen by nextFragment (fields, not a fresh object per call).
  private nfMsg: OutMessage | undefined;
  private nfIdx = 0;
  private nfBytes = 0;
  private nfResend = false;
  private recvHighest = 0;
  /** Received packet sequence numbers, a bit per number modulo RING_PACKETS. */
  private readonly recvRing = new Uint8Array(RING_PACKETS / 8);
  private recvHighestAt = 0;
  private ackPending = 0;
  private ackPendingSince = 0;
  /** A tracked packet arrived out of order since the last ack: acknowledge at once. */
  private ackNow = false;
  private window: number;
  private lastWindowCut = -1e9;
  /** Base and recent RTTs, for the delay-based congestion signal. */
  private readonly delay = new QueueDelayFilter();
  private queueBuilding = false;
  /** Packets declared lost, to recognise a spurious loss when its ack comes in after all. */
  private readonly lost = new LossLedger();
  /**
   * Extra reordering tolerance learnt from spurious losses, ms: a packet is declared lost by the
   * ack threshold only once it is overdue by more than this (it decays slowly back to 0).
   */
  private reorderMs = 0;
  /** The packet whose loss last cut the window, and the window before that cut (to undo it). */
  private cutSeq = 0;
  private windowBeforeCut = 0;
  private rtoBackoff = 1;
  private rr = 0;
  private startedMessageBytes = 0;

  // liveness
  private lastHeard: number;
  private lastTrackedSent: number;
  private interruptedSince = -1;
  private tickTimer: Timer | undefined;
  private tickIdle = false;
  /** When the scheduled tick is due (to tell a timer that ran late). */
  private tickDueAt = 0;
  /** The last tick was put off because it ran late (the next one judges, late or not). */
  private tickDeferred = false;
  private readonly idleTickMs: number;
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
  private cookie: Uint8Array | undefined;
  private bucket = 0;
  private handshakeAttempts = 0;
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
    this.fragSize = fragmentSize(config);
    this.limits = Object.freeze({ maxMessageBytes: config.maxMessageBytes, maxUnreliableBytes: maxUnreliable(config) });
    this.stats = this.mstats;
    this.rtt = new RttEstimator(config.minRtoMs, 2000, 200, 1);
    this.window = config.initialWindowBytes;
    this.scratch = new Uint8Array(FRAMES_AT + config.mtu);
    this.idleTickMs = Math.max(config.tickMs, Math.min(config.keepaliveMs / 2, config.timeouts.interruptMs / 8));
    this.counters.windowBytes = this.window;
    this.out = this.channels.map((c, index) => ({
      index,
      reliable: c.kind === 'reliable',
      nextSeq: 0,
      pending: new Deque<OutMessage>(),
      cursor: 0,
      resendMsg: new Deque<OutMessage>(),
      resendIdx: new Deque<number>(),
      inFlightBytes: 0,
      unsent: new Deque<OutMessage>(),
    }));
    for (const c of this.out) this.byName.set(this.channels[c.index]!.name, c);
    this.inp = this.channels.map((c) => ({ reliable: c.kind === 'reliable', nextDeliver: 0, lastUnreliable: -1 }));
    this.currentState = state;
    this.sessionId = sessionId;
    this.lastHeard = io.clock.now();
    this.lastTrackedSent = this.lastHeard;
    this.reassembly = new Reassembly(config.maxReassemblyBytes, io.reassemblyBudget, () =>
      this.fail(
        new TransportError('limit', 'listener reassembly limit: this connection held the oldest unfinished message'),
      ),
    );
    this.budget = config.rateLimits ? new RateBudget(config.rateLimits, this.lastHeard) : undefined;
  }

  /** Starts the client side: sends HELLO and retries until ACCEPT, REFUSE or `connectMs`. */
  static client(io: PeerIo, config: UdpConfig, channels: readonly ChannelSpec[], remoteAddress: string): UdpPeer {
    const p = new UdpPeer(io, config, channels, remoteAddress, 'connecting', 0);
    const random = io.random ?? ((n: number) => crypto.getRandomValues(new Uint8Array(n)));
    p.nonce = u32(random(4), 0) || 1;
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
    p.startTicking();
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
    const ch = this.byName.get(channel);
    if (!ch) throw new TransportError('unknown-channel', `no channel named "${channel}"`);
    if (ch.reliable) {
      if (data.length > this.limits.maxMessageBytes) {
        throw new TransportError(
          'too-large',
          `${data.length} bytes exceed maxMessageBytes ${this.limits.maxMessageBytes}`,
        );
      }
      if (this.mstats.sendQueueLength >= this.config.maxSendQueue) {
        throw new TransportError('limit', `send queue full (${this.config.maxSendQueue} messages)`);
      }
      const fragCount = Math.max(1, Math.ceil(data.length / this.fragSize));
      ch.pending.push(this.pool.take(ch.index, ch.nextSeq++ >>> 0, data, fragCount));
      this.mstats.sendQueueLength++;
      this.mstats.sendQueueBytes += data.length;
    } else {
      if (data.length > this.limits.maxUnreliableBytes) {
        throw new TransportError(
          'too-large',
          `${data.length} bytes exceed maxUnreliableBytes ${this.limits.maxUnreliableBytes}`,
        );
      }
      if (ch.unsent.length >= MAX_UNRELIABLE_QUEUE) {
        // Backed up: the oldest unsent message is stale anyway.
        const dropped = ch.unsent.shift()!;
        this.mstats.sendQueueLength--;
        this.mstats.sendQueueBytes -= dropped.length;
        this.pool.release(dropped);
      }
      ch.unsent.push(this.pool.take(ch.index, ch.nextSeq++ >>> 0, data, 1));
      this.mstats.sendQueueLength++;
      this.mstats.sendQueueBytes += data.length;
    }
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
    for (const ch of this.out) {
      for (let u = ch.unsent.shift(); u; u = ch.unsent.shift()) {
        this.mstats.sendQueueLength--;
        this.mstats.sendQueueBytes -= u.length;
        this.pool.release(u);
      }
    }
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
      seq = resolve16(u16(d, o), this.recvHighest);
      o += 2;
      const outOfOrder = seq !== this.recvHighest + 1 && this.recvHighest !== 0;
      if (!this.noteReceived(seq)) {
        this.io.drops.duplicate++;
        return;
      }
      if (outOfOrder) this.ackNow = true;
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
        const n = this.onFragment(d, p, ch, end);
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
        this.onUnreliable(ch, useq, d, p, stop);
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
      if (this.ackPending++ === 0) this.ackPendingSince = this.io.clock.now();
      if (this.ackPending >= ACK_EVERY || this.ackNow) this.scheduleFlush();
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

  /** Whether packet `seq` is marked received in the ring (valid within RING_PACKETS of the highest). */
  private ringHas(seq: number): boolean {
    const i = seq & (RING_PACKETS - 1);
    return (this.recvRing[i >> 3]! & (1 << (i & 7))) !== 0;
  }

  private ringSet(seq: number, on: boolean): void {
    const i = seq & (RING_PACKETS - 1);
    if (on) this.recvRing[i >> 3]! |= 1 << (i & 7);
    else this.recvRing[i >> 3]! &= ~(1 << (i & 7));
  }

  /** Records a packet sequence number in the receive ring; false if it was already received. */
  private noteReceived(seq: number): boolean {
    if (seq === 0) return false;
    if (seq > this.recvHighest) {
      const gap = seq - this.recvHighest;
      if (this.recvHighest === 0 || gap >= RING_PACKETS) this.recvRing.fill(0);
      else for (let s = this.recvHighest + 1; s < seq; s++) this.ringSet(s, false);
      this.ringSet(seq, true);
      this.recvHighest = seq;
      this.recvHighestAt = this.io.clock.now();
      return true;
    }
    const back = this.recvHighest - seq;
    if (back === 0) return false;
    if (back < RING_PACKETS) {
      if (this.ringHas(seq)) return false;
      this.ringSet(seq, true);
      return true;
    }
    // Too old to tell; frames are deduplicated one level up.
    return true;
  }

  /**
   * Writes the ack bitfield (bit i of byte j: packet highest − 1 − (8j + i) received) at `o`,
   * without its trailing zero bytes (the same to the reader); returns how many bytes it wrote.
   */
  private writeAckBits(buf: Uint8Array, o: number): number {
    const h = this.recvHighest;
    let n = 0;
    for (let j = 0; j < ACK_BITS / 8; j++) {
      let byte = 0;
      for (let i = 0; i < 8; i++) {
        const s = h - 1 - (8 * j + i);
        if (s >= 1 && this.ringHas(s)) byte |= 1 << i;
      }
      buf[o + j] = byte;
      if (byte !== 0) n = j + 1;
    }
    return n;
  }

  /** The tracked packet `seq` if it is still in flight. */
  private inFlightPacket(seq: number): SentPacket | undefined {
    const i = seq - this.sentBase;
    if (i < 0 || i >= this.sent.length) return undefined;
    const p = this.sent.at(i);
    return p.live ? p : undefined;
  }

  /** Takes packet `p` out of flight (acknowledged or lost); it is recycled once trimmed. */
  private retire(p: SentPacket): void {
    p.live = false;
    this.inFlightCount--;
  }

  /** Drops retired packets from the front of `sent` and recycles them. */
  private trimSent(): void {
    while (this.sent.length > 0 && !this.sent.peek()!.live) {
      const p = this.sent.shift()!;
      this.sentBase++;
      p.reset();
      if (this.freePackets.length < MAX_FREE_PACKETS) this.freePackets.push(p);
    }
  }

  private processAcks(ack: number, d: Uint8Array, bitsAt: number, bitBytes: number, ackDelayMs: number): void {
    if (ack === 0 || this.inFlightCount === 0) return;
    const now = this.io.clock.now();
    // Sample the RTT from the newest acknowledged packet first, so the loss threshold below uses it.
    const newest = this.inFlightPacket(ack);
    if (newest) this.rttSample(Math.max(0, now - newest.sentAt - ackDelayMs), now);
    const spurious = this.lost.scan(ack, d, bitsAt, bitBytes, this.cutSeq);
    if (spurious > 0) this.onSpuriousLoss(now, spurious);
    const reorderWindow =
      this.rtt.samples === 0
        ? this.rtt.rto()
        : Math.max(1.125 * this.rtt.srtt + this.rtt.rttvar + this.config.tickMs, this.reorderMs);
    let any = false;
    const end = Math.min(this.sent.length, ack - this.sentBase + 1);
    for (let i = 0; i < end; i++) {
      const p = this.sent.at(i);
      if (!p.live) continue;
      const back = ack - p.seq;
      const acked =
        back === 0 || (back <= bitBytes * 8 && (d[bitsAt + ((back - 1) >> 3)]! & (1 << ((back - 1) & 7))) !== 0);
      if (acked) {
        this.retire(p);
        this.onPacketAcked(p);
        if (this.dead) return;
        any = true;
      } else if (back >= 3 && now - p.sentAt > reorderWindow) {
        // Three later packets arrived and this one is overdue (QUIC-style packet and time
        // thresholds, so jitter that reorders a burst is not mistaken for loss).
        this.retire(p);
        this.onPacketLost(p);
      }
    }
    this.trimSent();
    if (any) {
      this.rtoBackoff = 1;
      this.mstats.rttMs = this.rtt.srtt;
      this.mstats.rttVarMs = this.rtt.rttvar;
      this.mstats.rttSamples = this.rtt.samples;
      this.scheduleFlush();
    }
  }

  /**
   * Takes an RTT sample and runs the delay-based half of congestion control: when the RTT climbs
   * well above the smallest seen, a queue is building somewhere (a bulk transfer filling a link),
   * so the window shrinks and inputs do not wait behind it.
   */
  private rttSample(rtt: number, now: number): void {
    this.rtt.sample(rtt);
    this.delay.sample(rtt);
    // Judged on the smallest recent sample, not the last one: jitter lifts some samples, a queue
    // lifts them all (see QueueDelayFilter).
    this.queueBuilding = this.delay.queueBuilding(10);
    if (this.queueBuilding && now - this.lastWindowCut > Math.max(this.rtt.srtt, 1)) {
      this.lastWindowCut = now;
      this.window = Math.max(this.config.minWindowBytes, Math.floor(this.window * 0.8));
      this.counters.windowBytes = this.window;
    }
  }

  private onPacketAcked(p: SentPacket): void {
    this.mstats.lossRate += (0 - this.mstats.lossRate) / 32;
    if (p.close && this.lingering) {
      this.die();
      return;
    }
    if (p.fragCount === 0) return;
    for (let k = 0; k < p.fragCount; k++) {
      const msg = p.fragMsg[k]!;
      const idx = p.fragIdx[k]!;
      if (msg.fragState[idx] !== 1) continue;
      msg.fragState[idx] = 2;
      const bytes = this.fragBytes(msg, idx);
      const ch = this.out[msg.channel]!;
      ch.inFlightBytes -= bytes;
      // Congestion window: slow start below 1 MiB, then about one datagram per window; no growth
      // while the RTT says a queue is building.
      if (!this.queueBuilding) {
        this.window += this.window < 1 << 20 ? bytes : Math.ceil((bytes * this.config.mtu) / this.window);
      }
      if (this.window > this.config.maxWindowBytes) this.window = this.config.maxWindowBytes;
      if (++msg.ackedCount === msg.fragCount) this.messageDone(ch, msg);
    }
    this.counters.windowBytes = this.window;
  }

  /** Bytes of fragment `idx` of `msg`. */
  private fragBytes(msg: OutMessage, idx: number): number {
    return Math.min(this.fragSize, msg.length - idx * this.fragSize);
  }

  /**
   * Packets we declared lost were acknowledged after all (the last {@link LossLedger.scan}): they
   * were delayed or reordered, not lost (jitter does this: the ack of a packet that overtook them
   * came first). Widen the reordering tolerance to how late they were, and undo the window cut if
   * one of them caused it, so that jitter alone never shrinks the window.
   */
  private onSpuriousLoss(now: number, count: number): void {
    this.counters.spuriousLosses += count;
    const late = 1.125 * (now - this.lost.oldestSentAt);
    this.reorderMs = Math.min(Math.max(this.reorderMs, late), this.rtt.maxRtoMs);
    if (this.lost.cutWasSpurious && this.windowBeforeCut > this.window) {
      this.window = this.windowBeforeCut;
      this.counters.windowBytes = this.window;
      this.cutSeq = 0;
    }
  }

  private onPacketLost(p: SentPacket): void {
    this.counters.packetsLost++;
    this.mstats.lossRate += (1 - this.mstats.lossRate) / 32;
    this.lost.record(p.seq, p.sentAt);
    // The learnt reordering tolerance decays, so that one late burst does not slow loss recovery for good.
    this.reorderMs -= this.reorderMs / 64;
    if (p.fragCount === 0) return;
    const now = this.io.clock.now();
    if (now - this.lastWindowCut > Math.max(this.rtt.srtt, 1)) {
      this.lastWindowCut = now;
      this.cutSeq = p.seq;
      this.windowBeforeCut = this.window;
      this.window = Math.max(this.config.minWindowBytes, Math.floor(this.window * 0.7));
      this.counters.windowBytes = this.window;
    }
    for (let k = 0; k < p.fragCount; k++) {
      const msg = p.fragMsg[k]!;
      const idx = p.fragIdx[k]!;
      if (msg.fragState[idx] !== 1) continue;
      msg.fragState[idx] = 0;
      const ch = this.out[msg.channel]!;
      ch.inFlightBytes -= this.fragBytes(msg, idx);
      ch.resendMsg.push(msg);
      ch.resendIdx.push(idx);
    }
  }

  /** Message `msg` of `ch` is fully acknowledged. */
  private messageDone(ch: OutChannel, msg: OutMessage): void {
    this.mstats.sendQueueLength--;
    this.mstats.sendQueueBytes -= msg.length;
    // The receiver frees a message once it and every earlier one on its channel arrived: only then
    // does it leave the reassembly budget, and the sender's copy goes back to the pool.
    for (let m = ch.pending.peek(); m && m.ackedCount === m.fragCount; m = ch.pending.peek()) {
      ch.pending.shift();
      if (ch.cursor > 0) ch.cursor--;
      this.startedMessageBytes -= m.length;
      this.pool.release(m);
    }
    if (this.lingering) this.scheduleFlush();
  }

  /** Handles a Fragment frame at `o`; returns the offset after it, or −1 after a fatal error. */
  private onFragment(d: Uint8Array, p: number, chIndex: number, end: number): number {
    const msgSeq = u32(d, p);
    const msgLen = u32(d, p + 4);
    const idx = u32(d, p + 8);
    const fragSize = u16(d, p + 12);
    const ch = this.inp[chIndex];
    if (!ch?.reliable) {
      this.malformed(`fragment on channel ${chIndex}, which is not reliable`);
      return -1;
    }
    if (msgLen > this.config.maxMessageBytes) {
      this.fail(new TransportError('too-large', `peer announced a ${msgLen}-byte message`));
      return -1;
    }
    if (fragSize < 64) {
      this.malformed('fragment size below 64');
      return -1;
    }
    const fragCount = Math.max(1, Math.ceil(msgLen / fragSize));
    if (idx >= fragCount) {
      this.malformed('fragment index past the end of the message');
      return -1;
    }
    const len = Math.min(fragSize, msgLen - idx * fragSize);
    const dataAt = p + 14;
    if (dataAt + len > end) {
      this.malformed('truncated fragment');
      return -1;
    }
    const next = dataAt + len;
    const ahead = (msgSeq - ch.nextDeliver) >>> 0;
    if (ahead >= 0x8000_0000) return next; // already delivered: a duplicate
    if (ahead >= MAX_REORDER_MESSAGES) {
      this.fail(new TransportError('limit', 'peer is too far ahead on a reliable channel'));
      return -1;
    }
    if (this.currentState !== 'open') return next;
    if (fragCount === 1 && ahead === 0) {
      // The common case (inputs): a whole message that is next in order; no reassembly state.
      ch.nextDeliver = (ch.nextDeliver + 1) >>> 0;
      this.deliver(this.channels[chIndex]!.name, d.slice(dataAt, next));
      if (this.currentState === 'open') this.deliverReliable(chIndex, ch);
      return next;
    }
    const added = this.reassembly.add(chIndex, msgSeq, msgLen, fragSize, fragCount, idx, d, dataAt, next);
    this.counters.reassemblyBytes = this.reassembly.held;
    if (added !== AddResult.Held) {
      if (added === AddResult.Mismatch) this.malformed('fragments of one message disagree on its size');
      else
        this.fail(
          new TransportError(
            'limit',
            `reassembly memory limit (${added === AddResult.OverConnection ? `${this.config.maxReassemblyBytes} bytes` : 'listener-wide'})`,
          ),
        );
      return -1;
    }
    if (msgSeq === ch.nextDeliver) this.deliverReliable(chIndex, ch);
    return next;
  }

  private deliverReliable(chIndex: number, ch: InChannel): void {
    const name = this.channels[chIndex]!.name;
    for (;;) {
      const data = this.reassembly.take(chIndex, ch.nextDeliver);
      if (!data) return;
      ch.nextDeliver = (ch.nextDeliver + 1) >>> 0;
      this.counters.reassemblyBytes = this.reassembly.held;
      this.deliver(name, data);
      if (this.currentState !== 'open') return;
    }
  }

  private onUnreliable(chIndex: number, seq: number, d: Uint8Array, start: number, end: number): void {
    const ch = this.inp[chIndex];
    if (!ch || ch.reliable) {
      this.malformed(`unreliable frame on channel ${chIndex}`);
      return;
    }
    if (this.currentState !== 'open') return;
    if (
      ch.lastUnreliable >= 0 &&
      (((seq - ch.lastUnreliable) & 0xffff) === 0 || ((seq - ch.lastUnreliable) & 0xffff) >= 0x8000)
    ) {
      return; // stale or duplicate
    }
    ch.lastUnreliable = seq;
    this.deliver(this.channels[chIndex]!.name, d.slice(start, end));
  }

  // ------------------------------------------------------------------ handshake (client)

  private handshakeStep(): void {
    if (this.currentState !== 'connecting' || this.dead) return;
    const d = new Uint8Array(HELLO_BYTES);
    d[8] = this.cookie ? PacketType.Connect : PacketType.Hello;
    putU32(d, 9, PROTOCOL_MAGIC);
    putU32(d, 13, this.nonce);
    if (this.cookie) {
      putU32(d, 17, this.bucket);
      d.set(this.cookie, 21);
      putU32(d, 21 + COOKIE_BYTES, this.hash);
    } else {
      putU32(d, 17, this.hash);
    }
    seal(d);
    this.emit(d);
    this.handshakeAttempts++;
    const delay = Math.min(1000, 100 * 2 ** Math.min(4, this.handshakeAttempts - 1));
    this.handshakeTimer?.cancel();
    this.handshakeTimer = this.io.clock.setTimer(delay, () => this.handshakeStep());
  }

  private handshakeInput(d: Uint8Array, session: number, type: number): void {
    if (d.length < HEADER_BYTES + 8 || u32(d, 9) !== PROTOCOL_MAGIC || u32(d, 13) !== this.nonce) {
      if (this.currentState === 'connecting') this.io.drops.handshakeIgnored++;
      else this.io.drops.badSession++;
      return;
    }
    if (type === PacketType.Challenge && session === 0 && d.length >= 21 + COOKIE_BYTES && !this.cookie) {
      this.bucket = u32(d, 17);
      this.cookie = d.slice(21, 21 + COOKIE_BYTES);
      this.handshakeAttempts = 0;
      this.mstats.packetsReceived++;
      this.mstats.bytesReceived += d.length;
      this.handshakeStep();
    } else if (type === PacketType.Accept && session !== 0 && this.cookie) {
      this.mstats.packetsReceived++;
      this.mstats.bytesReceived += d.length;
      this.sessionId = session;
      this.handshakeTimer?.cancel();
      this.connectDeadline?.cancel();
      this.currentState = 'open';
      this.pingDue = true; // at once: the server admits the session when it hears from us
      this.heard();
      this.startTicking();
      this.emitter.emit('open', undefined);
      this.scheduleFlush();
    } else if (type === PacketType.Refuse && session === 0 && d.length >= 18 && this.cookie) {
      const why =
        d[17] === RefuseReason.Full
          ? 'listener full'
          : d[17] === RefuseReason.Channels
            ? 'channel lists differ'
            : d[17] === RefuseReason.Version
              ? 'the listener speaks another wire version'
              : 'listener closed';
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

  /**
   * Whether channel `ch` may put another fragment in flight now. The ack bitfield covers
   * {@link ACK_BITS} packets, so at most {@link MAX_TRACKED} tracked packets are in flight, the last few reserved
   * for express traffic. A channel with less than `expressBytes` in flight (an input channel) may
   * send even when the congestion window is full.
   */
  private canSendReliable(ch: OutChannel, totalInFlight: number, packetTracked: boolean): boolean {
    const express = ch.inFlightBytes < this.config.expressBytes;
    if (!packetTracked && this.inFlightCount >= (express ? MAX_TRACKED : MAX_TRACKED - EXPRESS_RESERVE)) return false;
    return express || totalInFlight < this.window;
  }

  /** A recycled (or new) packet record. */
  private takePacket(): SentPacket {
    return this.freePackets.shift() ?? new SentPacket();
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
    const fragSize = this.fragSize;
    let totalInFlight = 0;
    for (let k = 0; k < this.out.length; k++) totalInFlight += this.out[k]!.inFlightBytes;
    const n = this.out.length;
    for (let guard = 0; guard < 100_000; guard++) {
      const now = this.io.clock.now();
      const buf = this.scratch;
      let o = FRAMES_AT;
      // The record of this packet, taken when its first fragment goes in.
      let packet: SentPacket | undefined;
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
      for (let k = 0; k < n; k++) {
        const ch = this.out[k]!;
        for (let u = ch.unsent.peek(); u; u = ch.unsent.peek()) {
          if (o + UNRELIABLE_HEADER_BYTES + u.length > limit) break;
          ch.unsent.shift();
          o = putFrameStart(buf, o, FrameType.Unreliable, k);
          buf[o] = u.seq >>> 8;
          buf[o + 1] = u.seq;
          o = putVarint(buf, o + 2, u.length);
          u.copyTo(0, u.length, buf, o);
          o += u.length;
          this.mstats.sendQueueLength--;
          this.mstats.sendQueueBytes -= u.length;
          this.pool.release(u);
        }
      }
      // 3. Reliable fragments: resends first, round robin over channels, one fragment per turn.
      let progressed = true;
      while (progressed && o + FRAGMENT_HEADER_BYTES < limit) {
        progressed = false;
        for (let step = 0; step < n; step++) {
          const ch = this.out[(this.rr + step) % n]!;
          if (!ch.reliable) continue;
          if (!this.nextFragment(ch, totalInFlight, packet !== undefined)) continue;
          const msg = this.nfMsg!;
          const idx = this.nfIdx;
          const bytes = this.nfBytes;
          if (o + FRAGMENT_HEADER_BYTES + bytes > limit) continue;
          this.takeFragment(ch, msg, idx);
          o = putFrameStart(buf, o, FrameType.Fragment, ch.index);
          putU32(buf, o, msg.seq);
          putU32(buf, o + 4, msg.length);
          putU32(buf, o + 8, idx);
          buf[o + 12] = fragSize >>> 8;
          buf[o + 13] = fragSize;
          msg.copyTo(idx * fragSize, bytes, buf, o + 14);
          o += 14 + bytes;
          msg.fragState[idx] = 1;
          ch.inFlightBytes += bytes;
          totalInFlight += bytes;
          packet ??= this.takePacket();
          packet.add(msg, idx);
          progressed = true;
          elicit = true;
        }
        this.rr = (this.rr + 1) % n;
      }
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
      if (ackOnly && this.ackPending === 0) return;
      if (ackOnly && this.ackPending < ACK_EVERY && !this.ackNow && now - this.ackPendingSince < this.config.tickMs) {
        return;
      }
      if (elicit) {
        this.pingDue = false;
        this.lastTrackedSent = now;
      }
      const seq = elicit ? this.nextPacketSeq++ : 0;
      // The header goes right before the frames: flags, connection id, [seq], [acks].
      const withAck = this.recvHighest > 0 && (this.ackPending > 0 || this.ackEchoes > 0);
      const hdr = this.hdr;
      let h = 3;
      if (elicit) {
        hdr[h++] = seq >>> 8;
        hdr[h++] = seq;
      }
      if (withAck) {
        hdr[h++] = this.recvHighest >>> 8;
        hdr[h++] = this.recvHighest;
        h = putVarint(hdr, h, Math.min(0x3fff, Math.round((now - this.recvHighestAt) * 10)));
        const nb = this.writeAckBits(hdr, h + 1);
        hdr[h] = nb;
        h += 1 + nb;
        this.ackEchoes = this.ackPending > 0 ? ACK_ECHOES : this.ackEchoes - 1;
      }
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
      this.ackPending = 0;
      this.ackNow = false;
      if (elicit || withAck) o = sealData(buf, o, this.datagram(o));
      if (elicit) {
        packet ??= this.takePacket();
        packet.seq = seq;
        packet.sentAt = now;
        packet.close = close;
        packet.live = true;
        if (this.sent.length === 0) this.sentBase = seq;
        this.sent.push(packet);
        this.inFlightCount++;
        this.busy();
      } else if (withAck && o <= h + 4) this.counters.acksSent++;
      this.lastSentAt = now;
      this.emit(this.datagram(o));
      if (ackOnly) return;
    }
  }

  /**
   * Chooses the next fragment channel `ch` may send now (into `nfMsg`, `nfIdx`, `nfBytes`,
   * `nfResend`): a fragment to resend first, else the next never-sent one. False if none.
   */
  private nextFragment(ch: OutChannel, totalInFlight: number, packetTracked: boolean): boolean {
    while (ch.resendMsg.length > 0 && ch.resendMsg.peek()!.fragState[ch.resendIdx.peek()!] !== 0) {
      ch.resendMsg.shift();
      ch.resendIdx.shift();
    }
    if (!this.canSendReliable(ch, totalInFlight, packetTracked)) return false;
    const again = ch.resendMsg.peek();
    if (again) {
      this.nfMsg = again;
      this.nfIdx = ch.resendIdx.peek()!;
      this.nfBytes = this.fragBytes(again, this.nfIdx);
      this.nfResend = true;
      return true;
    }
    while (ch.cursor < ch.pending.length) {
      const msg = ch.pending.at(ch.cursor);
      if (msg.nextFrag < msg.fragCount) {
        if (msg.nextFrag === 0) {
          // Keep what the receiver must buffer under its reassembly limit.
          const budget = this.config.maxReassemblyBytes / 2;
          if (this.startedMessageBytes > 0 && this.startedMessageBytes + msg.length > budget) return false;
        }
        this.nfMsg = msg;
        this.nfIdx = msg.nextFrag;
        this.nfBytes = this.fragBytes(msg, msg.nextFrag);
        this.nfResend = false;
        return true;
      }
      ch.cursor++;
    }
    return false;
  }

  /** Takes the fragment chosen by {@link nextFragment} off its queue. */
  private takeFragment(ch: OutChannel, msg: OutMessage, idx: number): void {
    if (this.nfResend) {
      ch.resendMsg.shift();
      ch.resendIdx.shift();
      this.mstats.retransmissions++;
      return;
    }
    if (idx === 0) this.startedMessageBytes += msg.length;
    msg.nextFrag++;
  }

  // ------------------------------------------------------------------ time

  private startTicking(): void {
    this.armTick(this.config.tickMs);
  }

  /** Schedules the next tick in `delay` ms (replacing a scheduled one). */
  private armTick(delay: number): void {
    this.tickTimer?.cancel();
    this.tickIdle = delay > this.config.tickMs;
    this.tickDueAt = this.io.clock.now() + delay;
    this.tickTimer = this.io.clock.setTimer(delay, this.tick);
  }

  /**
   * The periodic timer: every `tickMs` while anything is in flight, queued or unacknowledged, and
   * only every `idleTickMs` on an idle connection (liveness needs no finer grain). Sending a tracked
   * packet or receiving one brings the fast tick back at once.
   */
  private readonly tick = (): void => {
    this.tickTimer = undefined;
    if (this.dead) return;
    if (!this.tickDeferred && this.io.clock.now() - this.tickDueAt > STALL_MS) {
      // The timer ran late: the process was frozen (a loaded machine, a GC pause, a debugger).
      // Whatever the peer sent meanwhile is waiting in the socket, and an event loop runs its due
      // timers before it reads sockets: judge nothing now (no RTO, no silence), look again once
      // the input has been read. Only once in a row: a process whose every timer runs late still
      // retransmits and times out.
      this.tickDeferred = true;
      this.armTick(0);
      return;
    }
    this.tickDeferred = false;
    this.onTick();
    if (this.dead) return;
    const busy = this.inFlightCount > 0 || this.ackPending > 0 || this.lingering || this.mstats.sendQueueLength > 0;
    this.armTick(busy ? this.config.tickMs : this.idleTickMs);
  };

  /** Wakes the fast tick if the connection was idle. */
  private busy(): void {
    if (this.tickIdle && !this.dead) this.armTick(this.config.tickMs);
  }

  private onTick(): void {
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
    for (let i = 0; i < this.sent.length; i++) {
      const p = this.sent.at(i);
      if (!p.live) continue;
      if (now - p.sentAt < rto) break;
      this.retire(p);
      this.onPacketLost(p);
      expired = true;
    }
    this.trimSent();
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
    this.tickTimer?.cancel();
    this.handshakeTimer?.cancel();
    this.connectDeadline?.cancel();
    this.sent.clear();
    this.inFlightCount = 0;
    for (const ch of this.out) {
      ch.pending.clear();
      ch.resendMsg.clear();
      ch.resendIdx.clear();
      ch.unsent.clear();
    }
    this.reassembly.clear();
    this.counters.reassemblyBytes = 0;
    this.mstats.sendQueueLength = 0;
    this.mstats.sendQueueBytes = 0;
    this.io.onDead?.();
  }
}

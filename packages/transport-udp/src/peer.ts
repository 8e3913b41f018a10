import {
  type ChannelSpec,
  type CloseCode,
  type Connection,
  type ConnectionEventMap,
  type ConnectionLimits,
  type ConnectionState,
  type ConnectionStats,
  Emitter,
  type Handler,
  MutableConnectionStats,
  RateBudget,
  RttEstimator,
  TransportError,
  type Unsubscribe,
  validateChannels,
} from '@netplay/transport';
import { ClientHandshake, HandshakeReply } from './client-handshake.js';
import { CloseHandshake } from './close-handshake.js';
import { fragmentSize, maxUnreliable, type UdpConfig } from './config.js';
import { CongestionWindow } from './congestion-window.js';
import type { DropCounters } from './counters.js';
import { DataPacketWriter, FRAMES_AT } from './data-packet-writer.js';
import { type FrameSink, FramesRead, readFrames } from './frames.js';
import { InFlightPackets } from './in-flight.js';
import { AckResult, IncomingAcks } from './incoming-acks.js';
import { PeerLiveness, Silence } from './liveness.js';
import { LossRules } from './loss-rules.js';
import { channelHash, type PeerIo, type UdpPeerCounters } from './peer-io.js';
import { ReceiveChannels } from './receive-channels.js';
import { ACK_EVERY, ReceivedPackets } from './received-packets.js';
import { SendQueues } from './send-queues.js';
import { TickSchedule } from './tick-schedule.js';
import { crcOk, DataFlag, dataCrcOk, FrameType, isData, PacketType, sessionOf, u16, u32 } from './wire.js';

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
 * (handshake, liveness, close); the rules live in modules of their own (internal): `SendQueues`
 * (what goes next), `ReceiveChannels` (delivery and reassembly), `ReceivedPackets` (acks we
 * send), `IncomingAcks`, `InFlightPackets` and `LossRules` (acks we get: loss, spurious-loss undo,
 * reordering tolerance), `CongestionWindow`, `TickSchedule` (the late-tick rule), `PeerLiveness`,
 * `CloseHandshake` and `ClientHandshake`.
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
  private readonly received: ReceivedPackets;
  private readonly inFlight = new InFlightPackets();
  private readonly window: CongestionWindow;
  private readonly loss: LossRules;
  private readonly acks: IncomingAcks;
  private readonly ticks: TickSchedule;
  /** The outgoing DATA packet being written. */
  private readonly writer: DataPacketWriter;
  /** Where {@link readFrames} hands a DATA packet's frames (made once). */
  private readonly frames: FrameSink;
  /** What the peer may send us (undefined: `rateLimits: false`). Past it: {@link flooded}. */
  private readonly budget: RateBudget | undefined;
  /** When the datagram being read arrived (whole ms): the time its messages are charged at. */
  private readAt = 0;
  private readonly hash: number;
  private currentState: ConnectionState;
  private sessionId: number;

  // packets
  private nextPacketSeq = 1;
  /** When the last DATA packet went out (any kind): keepalive Pings only go on a silent link. */
  private lastSentAt = 0;

  // liveness
  private readonly liveness: PeerLiveness;
  private lastTrackedSent: number;
  private flushScheduled = false;
  private pingDue = false;

  // closing
  private readonly closing: CloseHandshake;
  private dead = false;

  // client handshake
  private nonce = 0;
  private handshake: ClientHandshake | undefined;

  private constructor(
    private readonly io: PeerIo,
    /** The tunables this peer runs with (MTU, message and reassembly limits, timeouts, congestion window, timers), as passed to `client` / `server` (normally from {@link resolveConfig}); read, never changed, for the peer's life. */
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
    this.writer = new DataPacketWriter(config.mtu);
    this.closing = new CloseHandshake(this.rtt);
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
    this.acks = new IncomingAcks(
      io.clock,
      config.tickMs,
      this.rtt,
      this.window,
      this.loss,
      this.inFlight,
      this.queues,
      this.counters,
      this.mstats,
    );
    this.currentState = state;
    this.sessionId = sessionId;
    this.received = new ReceivedPackets(io.clock);
    this.liveness = new PeerLiveness(io.clock, config.timeouts);
    this.lastTrackedSent = this.liveness.lastHeard;
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
    this.frames = {
      get dead() {
        return peer.dead;
      },
      fragment: (d, p, channel, end) => this.inbound.fragment(d, p, channel, end),
      unreliable: (channel, seq, d, start, end) => this.inbound.unreliable(channel, seq, d, start, end),
      close: (reason) => {
        this.closing.ackDue = true;
        this.scheduleFlush();
        if (this.currentState !== 'closed') this.finish('remote', reason, undefined, true);
      },
      closeAck: () => {
        if (this.closing.lingering && this.closing.sent) this.die();
      },
      malformed: (what) => this.malformed(what),
    };
    this.budget = config.rateLimits ? new RateBudget(config.rateLimits, this.liveness.lastHeard) : undefined;
  }

  /** Starts the client side: sends HELLO and retries until ACCEPT, REFUSE or `connectMs`. */
  static client(io: PeerIo, config: UdpConfig, channels: readonly ChannelSpec[], remoteAddress: string): UdpPeer {
    const p = new UdpPeer(io, config, channels, remoteAddress, 'connecting', 0);
    const random = io.random ?? ((n: number) => crypto.getRandomValues(new Uint8Array(n)));
    p.nonce = u32(random(4), 0) || 1;
    p.handshake = new ClientHandshake(p.nonce, p.hash, io.clock, (d) => p.emit(d));
    p.handshake.start(config.timeouts.connectMs, () => {
      if (p.currentState === 'connecting') {
        p.finish('timeout', 'connect timed out', new TransportError('timeout', 'the handshake did not finish'));
      }
    });
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

  /** Closes, sending `reason` to the peer (after the reliable queue, unless closing after a flood). */
  private end(code: CloseCode, reason: string, error: TransportError | undefined): void {
    if (this.currentState === 'closed') return;
    if (this.currentState === 'connecting') {
      this.finish(code, reason, error);
      return;
    }
    this.closing.start(reason);
    this.currentState = 'closed';
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
    this.closing.abandon = true;
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
      if (!this.received.receive(seq)) {
        this.io.drops.duplicate++;
        return;
      }
    }
    const withAck = (flags & DataFlag.Ack) !== 0;
    if (withAck) {
      o = this.acks.read(d, o, end, this.nextPacketSeq - 1);
      if (o < 0) {
        this.io.drops.malformed++;
        return;
      }
    }
    this.mstats.packetsReceived++;
    this.mstats.bytesReceived += d.length;
    this.heard();
    if (withAck) {
      const acked = this.acks.process(d, this.closing.lingering);
      if (acked === AckResult.CloseAcked) this.die();
      if (acked !== AckResult.None) this.scheduleFlush();
    }
    const read = readFrames(d, o, end, (flags & DataFlag.Tracked) !== 0, this.frames);
    if (read === FramesRead.Elicits && seq !== 0) {
      if (this.received.elicited()) this.scheduleFlush();
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

  // ------------------------------------------------------------------ handshake (client)

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
      hs.step();
    } else if (reply === HandshakeReply.Accept) {
      this.mstats.packetsReceived++;
      this.mstats.bytesReceived += d.length;
      this.sessionId = session;
      hs.stop();
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

  /** Sends everything that may be sent now. */
  flush(): void {
    if (this.dead || this.currentState === 'connecting' || this.sessionId === 0) return;
    const writer = this.writer;
    const buf = writer.buf;
    const limit = writer.limit;
    this.queues.beginFlush();
    for (let guard = 0; guard < 100_000; guard++) {
      const now = this.io.clock.now();
      // 1. Close handshake frames.
      let o = this.closing.writeAck(buf, FRAMES_AT);
      // 2. Unreliable messages, newest state first to go out.
      o = this.queues.writeUnreliable(buf, o, limit);
      // 3. Reliable fragments: resends first, round robin over channels, one fragment per turn.
      o = this.queues.writeFragments(buf, o, limit);
      // The record of this packet, taken when its first fragment went in.
      let packet = this.queues.packet;
      // Tracked packets (reliable fragments, Close, Ping) get a sequence number and are acknowledged;
      // the others (acks, unreliable messages, CloseAck) carry sequence number 0.
      let elicit = packet !== undefined;
      // 4. Close, once every reliable message is acknowledged.
      const c = this.closing.lingering ? this.closing.write(buf, o, limit, now, this.mstats.sendQueueLength === 0) : o;
      if (c < 0) {
        this.die();
        return;
      }
      const close = c !== o;
      if (close) {
        o = c;
        elicit = true;
      }
      // 5. Keepalive.
      if (!elicit && this.pingDue) {
        buf[o++] = FrameType.Ping << 4;
        elicit = true;
      }
      const ackOnly = !elicit && o === FRAMES_AT;
      const r = this.received;
      if (ackOnly && r.pending === 0) return;
      if (ackOnly && r.pending < ACK_EVERY && !r.now && now - r.pendingSince < this.config.tickMs) return;
      if (elicit) {
        this.pingDue = false;
        this.lastTrackedSent = now;
      }
      const seq = elicit ? this.nextPacketSeq++ : 0;
      const withAck = this.received.due;
      const ackDelay = withAck ? Math.min(0x3fff, Math.round((now - r.highestAt) * 10)) : 0;
      const datagram = writer.finish(o, this.sessionId, elicit, seq, withAck ? r : undefined, ackDelay);
      this.received.acked();
      if (elicit) {
        packet ??= this.inFlight.take();
        packet.seq = seq;
        packet.sentAt = now;
        packet.close = close;
        this.inFlight.push(packet);
        this.busy();
      } else if (withAck && datagram.length <= writer.headerBytes + 4) this.counters.acksSent++;
      this.lastSentAt = now;
      this.emit(datagram);
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
      this.inFlight.count > 0 || this.received.pending > 0 || this.closing.lingering || this.mstats.sendQueueLength > 0;
    this.ticks.next(busy);
  }

  /** Wakes the fast tick if the connection was idle. */
  private busy(): void {
    if (!this.dead) this.ticks.wake();
  }

  /** Silence, interruption, retransmission timeouts and keepalives, once per tick. */
  private judge(): void {
    const now = this.io.clock.now();
    const silent = now - this.liveness.lastHeard;
    const verdict = this.liveness.judge(this.currentState === 'open');
    if (verdict === Silence.Gone) {
      const why = `no packet for ${Math.round(silent)} ms`;
      if (this.currentState === 'open')
        this.finish('timeout', 'the peer went silent', new TransportError('timeout', why));
      else this.die();
      return;
    }
    if (verdict === Silence.Interrupted) {
      this.emitter.emit('interrupted', { silentMs: silent });
      if (this.dead) return;
    }
    // Retransmission timeouts: the oldest packets first.
    this.acks.expire();
    // Keepalive, and a fresh RTT sample even when only untracked (unreliable) packets flow.
    const k = this.config.keepaliveMs;
    if (this.currentState === 'open' && now - this.lastTrackedSent >= k && now - this.lastSentAt >= k)
      this.pingDue = true;
    this.flush();
  }

  private heard(): void {
    const interruptedMs = this.liveness.heard(this.currentState === 'open');
    if (interruptedMs >= 0) this.emitter.emit('resumed', { interruptedMs });
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
    this.closing.lingering = false;
    this.ticks.stop();
    this.handshake?.stop();
    this.inFlight.clear();
    this.queues.clear();
    this.inbound.clear();
    this.mstats.sendQueueLength = 0;
    this.mstats.sendQueueBytes = 0;
    this.io.onDead?.();
  }
}

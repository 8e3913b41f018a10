import { checkSend, decodeCloseReason, encodeCloseReason, sameChannels, validateChannels } from './channels.js';
import type { Timer } from './clock.js';
import { MutableConnectionStats } from './connection-stats.js';
import type {
  ChannelSpec,
  CloseCode,
  Connection,
  ConnectionEventMap,
  ConnectionLimits,
  ConnectionState,
  ConnectionStats,
  Listener,
  ListenerEventMap,
  Timeouts,
} from './contract.js';
import { DEFAULT_TIMEOUTS } from './contract.js';
import { Emitter, type Handler, type Unsubscribe } from './emitter.js';
import { TransportError } from './errors.js';
import { DEFAULT_RATE_LIMITS, RateBudget, type RateLimits } from './rate-budget.js';
import { RttEstimator } from './rtt.js';
import type { ListenOptions, SimulatedNetwork } from './simulated-network.js';
import { SIM_HEADER_BYTES } from './simulated-network.js';

/** Options of a {@link MemoryConnection} (both ends must use the same channels). */
export interface MemoryConnectionOptions {
  /** The channels, in order; both ends must declare the same ones or the handshake is refused. */
  readonly channels: readonly ChannelSpec[];
  /** Liveness timeouts (default {@link DEFAULT_TIMEOUTS}). */
  readonly timeouts?: Partial<Timeouts>;
  /** Largest reliable message (default 16 MiB). */
  readonly maxMessageBytes?: number;
  /** Largest unreliable message (default 1200, like one UDP datagram). */
  readonly maxUnreliableBytes?: number;
  /** Most reliable messages queued or unacknowledged; `send` throws `limit` beyond (default 65 536). */
  readonly maxSendQueue?: number;
  /**
   * The peer's budget of data messages and bytes per second (default {@link DEFAULT_RATE_LIMITS});
   * past it this end closes with error code `flood`. `false` disables the budget.
   */
  readonly rateLimits?: RateLimits | false;
}

interface Outgoing {
  readonly seq: number;
  readonly data: Uint8Array;
  firstSentAt: number;
  retransmitted: boolean;
  timer: Timer | undefined;
  attempts: number;
}

interface ChannelState {
  readonly spec: ChannelSpec;
  readonly index: number;
  nextSendSeq: number;
  /** Reliable: unacknowledged messages by sequence number. */
  readonly unacked: Map<number, Outgoing>;
  /** Reliable: next sequence number to deliver. Unreliable: last delivered + 1. */
  nextDeliverSeq: number;
  /** Reliable: received out of order, waiting for the gap to fill. */
  readonly reorder: Map<number, Uint8Array>;
}

type Control =
  | { t: 'data'; ch: number; seq: number; data: Uint8Array }
  | { t: 'ack'; ch: number; seq: number }
  | { t: 'ping'; sentAt: number }
  | { t: 'pong'; sentAt: number }
  | { t: 'fin'; reason: Uint8Array; final: readonly number[] }
  | { t: 'finack' };

const DEFAULT_MAX_MESSAGE = 16 << 20;

/**
 * One end of an in-memory connection over a {@link SimulatedNetwork}.
 *
 * Every packet crosses the simulated link and suffers its latency, jitter, loss, duplication,
 * reordering and bandwidth. Reliability is real ARQ on top of that: each reliable message is one
 * packet (no fragmentation: a 1 MiB message is one 1 MiB packet that occupies the link's bandwidth),
 * acknowledged individually and retransmitted after an RFC 6298 RTO until acknowledged. The
 * receiver reorders per channel and drops duplicates, so reliable channels see latency, jitter and
 * retransmission delays, never loss. Unreliable messages are one packet each; the receiver drops any
 * whose sequence number is not newer than the last delivered on that channel.
 *
 * Pings every `min(250, interruptMs / 3)` ms measure RTT and keep the connection alive.
 */
export class MemoryConnection implements Connection {
  readonly channels: readonly ChannelSpec[];
  readonly limits: ConnectionLimits;
  /** This connection's liveness timeouts in ms: the option merged over {@link DEFAULT_TIMEOUTS}. */
  readonly timeouts: Timeouts;
  readonly stats: ConnectionStats;
  private readonly mstats = new MutableConnectionStats();
  private readonly emitter = new Emitter<ConnectionEventMap>();
  private readonly chans: ChannelState[];
  private readonly byName = new Map<string, ChannelState>();
  private readonly rtt = new RttEstimator();
  private readonly maxSendQueue: number;
  private currentState: ConnectionState;
  private peer: MemoryConnection | undefined;
  /** Still answering acks and retransmitting after a local close, until everything is acknowledged. */
  private lingering = false;
  private dead = false;
  private finReason: Uint8Array | undefined;
  private finTimer: Timer | undefined;
  private finAcked = false;
  private pendingFin: { reason: string; final: readonly number[] } | undefined;
  private tick: Timer | undefined;
  private lastHeard: number;
  private interruptedSince = -1;
  private connectAttempts = 0;
  private connectTimer: Timer | undefined;
  private readonly queuedWhileConnecting: Array<{ ch: ChannelState; data: Uint8Array }> = [];
  private readonly pingInterval: number;
  private readonly budget: RateBudget | undefined;

  private constructor(
    private readonly net: SimulatedNetwork,
    /** The simulator endpoint name this end sends from (the `from` of `connect`, or the listener's address). */
    readonly localAddress: string,
    readonly remoteAddress: string,
    options: MemoryConnectionOptions,
    state: ConnectionState,
    private readonly listener?: MemoryListener,
  ) {
    this.channels = validateChannels(options.channels);
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.limits = Object.freeze({
      maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE,
      maxUnreliableBytes: options.maxUnreliableBytes ?? 1200,
    });
    this.maxSendQueue = options.maxSendQueue ?? 65_536;
    this.stats = this.mstats;
    this.chans = this.channels.map((spec, index) => ({
      spec,
      index,
      nextSendSeq: 0,
      unacked: new Map(),
      nextDeliverSeq: 0,
      reorder: new Map(),
    }));
    for (const c of this.chans) this.byName.set(c.spec.name, c);
    this.currentState = state;
    this.lastHeard = net.now();
    this.pingInterval = Math.max(1, Math.min(250, this.timeouts.interruptMs / 3));
    const limits = options.rateLimits ?? DEFAULT_RATE_LIMITS;
    this.budget = limits === false ? undefined : new RateBudget(limits, this.lastHeard);
  }

  /** @internal Use {@link SimulatedNetwork.connect}. */
  static connect(
    net: SimulatedNetwork,
    from: string,
    to: string,
    options: MemoryConnectionOptions,
    id: number,
  ): MemoryConnection {
    const c = new MemoryConnection(net, from, to, options, 'connecting');
    c.sendHello(id);
    return c;
  }

  /** @internal Creates the server end when a hello arrives. */
  static accept(
    listener: MemoryListener,
    client: MemoryConnection,
    options: MemoryConnectionOptions,
  ): MemoryConnection {
    const c = new MemoryConnection(listener.net, listener.localAddress, client.localAddress, options, 'open', listener);
    c.peer = client;
    c.startTicking();
    return c;
  }

  get state(): ConnectionState {
    return this.currentState;
  }

  on<K extends keyof ConnectionEventMap>(type: K, handler: Handler<ConnectionEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  send(channel: string, data: Uint8Array): void {
    const ch = checkSend(this.currentState, this.byName, channel, data.length, this.limits);
    const reliable = ch.spec.kind === 'reliable';
    if (reliable && this.mstats.sendQueueLength >= this.maxSendQueue) {
      throw new TransportError('limit', `send queue full (${this.maxSendQueue} messages)`);
    }
    const copy = data.slice();
    if (this.currentState === 'connecting') {
      this.queuedWhileConnecting.push({ ch, data: copy });
      this.mstats.sendQueueLength++;
      this.mstats.sendQueueBytes += copy.length;
      return;
    }
    this.sendNow(ch, copy);
  }

  close(reason = ''): void {
    if (this.currentState === 'closed') return;
    const wasConnecting = this.currentState === 'connecting';
    this.finReason = encodeCloseReason(reason);
    if (wasConnecting || !this.peer) {
      this.finish('local', reason, undefined);
      return;
    }
    this.currentState = 'closed';
    this.lingering = true;
    this.sendFin(0);
    this.emitClose('local', reason, undefined);
  }

  /** The peer went over its budget: close as `close()` does, but report code `error` / `flood` locally. */
  private floodClose(reason: string): void {
    this.finReason = encodeCloseReason(reason);
    this.currentState = 'closed';
    this.lingering = true;
    this.sendFin(0);
    this.emitClose('error', reason, new TransportError('flood', reason));
  }

  // ---- sending ----

  private sendNow(ch: ChannelState, data: Uint8Array): void {
    const seq = ch.nextSendSeq++;
    if (ch.spec.kind === 'unreliable') {
      this.transmit({ t: 'data', ch: ch.index, seq, data }, data.length);
      return;
    }
    const out: Outgoing = {
      seq,
      data,
      firstSentAt: this.net.now(),
      retransmitted: false,
      timer: undefined,
      attempts: 0,
    };
    ch.unacked.set(seq, out);
    this.mstats.sendQueueLength++;
    this.mstats.sendQueueBytes += data.length;
    this.transmitReliable(ch, out);
  }

  private transmitReliable(ch: ChannelState, out: Outgoing): void {
    if (out.attempts > 0) {
      out.retransmitted = true;
      this.mstats.retransmissions++;
      this.lossSample(1);
    }
    out.attempts++;
    const leftAt = this.transmit({ t: 'data', ch: ch.index, seq: out.seq, data: out.data }, out.data.length);
    const backoff = Math.min(8, 2 ** Math.min(3, out.attempts - 1));
    const delay = leftAt - this.net.now() + this.rtt.rto() * backoff;
    out.timer = this.net.clock.setTimer(delay, () => {
      out.timer = undefined;
      if (this.dead || !ch.unacked.has(out.seq)) return;
      this.transmitReliable(ch, out);
    });
  }

  /** Sends one packet to the peer; returns when it has left (see SimulatedNetwork.transmit). */
  private transmit(packet: Control, payloadBytes: number): number {
    const peer = this.peer;
    const size = SIM_HEADER_BYTES + payloadBytes;
    this.mstats.packetsSent++;
    this.mstats.bytesSent += size;
    if (!peer) return this.net.now();
    return this.net.transmit(this.localAddress, this.remoteAddress, size, () => peer.receive(packet, size, this));
  }

  private sendHello(id: number): void {
    const listenerAddress = this.remoteAddress;
    const attempt = () => {
      if (this.currentState !== 'connecting') return;
      this.connectAttempts++;
      this.mstats.packetsSent++;
      this.mstats.bytesSent += SIM_HEADER_BYTES;
      this.net.transmit(this.localAddress, listenerAddress, SIM_HEADER_BYTES, () => {
        const listener = this.net.listenerAt(listenerAddress);
        const reply = listener ? listener.hello(this, id) : ({ t: 'refuse', reason: 'nothing listens there' } as const);
        if (!reply) return;
        // The reply travels back over the reverse link.
        this.net.transmit(listenerAddress, this.localAddress, SIM_HEADER_BYTES, () => {
          if (reply.t === 'refuse') this.refused(reply.reason);
          else this.welcomed(reply.server);
        });
      });
      const delay = Math.min(1000, 100 * 2 ** Math.min(4, this.connectAttempts - 1));
      this.connectTimer = this.net.clock.setTimer(delay, attempt);
    };
    this.net.clock.setTimer(this.timeouts.connectMs, () => {
      if (this.currentState !== 'connecting') return;
      this.finish('timeout', 'connect timed out', new TransportError('timeout', 'the handshake did not finish'));
    });
    attempt();
  }

  private welcomed(server: MemoryConnection): void {
    if (this.currentState !== 'connecting') return;
    this.connectTimer?.cancel();
    this.peer = server;
    this.currentState = 'open';
    this.lastHeard = this.net.now();
    this.mstats.packetsReceived++;
    this.mstats.bytesReceived += SIM_HEADER_BYTES;
    this.startTicking();
    const queued = this.queuedWhileConnecting.splice(0);
    for (const q of queued) {
      this.mstats.sendQueueLength--;
      this.mstats.sendQueueBytes -= q.data.length;
      this.sendNow(q.ch, q.data);
    }
    this.emitter.emit('open', undefined);
  }

  private refused(reason: string): void {
    if (this.currentState !== 'connecting') return;
    this.finish('refused', reason, new TransportError('refused', `connection refused: ${reason}`));
  }

  private sendFin(attempt: number): void {
    if (this.dead || !this.finReason) return;
    const final = this.chans.map((c) => (c.spec.kind === 'reliable' ? c.nextSendSeq : 0));
    this.transmit({ t: 'fin', reason: this.finReason, final }, this.finReason.length);
    if (attempt >= 12) {
      this.finTimer = this.net.clock.setTimer(this.rtt.rto() * 4, () => this.die());
      return;
    }
    this.finTimer = this.net.clock.setTimer(this.rtt.rto() * Math.min(8, 2 ** attempt), () =>
      this.sendFin(attempt + 1),
    );
  }

  // ---- receiving ----

  /** @internal A packet from the peer landed. */
  receive(packet: Control, size: number, from: MemoryConnection): void {
    if (this.dead) return;
    if (from !== this.peer) {
      // The server end may talk before our welcome arrived: its traffic proves the handshake.
      if (this.currentState === 'connecting' && from.peer === this) this.welcomed(from);
      else return;
    }
    this.mstats.packetsReceived++;
    this.mstats.bytesReceived += size;
    if (packet.t === 'data' && this.currentState === 'open' && this.budget && !this.budget.take(size, this.net.now())) {
      this.floodClose(this.budget.describe());
      return;
    }
    this.heard();
    switch (packet.t) {
      case 'data':
        this.onData(packet.ch, packet.seq, packet.data);
        break;
      case 'ack':
        this.onAck(packet.ch, packet.seq);
        break;
      case 'ping':
        this.transmit({ t: 'pong', sentAt: packet.sentAt }, 8);
        break;
      case 'pong':
        this.rtt.sample(this.net.now() - packet.sentAt);
        this.updateRtt();
        break;
      case 'fin':
        this.transmit({ t: 'finack' }, 0);
        if (this.currentState !== 'closed') {
          this.pendingFin = { reason: decodeCloseReason(packet.reason), final: packet.final };
          this.maybeRemoteClose();
        }
        break;
      case 'finack':
        if (this.lingering) this.finAcked = true;
        this.maybeDie();
        break;
      default:
        break;
    }
  }

  private onData(index: number, seq: number, data: Uint8Array): void {
    const ch = this.chans[index];
    if (!ch) return;
    if (ch.spec.kind === 'unreliable') {
      if (this.currentState !== 'open' || seq < ch.nextDeliverSeq) return;
      ch.nextDeliverSeq = seq + 1;
      this.emitter.emit('message', { channel: ch.spec.name, data: data.slice() });
      return;
    }
    this.transmit({ t: 'ack', ch: index, seq }, 8);
    if (this.currentState !== 'open') return;
    if (seq < ch.nextDeliverSeq || ch.reorder.has(seq)) return;
    ch.reorder.set(seq, data);
    for (;;) {
      const next = ch.reorder.get(ch.nextDeliverSeq);
      if (!next) break;
      ch.reorder.delete(ch.nextDeliverSeq);
      ch.nextDeliverSeq++;
      this.emitter.emit('message', { channel: ch.spec.name, data: next.slice() });
      if (this.currentState !== 'open') return;
    }
    this.maybeRemoteClose();
  }

  private onAck(index: number, seq: number): void {
    const ch = this.chans[index];
    const out = ch?.unacked.get(seq);
    if (!ch || !out) return;
    ch.unacked.delete(seq);
    out.timer?.cancel();
    this.mstats.sendQueueLength--;
    this.mstats.sendQueueBytes -= out.data.length;
    if (!out.retransmitted) {
      this.rtt.sample(this.net.now() - out.firstSentAt);
      this.updateRtt();
    }
    this.lossSample(0);
    this.maybeDie();
  }

  private maybeRemoteClose(): void {
    const fin = this.pendingFin;
    if (!fin || this.currentState === 'closed') return;
    for (const ch of this.chans) {
      if (ch.spec.kind === 'reliable' && ch.nextDeliverSeq < (fin.final[ch.index] ?? 0)) return;
    }
    this.finish('remote', fin.reason, undefined);
  }

  // ---- liveness ----

  private startTicking(): void {
    const tick = () => {
      if (this.dead) return;
      const now = this.net.now();
      const silent = now - this.lastHeard;
      if (this.currentState === 'open') {
        if (silent >= this.timeouts.disconnectMs) {
          this.finish('timeout', 'the peer went silent', new TransportError('timeout', `no packet for ${silent} ms`));
          return;
        }
        if (silent >= this.timeouts.interruptMs && this.interruptedSince < 0) {
          this.interruptedSince = this.lastHeard;
          this.emitter.emit('interrupted', { silentMs: silent });
        }
        if (this.currentState === 'open') this.transmit({ t: 'ping', sentAt: now }, 8);
      } else if (this.lingering && silent >= this.timeouts.disconnectMs) {
        this.die();
        return;
      }
      this.tick = this.net.clock.setTimer(this.pingInterval, tick);
    };
    this.tick = this.net.clock.setTimer(this.pingInterval, tick);
  }

  private heard(): void {
    const now = this.net.now();
    this.lastHeard = now;
    if (this.interruptedSince >= 0 && this.currentState === 'open') {
      const since = this.interruptedSince;
      this.interruptedSince = -1;
      this.emitter.emit('resumed', { interruptedMs: now - since });
    }
  }

  private updateRtt(): void {
    this.mstats.rttMs = this.rtt.srtt;
    this.mstats.rttVarMs = this.rtt.rttvar;
    this.mstats.rttSamples = this.rtt.samples;
  }

  private lossSample(lost: 0 | 1): void {
    this.mstats.lossRate += (lost - this.mstats.lossRate) / 32;
  }

  // ---- ending ----

  private maybeDie(): void {
    if (!this.lingering || !this.finAcked) return;
    for (const ch of this.chans) if (ch.unacked.size > 0) return;
    this.die();
  }

  /** Closes now (no lingering) and emits `close`. */
  private finish(code: CloseCode, reason: string, error: TransportError | undefined): void {
    if (this.currentState === 'closed' && !this.lingering) return;
    const wasClosed = this.currentState === 'closed';
    this.currentState = 'closed';
    this.die();
    if (!wasClosed) this.emitClose(code, reason, error);
  }

  private emitClose(code: CloseCode, reason: string, error: TransportError | undefined): void {
    this.listener?.forget(this);
    this.emitter.emit('close', error ? { code, reason, error } : { code, reason });
  }

  /** Stops every timer and ignores the network from now on. */
  private die(): void {
    if (this.dead) return;
    this.dead = true;
    this.lingering = false;
    this.tick?.cancel();
    this.finTimer?.cancel();
    this.connectTimer?.cancel();
    for (const ch of this.chans) {
      for (const out of ch.unacked.values()) out.timer?.cancel();
      ch.unacked.clear();
      ch.reorder.clear();
    }
    this.mstats.sendQueueLength = 0;
    this.mstats.sendQueueBytes = 0;
    this.listener?.forget(this);
  }
}

/** A listener on a {@link SimulatedNetwork} address. Create it with {@link SimulatedNetwork.listen}. */
export class MemoryListener implements Listener {
  private readonly emitter = new Emitter<ListenerEventMap>();
  private readonly accepted: MemoryConnection[] = [];
  private readonly byClient = new WeakMap<MemoryConnection, MemoryConnection>();
  private readonly channels: readonly ChannelSpec[];
  private readonly maxConnections: number;
  private closed = false;

  /** @internal */
  constructor(
    /** The simulated network this listener accepts on; its clock drives every accepted connection. */
    readonly net: SimulatedNetwork,
    readonly localAddress: string,
    private readonly options: MemoryConnectionOptions & ListenOptions,
  ) {
    this.channels = validateChannels(options.channels);
    this.maxConnections = options.maxConnections ?? 64;
  }

  get connections(): readonly Connection[] {
    return this.accepted;
  }

  on<K extends keyof ListenerEventMap>(type: K, handler: Handler<ListenerEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  close(reason = 'listener closed'): void {
    if (this.closed) return;
    this.closed = true;
    this.net.removeListener(this);
    for (const c of [...this.accepted]) c.close(reason);
    this.emitter.emit('close', undefined);
  }

  /** @internal A client's hello arrived; returns the reply to send back, or nothing. */
  hello(
    client: MemoryConnection,
    _id: number,
  ): { t: 'welcome'; server: MemoryConnection } | { t: 'refuse'; reason: string } | undefined {
    if (this.closed) return { t: 'refuse', reason: 'listener closed' };
    const existing = this.byClient.get(client);
    if (existing) return existing.state === 'open' ? { t: 'welcome', server: existing } : undefined;
    if (!sameChannels(client.channels, this.channels)) {
      this.emitter.emit('error', new TransportError('refused', `${client.localAddress}: channel lists differ`));
      return { t: 'refuse', reason: 'channel lists differ' };
    }
    if (this.accepted.length >= this.maxConnections) {
      this.emitter.emit('error', new TransportError('limit', `${client.localAddress}: listener full`));
      return { t: 'refuse', reason: 'listener full' };
    }
    const server = MemoryConnection.accept(this, client, this.options);
    this.accepted.push(server);
    this.byClient.set(client, server);
    this.emitter.emit('connection', server);
    return { t: 'welcome', server };
  }

  /** @internal A connection of this listener closed. */
  forget(conn: MemoryConnection): void {
    const i = this.accepted.indexOf(conn);
    if (i >= 0) this.accepted.splice(i, 1);
  }
}

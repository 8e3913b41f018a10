/**
 * A @netplay/transport `Connection` over a `MessageChannel` (browsers, Node, workers): the smallest
 * real transport that passes the conformance kit. A `MessageChannel` already delivers every
 * message once, whole and in order, so the work left is the contract around it: channels and
 * limits, copies on send, sequence numbers on unreliable channels, pings for keepalive and RTT,
 * silence timeouts, a close handshake that carries the reason after the data, a per-peer rate
 * budget, and live stats.
 */
import {
  type ChannelSpec,
  type CloseCode,
  type Connection,
  type ConnectionEventMap,
  type ConnectionLimits,
  type ConnectionState,
  checkSend,
  DEFAULT_RATE_LIMITS,
  DEFAULT_TIMEOUTS,
  decodeCloseReason,
  Emitter,
  encodeCloseReason,
  type Handler,
  MutableConnectionStats,
  RateBudget,
  type RateLimits,
  RttEstimator,
  type Timeouts,
  TransportError,
  type Unsubscribe,
} from '@netplay/transport';

/** What crosses the port. Structured clone copies `data`, so `send` never keeps the caller's bytes. */
type Packet =
  | { readonly t: 'data'; readonly ch: number; readonly seq: number; readonly data: Uint8Array }
  | { readonly t: 'ping'; readonly at: number }
  | { readonly t: 'pong'; readonly at: number }
  | { readonly t: 'fin'; readonly reason: Uint8Array };

/** Bytes counted per packet on top of its payload (kind, channel, sequence). */
const HEADER_BYTES = 12;

/** What the transport needs of a port: a browser's or Node's `MessagePort` fits. */
export interface PortLike {
  postMessage(value: unknown): void;
  addEventListener(type: 'message', listener: (event: Event) => void): void;
  start(): void;
  close(): void;
}

/** Shared by both ends of a pair: set `cut` to make every packet disappear (a pulled cable). */
export interface Wire {
  cut: boolean;
}

/** Options of {@link messageChannelPair}. */
export interface MessageChannelOptions {
  /** Channels both ends declare, in order. */
  readonly channels: readonly ChannelSpec[];
  /** Liveness timeouts (default `DEFAULT_TIMEOUTS`). */
  readonly timeouts?: Timeouts;
  /** The budget of data messages and bytes a peer may send us (default `DEFAULT_RATE_LIMITS`). */
  readonly rateLimits?: RateLimits;
  /** Limits of both ends (default 4 MiB reliable, 1200 B unreliable). */
  readonly limits?: ConnectionLimits;
}

/** One end of a `MessageChannel` as a `Connection`. Both ends start `open`. */
export class MessagePortConnection implements Connection {
  readonly stats = new MutableConnectionStats();
  readonly limits: ConnectionLimits;
  private currentState: ConnectionState = 'open';
  private readonly emitter = new Emitter<ConnectionEventMap>();
  private readonly byName = new Map<string, { readonly spec: ChannelSpec; readonly index: number; seq: number }>();
  private readonly lastSeq: number[];
  private readonly timeouts: Timeouts;
  private readonly budget: RateBudget;
  private readonly rtt = new RttEstimator();
  private readonly timer: ReturnType<typeof setInterval>;
  private lastHeard = performance.now();
  private interruptedAt = -1;

  constructor(
    private readonly port: PortLike,
    private readonly wire: Wire,
    readonly channels: readonly ChannelSpec[],
    readonly remoteAddress: string,
    options: MessageChannelOptions,
  ) {
    channels.forEach((spec, index) => {
      this.byName.set(spec.name, { spec, index, seq: 0 });
    });
    this.lastSeq = channels.map(() => -1);
    this.limits = options.limits ?? { maxMessageBytes: 4 * 1024 * 1024, maxUnreliableBytes: 1200 };
    this.timeouts = options.timeouts ?? DEFAULT_TIMEOUTS;
    this.budget = new RateBudget(options.rateLimits ?? DEFAULT_RATE_LIMITS, performance.now());
    port.addEventListener('message', (e) => this.onPacket((e as Event & { readonly data: Packet }).data));
    port.start();
    // Keepalive and RTT probe in one: a ping every min(250, interruptMs / 3) ms; then check silence.
    this.timer = setInterval(() => this.onTimer(), Math.min(250, this.timeouts.interruptMs / 3));
  }

  get state(): ConnectionState {
    return this.currentState;
  }

  on<K extends keyof ConnectionEventMap>(type: K, handler: Handler<ConnectionEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  send(channel: string, data: Uint8Array): void {
    const ch = checkSend(this.currentState, this.byName, channel, data.length, this.limits);
    this.stats.bytesSent += data.length + HEADER_BYTES;
    this.post({ t: 'data', ch: ch.index, seq: ch.seq++, data });
  }

  close(reason = ''): void {
    if (this.currentState === 'closed') return;
    // The FIN follows every data packet on the same ordered port, so the peer reads the data first.
    this.post({ t: 'fin', reason: encodeCloseReason(reason) });
    this.finish('local', reason);
  }

  /** Releases the port (after `close`, or to drop the connection without telling the peer). */
  dispose(): void {
    this.finish('local', 'disposed');
    this.port.close();
  }

  private post(packet: Packet): void {
    this.stats.packetsSent++;
    if (!this.wire.cut) this.port.postMessage(packet);
  }

  private onPacket(packet: Packet): void {
    if (this.wire.cut || this.currentState === 'closed') return;
    const now = performance.now();
    this.lastHeard = now;
    this.stats.packetsReceived++;
    if (this.interruptedAt >= 0) {
      this.emitter.emit('resumed', { interruptedMs: now - this.interruptedAt });
      this.interruptedAt = -1;
    }
    switch (packet.t) {
      case 'data': {
        this.stats.bytesReceived += packet.data.length + HEADER_BYTES;
        if (!this.budget.take(packet.data.length, now)) {
          // Over its budget: close as close() would, but report the flood locally.
          const reason = this.budget.describe();
          this.post({ t: 'fin', reason: encodeCloseReason(reason) });
          this.finish('error', reason, new TransportError('flood', reason));
          return;
        }
        const spec = this.channels[packet.ch];
        if (spec === undefined) return;
        // Unreliable-sequenced: never a message older than (or equal to) the last one delivered.
        if (spec.kind === 'unreliable') {
          if (packet.seq <= this.lastSeq[packet.ch]!) return;
          this.lastSeq[packet.ch] = packet.seq;
        }
        this.emitter.emit('message', { channel: spec.name, data: packet.data });
        return;
      }
      case 'ping':
        this.post({ t: 'pong', at: packet.at });
        return;
      case 'pong': {
        this.rtt.sample(now - packet.at);
        this.stats.rttMs = this.rtt.srtt;
        this.stats.rttVarMs = this.rtt.rttvar;
        this.stats.rttSamples = this.rtt.samples;
        return;
      }
      case 'fin':
        this.finish('remote', decodeCloseReason(packet.reason));
        this.port.close();
        return;
    }
  }

  private onTimer(): void {
    if (this.currentState === 'closed') return;
    const now = performance.now();
    this.post({ t: 'ping', at: now });
    const silent = now - this.lastHeard;
    if (silent >= this.timeouts.disconnectMs) {
      const reason = `silent for ${Math.round(silent)} ms`;
      this.finish('timeout', reason, new TransportError('timeout', reason));
    } else if (silent >= this.timeouts.interruptMs && this.interruptedAt < 0) {
      this.interruptedAt = now;
      this.emitter.emit('interrupted', { silentMs: silent });
    }
  }

  private finish(code: CloseCode, reason: string, error?: TransportError): void {
    if (this.currentState === 'closed') return;
    this.currentState = 'closed';
    clearInterval(this.timer);
    this.emitter.emit('close', error === undefined ? { code, reason } : { code, reason, error });
  }
}

/** Two connected, open ends over a new `MessageChannel`, and the wire between them. */
export function messageChannelPair(options: MessageChannelOptions): {
  client: MessagePortConnection;
  server: MessagePortConnection;
  wire: Wire;
} {
  const { port1, port2 } = new MessageChannel();
  const wire: Wire = { cut: false };
  return {
    client: new MessagePortConnection(port1, wire, options.channels, 'message-port:server', options),
    server: new MessagePortConnection(port2, wire, options.channels, 'message-port:client', options),
    wire,
  };
}

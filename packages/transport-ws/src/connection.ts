import type {
  ChannelSpec,
  CloseCode,
  Connection,
  ConnectionEventMap,
  ConnectionLimits,
  ConnectionState,
  Handler,
  Timer,
  Unsubscribe,
} from '@netplay/transport';
import {
  checkSend,
  Emitter,
  RttEstimator,
  SendLedger,
  TransportError,
  truncateCloseReason,
  validateChannels,
} from '@netplay/transport';
import { type ChannelState, channelStates } from './channel-state.js';
import { mapRemoteClose, WsCloseCode } from './close-codes.js';
import {
  decodeHello,
  decodePingTime,
  decodeWelcome,
  encodeHello,
  encodePing,
  encodeReliable,
  encodeUnreliable,
  encodeWelcome,
  FrameType,
  PROTOCOL_VERSION,
  RELIABLE_HEADER_BYTES,
  seqNewer,
  UNRELIABLE_HEADER_BYTES,
  unreliableSeq,
} from './frame.js';
import { agreedLimits, helloRefusal } from './handshake.js';
import { type ResolvedOptions, resolveOptions, type WsConnectionOptions } from './options.js';
import type { WsSocket } from './socket.js';
import { MutableWsStats, type WsConnectionStats } from './ws-stats.js';

/** Which end of the WebSocket a {@link WsConnection} is. */
export type WsRole = 'client' | 'server';

/** Callbacks a server shell (the listener) receives from its server-side connections. */
export interface WsServerHooks {
  /** The client's HELLO was accepted; the connection is open and may be handed to the user. */
  accepted(conn: WsConnection): void;
  /** The handshake failed (refused, bad frame, timeout); the connection was never opened. */
  rejected(conn: WsConnection, error: TransportError): void;
  /** The connection closed (after `accepted`, or after `rejected`). */
  closed(conn: WsConnection): void;
}

/**
 * One end of a netplay-ws connection: the transport-independent core over an abstract
 * {@link WsSocket}. It multiplexes the channels on one socket in the frames of `frame.ts`, runs the
 * HELLO/WELCOME handshake, pings for RTT and liveness, holds back stale unreliable messages while
 * the socket is backed up, and maps close codes to the contract's close events.
 *
 * All time comes from the injected `Clock`; all I/O goes through the socket, whose adapter feeds
 * events back through the `socket*` methods. Users get connections from `connect` (client) or a
 * listener (server); they never construct this class.
 */
export class WsConnection implements Connection {
  readonly channels: readonly ChannelSpec[];
  readonly stats: WsConnectionStats;
  private currentLimits: ConnectionLimits;
  private readonly opts: ResolvedOptions;
  private readonly clock: ResolvedOptions['clock'];
  private readonly mstats = new MutableWsStats();
  private readonly emitter = new Emitter<ConnectionEventMap>();
  private readonly chans: ChannelState[];
  private readonly byName = new Map<string, ChannelState>();
  private readonly rtt = new RttEstimator();
  private readonly ledger = new SendLedger();
  private currentState: ConnectionState = 'connecting';
  private socketOpen: boolean;
  private socketGone = false;
  private helloSent = false;
  private pendingCount = 0;
  private pendingBytes = 0;
  private readonly connectingQueue: Array<{ ch: ChannelState; data: Uint8Array }> = [];
  private connectingBytes = 0;
  private lastHeard: number;
  private interruptedSince = -1;
  private lastPing = Number.NEGATIVE_INFINITY;
  private tickTimer: Timer | undefined;
  private pollTimer: Timer | undefined;
  private connectTimer: Timer | undefined;
  private graceTimer: Timer | undefined;
  private readonly createdAt: number;
  private readonly hello: Uint8Array;

  /**
   * @param socket The socket; for a client it may still be connecting (call {@link socketOpened}).
   * @param role `client` sends HELLO once the socket opens; `server` waits for it.
   * @param remoteAddress A printable peer address.
   * @param hooks Server side only: the listener's callbacks.
   */
  constructor(
    private readonly socket: WsSocket,
    readonly role: WsRole,
    readonly remoteAddress: string,
    options: WsConnectionOptions,
    private readonly hooks?: WsServerHooks,
  ) {
    this.channels = validateChannels(options.channels);
    this.opts = resolveOptions(options, this.channels);
    this.clock = this.opts.clock;
    this.currentLimits = Object.freeze({
      maxMessageBytes: this.opts.maxMessageBytes,
      maxUnreliableBytes: this.opts.maxUnreliableBytes,
    });
    this.stats = this.mstats;
    this.chans = channelStates(this.channels);
    for (const c of this.chans) this.byName.set(c.spec.name, c);
    this.socketOpen = role === 'server';
    this.hello = encodeHello({
      maxMessageBytes: this.opts.maxMessageBytes,
      maxUnreliableBytes: this.opts.maxUnreliableBytes,
      channels: this.channels,
    });
    this.createdAt = this.clock.now();
    this.lastHeard = this.createdAt;
    this.connectTimer = this.clock.setTimer(this.opts.timeouts.connectMs, () => this.onConnectTimeout());
  }

  get state(): ConnectionState {
    return this.currentState;
  }

  /** The socket's `bufferedAmount`: bytes accepted by the socket and not yet written to the network. */
  get bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  /** Size limits of `send`: after the handshake, the smaller of both ends' limits. */
  get limits(): ConnectionLimits {
    return this.currentLimits;
  }

  on<K extends keyof ConnectionEventMap>(type: K, handler: Handler<ConnectionEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  send(channel: string, data: Uint8Array): void {
    const ch = checkSend(this.currentState, this.byName, channel, data.length, this.currentLimits);
    if (this.currentState === 'connecting') {
      if (this.connectingBytes + data.length > this.opts.maxBufferedBytes) {
        throw new TransportError('limit', `more than ${this.opts.maxBufferedBytes} bytes queued before open`);
      }
      this.connectingQueue.push({ ch, data: data.slice() });
      this.connectingBytes += data.length;
      this.refreshQueueStats();
      return;
    }
    this.sendNow(ch, data);
  }

  close(reason = ''): void {
    if (this.currentState === 'closed') return;
    this.finish('local', reason, undefined, { code: WsCloseCode.normal, reason });
  }

  /** Reads the state through a call, so narrowing does not survive event handlers that close. */
  private isClosed(): boolean {
    return this.currentState === 'closed';
  }

  // ---- input from the socket adapter ----

  /** Client: the WebSocket opened; sends HELLO. */
  socketOpened(): void {
    if (this.currentState !== 'connecting' || this.role !== 'client' || this.helloSent) return;
    this.socketOpen = true;
    this.helloSent = true;
    this.lastHeard = this.clock.now();
    this.transmit(this.hello, 0, false);
  }

  /** A binary WebSocket message arrived. The core keeps views into `bytes` (the receiver owns them). */
  socketFrame(bytes: Uint8Array): void {
    if (this.currentState === 'closed') return;
    this.mstats.bytesReceived += bytes.length;
    this.mstats.packetsReceived++;
    this.heard();
    if (this.isClosed()) return; // a 'resumed' handler may have closed it
    const type = bytes.length > 0 ? bytes[0]! : -1;
    try {
      switch (type) {
        case FrameType.reliable:
          this.onReliable(bytes);
          return;
        case FrameType.unreliable:
          this.onUnreliable(bytes);
          return;
        case FrameType.ping:
          if (this.currentState !== 'open') throw new TransportError('protocol', 'PING before the handshake');
          this.transmit(encodePing(decodePingTime(bytes), FrameType.pong), 0, false);
          return;
        case FrameType.pong:
          this.onPong(decodePingTime(bytes));
          return;
        case FrameType.hello:
          this.onHello(bytes);
          return;
        case FrameType.welcome:
          this.onWelcome(bytes);
          return;
        default:
          throw new TransportError(
            'protocol',
            bytes.length === 0 ? 'empty frame' : `unknown frame type 0x${type.toString(16).padStart(2, '0')}`,
          );
      }
    } catch (e) {
      if (!(e instanceof TransportError)) throw e;
      this.fail(e, e.code === 'too-large' ? WsCloseCode.tooLarge : WsCloseCode.protocol);
    }
  }

  /** A text WebSocket message arrived: netplay-ws never sends text, so this is a protocol error. */
  socketText(): void {
    if (this.currentState === 'closed') return;
    this.fail(new TransportError('protocol', 'text frames are not part of netplay-ws'), WsCloseCode.protocol);
  }

  /** The socket reported an error (already mapped to a {@link TransportError} by the adapter). */
  socketError(error: TransportError): void {
    if (this.currentState === 'closed') return;
    const code =
      error.code === 'too-large'
        ? WsCloseCode.tooLarge
        : error.code === 'protocol'
          ? WsCloseCode.protocol
          : WsCloseCode.normal;
    this.fail(error, code);
  }

  /** The socket closed, with the peer's close code and reason (1006 when none arrived). */
  socketClosed(wsCode: number, reason: string): void {
    this.socketGone = true;
    this.socketOpen = false;
    this.graceTimer?.cancel();
    this.graceTimer = undefined;
    if (this.currentState === 'closed') return;
    const mapped = mapRemoteClose(wsCode, reason, this.currentState === 'open');
    const text = mapped.code === 'remote' || reason !== '' ? reason : (mapped.error?.message ?? '');
    this.finish(mapped.code, text, mapped.error);
  }

  // ---- handshake ----

  private onHello(bytes: Uint8Array): void {
    if (this.role !== 'server' || this.currentState !== 'connecting') {
      throw new TransportError('protocol', 'unexpected HELLO');
    }
    const hello = decodeHello(bytes);
    const refusal = helloRefusal(hello, this.channels);
    if (refusal !== undefined) {
      this.refuse(refusal);
      return;
    }
    this.agree(hello.maxMessageBytes, hello.maxUnreliableBytes);
    this.transmit(
      encodeWelcome({ maxMessageBytes: this.opts.maxMessageBytes, maxUnreliableBytes: this.opts.maxUnreliableBytes }),
      0,
      false,
    );
    this.becomeOpen();
    this.hooks?.accepted(this);
  }

  private onWelcome(bytes: Uint8Array): void {
    if (this.role !== 'client' || this.currentState !== 'connecting' || !this.helloSent) {
      throw new TransportError('protocol', 'unexpected WELCOME');
    }
    const welcome = decodeWelcome(bytes);
    if (welcome.version !== PROTOCOL_VERSION) {
      throw new TransportError('protocol', `server speaks netplay-ws version ${welcome.version}`);
    }
    this.agree(welcome.maxMessageBytes, welcome.maxUnreliableBytes);
    this.becomeOpen();
    this.emitter.emit('open', undefined);
    if (this.isClosed()) return;
    const queued = this.connectingQueue.splice(0);
    this.connectingBytes = 0;
    for (const { ch, data } of queued) {
      const max = ch.reliable ? this.currentLimits.maxMessageBytes : this.currentLimits.maxUnreliableBytes;
      if (data.length > max) {
        this.emitter.emit(
          'error',
          new TransportError('too-large', `a ${data.length}-byte message queued before open exceeds the agreed ${max}`),
        );
      } else {
        this.sendNow(ch, data);
      }
      if (this.isClosed()) return;
    }
    this.refreshQueueStats();
  }

  private agree(peerMax: number, peerMaxUnreliable: number): void {
    this.currentLimits = agreedLimits(this.opts, peerMax, peerMaxUnreliable);
  }

  private becomeOpen(): void {
    this.currentState = 'open';
    this.connectTimer?.cancel();
    this.connectTimer = undefined;
    this.lastHeard = this.clock.now();
    this.tick();
  }

  private refuse(reason: string): void {
    const error = new TransportError('refused', reason);
    this.finish('refused', reason, error, { code: WsCloseCode.refused, reason });
  }

  private onConnectTimeout(): void {
    this.connectTimer = undefined;
    if (this.currentState !== 'connecting') return;
    const error = new TransportError('timeout', `no handshake within ${this.opts.timeouts.connectMs} ms`);
    this.finish('timeout', error.message, error, {
      code: WsCloseCode.timeout,
      reason: 'handshake timeout',
      terminate: true,
    });
  }

  // ---- data ----

  private sendNow(ch: ChannelState, data: Uint8Array): void {
    if (ch.reliable) {
      const frame = encodeReliable(ch.index, data);
      if (this.socket.bufferedAmount + frame.length > this.opts.maxBufferedBytes) {
        throw new TransportError('limit', `the socket buffer would pass ${this.opts.maxBufferedBytes} bytes`);
      }
      this.transmit(frame, data.length, true);
      return;
    }
    const frame = encodeUnreliable(ch.index, ch.nextSeq, data);
    ch.nextSeq = (ch.nextSeq + 1) >>> 0;
    if (ch.pending) {
      // A newer message makes the held-back one stale.
      this.pendingCount--;
      this.pendingBytes -= ch.pending.length - UNRELIABLE_HEADER_BYTES;
      ch.pending = undefined;
      this.mstats.staleDropped++;
    }
    if (this.socket.bufferedAmount <= this.opts.highWaterBytes) {
      this.transmit(frame, data.length, true);
      return;
    }
    ch.pending = frame;
    this.pendingCount++;
    this.pendingBytes += data.length;
    this.refreshQueueStats();
    this.armPoll();
  }

  private transmit(frame: Uint8Array, payloadBytes: number, data: boolean): void {
    if (!this.socketOpen) return;
    this.socket.send(frame);
    this.mstats.bytesSent += frame.length;
    this.mstats.packetsSent++;
    this.ledger.push(frame.length, payloadBytes, data);
    this.ledger.update(this.socket.bufferedAmount);
    this.refreshQueueStats();
    if (this.ledger.length > 0) this.armPoll();
  }

  private armPoll(): void {
    if (this.pollTimer || this.currentState === 'closed') return;
    this.pollTimer = this.clock.setTimer(this.opts.pollMs, () => {
      this.pollTimer = undefined;
      this.poll();
    });
  }

  private poll(): void {
    if (this.currentState !== 'open') return;
    this.flushPending();
    this.ledger.update(this.socket.bufferedAmount);
    this.refreshQueueStats();
    if (this.ledger.length > 0 || this.pendingCount > 0) this.armPoll();
  }

  private flushPending(): void {
    if (this.pendingCount === 0) return;
    for (const ch of this.chans) {
      if (this.socket.bufferedAmount > this.opts.highWaterBytes) return;
      const frame = ch.pending;
      if (!frame) continue;
      ch.pending = undefined;
      this.pendingCount--;
      this.pendingBytes -= frame.length - UNRELIABLE_HEADER_BYTES;
      this.transmit(frame, frame.length - UNRELIABLE_HEADER_BYTES, true);
    }
  }

  private refreshQueueStats(): void {
    this.mstats.sendQueueLength = this.ledger.length + this.pendingCount + this.connectingQueue.length;
    this.mstats.sendQueueBytes = this.ledger.queuedBytes + this.pendingBytes + this.connectingBytes;
  }

  private channelAt(bytes: Uint8Array, reliable: boolean, headerBytes: number): ChannelState {
    if (this.currentState !== 'open') throw new TransportError('protocol', 'data before the handshake');
    if (bytes.length < headerBytes) throw new TransportError('protocol', `data frame of ${bytes.length} bytes`);
    const ch = this.chans[bytes[1]!];
    if (!ch || ch.reliable !== reliable) {
      throw new TransportError('protocol', `unknown ${reliable ? 'reliable' : 'unreliable'} channel index ${bytes[1]}`);
    }
    const max = reliable ? this.currentLimits.maxMessageBytes : this.currentLimits.maxUnreliableBytes;
    if (bytes.length - headerBytes > max) {
      throw new TransportError(
        'too-large',
        `received ${bytes.length - headerBytes} bytes on "${ch.spec.name}" (limit ${max})`,
      );
    }
    return ch;
  }

  private onReliable(bytes: Uint8Array): void {
    const ch = this.channelAt(bytes, true, RELIABLE_HEADER_BYTES);
    const data = new Uint8Array(
      bytes.buffer,
      bytes.byteOffset + RELIABLE_HEADER_BYTES,
      bytes.length - RELIABLE_HEADER_BYTES,
    );
    this.emitter.emit('message', { channel: ch.spec.name, data });
  }

  private onUnreliable(bytes: Uint8Array): void {
    const ch = this.channelAt(bytes, false, UNRELIABLE_HEADER_BYTES);
    const seq = unreliableSeq(bytes);
    if (ch.received && !seqNewer(seq, ch.lastSeq)) {
      this.mstats.staleReceived++;
      return;
    }
    ch.received = true;
    ch.lastSeq = seq;
    const data = new Uint8Array(
      bytes.buffer,
      bytes.byteOffset + UNRELIABLE_HEADER_BYTES,
      bytes.length - UNRELIABLE_HEADER_BYTES,
    );
    this.emitter.emit('message', { channel: ch.spec.name, data });
  }

  // ---- liveness and RTT ----

  private onPong(sentAt: number): void {
    const rtt = this.clock.now() - sentAt;
    // PONGs echo our own clock readings: anything from before this connection existed is forged.
    if (!(rtt >= 0) || sentAt < this.createdAt) return;
    this.rtt.sample(rtt);
    this.mstats.rttMs = this.rtt.srtt;
    this.mstats.rttVarMs = this.rtt.rttvar;
    this.mstats.rttSamples = this.rtt.samples;
  }

  private heard(): void {
    const now = this.clock.now();
    this.lastHeard = now;
    if (this.interruptedSince >= 0) {
      const interruptedMs = now - this.interruptedSince;
      this.interruptedSince = -1;
      this.emitter.emit('resumed', { interruptedMs });
    }
  }

  private tick(): void {
    this.tickTimer = undefined;
    if (this.currentState !== 'open') return;
    const now = this.clock.now();
    const { interruptMs, disconnectMs } = this.opts.timeouts;
    const silent = now - this.lastHeard;
    if (silent >= disconnectMs) {
      const error = new TransportError('timeout', `the peer was silent for ${Math.round(silent)} ms`);
      this.finish('timeout', error.message, error, {
        code: WsCloseCode.timeout,
        reason: `no traffic for ${Math.round(silent)} ms`,
      });
      return;
    }
    if (silent >= interruptMs && this.interruptedSince < 0) {
      this.interruptedSince = this.lastHeard + interruptMs;
      this.emitter.emit('interrupted', { silentMs: silent });
      if (this.isClosed()) return;
    }
    if (now - this.lastPing >= this.opts.pingIntervalMs) {
      this.lastPing = now;
      this.transmit(encodePing(now), 0, false);
    }
    let next = this.lastPing + this.opts.pingIntervalMs;
    if (this.interruptedSince < 0) next = Math.min(next, this.lastHeard + interruptMs);
    next = Math.min(next, this.lastHeard + disconnectMs);
    this.tickTimer = this.clock.setTimer(Math.max(1, next - now), () => this.tick());
  }

  // ---- closing ----

  /** @internal */ fail(error: TransportError, wsCode: number): void {
    if (this.currentState === 'closed') return;
    const opened = this.currentState === 'open';
    const code: CloseCode = !opened && error.code === 'refused' ? 'refused' : 'error';
    this.finish(code, error.message, error, { code: wsCode, reason: error.message });
  }

  private closeSocket(wsCode: number, reason: string): void {
    if (this.socketGone) return;
    this.socketOpen = false;
    try {
      this.socket.close(wsCode, truncateCloseReason(reason));
    } catch {
      this.socket.terminate();
    }
    if (!this.graceTimer && !this.socketGone) {
      this.graceTimer = this.clock.setTimer(this.opts.closeGraceMs, () => {
        this.graceTimer = undefined;
        if (!this.socketGone) this.socket.terminate();
      });
    }
  }

  /**
   * Ends the connection: state `closed`, timers and queues dropped, then (with `ws`) the socket is
   * closed with that WebSocket code and reason, and last the listener hooks and the user events run.
   * The state changes first, so a socket that reports its close synchronously finds it closed.
   */
  private finish(
    code: CloseCode,
    reason: string,
    error: TransportError | undefined,
    ws?: { code: number; reason: string; terminate?: boolean },
  ): void {
    if (this.currentState === 'closed') return;
    const wasOpen = this.currentState === 'open';
    this.currentState = 'closed';
    if (ws) {
      this.closeSocket(ws.code, ws.reason);
      if (ws.terminate && !this.socketGone) this.socket.terminate();
    }
    this.socketOpen = false;
    for (const t of [this.tickTimer, this.pollTimer, this.connectTimer]) t?.cancel();
    this.tickTimer = this.pollTimer = this.connectTimer = undefined;
    for (const ch of this.chans) ch.pending = undefined;
    this.pendingCount = this.pendingBytes = 0;
    this.connectingQueue.length = 0;
    this.connectingBytes = 0;
    this.mstats.sendQueueLength = 0;
    this.mstats.sendQueueBytes = 0;
    if (this.hooks) {
      if (!wasOpen && error) this.hooks.rejected(this, error);
      this.hooks.closed(this);
    }
    try {
      // As in the contract's README: `error` precedes a close with code `error`; timeouts and
      // refusals are reported through `close` (with `error` set) only.
      if (error && code === 'error') this.emitter.emit('error', error);
    } finally {
      try {
        this.emitter.emit('close', { code, reason, ...(error ? { error } : {}) });
      } finally {
        this.emitter.clear();
      }
    }
  }
}

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
  channelSignature,
  checkSend,
  decodeCloseReason,
  Emitter,
  encodeCloseReason,
  RateBudget,
  TransportError,
  validateChannels,
} from '@netplay/transport';
import { type Chan, MutableStats, newChan, UNOPENED, type WebRtcConnectionStats } from './channel-state.js';
import { openNegotiatedChannel } from './data-channel.js';
import { Liveness } from './liveness.js';
import { Negotiation } from './negotiation.js';
import { type ResolvedOptions, resolveOptions, type WebRtcConnectionOptions } from './options.js';
import { Outbox } from './outbox.js';
import { allReliableReceived, type Early, unreliablePayload } from './received-frames.js';
import { RemoteAddress, type RemoteAddressSource } from './remote-address.js';
import type { PeerSignal, RtcDataChannelLike, RtcPeerConnectionLike } from './rtc.js';
import {
  bytesOf,
  CloseKind,
  type CloseKindValue,
  CONTROL_CHANNEL_ID,
  ControlType,
  decodeClose,
  decodeHello,
  decodePingTime,
  encodeClose,
  encodeHello,
  encodePing,
  FIRST_DATA_CHANNEL_ID,
  PING_CHANNEL_ID,
  PROTOCOL_VERSION,
  UNRELIABLE_HEADER_BYTES,
} from './wire.js';

export type { WebRtcConnectionStats };

/** Which end a {@link WebRtcConnection} is: the `client` offers, the `server` answers. */
export type WebRtcRole = 'client' | 'server';

/** Callbacks a listener receives from its server-side connections. */
export interface WebRtcServerHooks {
  /** The connection completed its handshake and is open. */
  accepted(conn: WebRtcConnection): void;
  /** The connection was refused during its handshake (`error` says why). */
  rejected(conn: WebRtcConnection, error: TransportError): void;
  /** The connection closed. */
  closed(conn: WebRtcConnection): void;
}

/**
 * One end of a netplay-webrtc connection over an `RTCPeerConnection`: negotiated data channels
 * (control, ping, then one per channel), a HELLO/WELCOME handshake checking the channel list,
 * fragmentation of large reliable messages, sequenced unreliable channels, PING/PONG for RTT,
 * loss and liveness, and CLOSE frames that carry reasons. Signals (offer, answer, candidates) go
 * out through `signal` and come in through {@link handleSignal}. Created by `connectWebRtc` and the
 * listener; users do not construct it.
 */
export class WebRtcConnection implements Connection {
  readonly channels: readonly ChannelSpec[];
  readonly stats: WebRtcConnectionStats;
  private readonly opts: ResolvedOptions;
  private readonly mstats = new MutableStats();
  private readonly emitter = new Emitter<ConnectionEventMap>();
  private readonly chans: Chan[];
  private readonly byName = new Map<string, Chan>();
  private control: RtcDataChannelLike = UNOPENED;
  private pingChannel: RtcDataChannelLike = UNOPENED;
  private readonly budget: RateBudget | undefined;
  private currentLimits: ConnectionLimits;
  private readonly outbox: Outbox;
  private currentState: ConnectionState = 'connecting';
  private readonly early: Early[] = [];
  private earlyBytes = 0;
  private readonly negotiation: Negotiation;
  private helloSent = false;
  /** Every data channel reported open (see `onChannelOpen`). */
  private allOpen = false;
  /** The server's HELLO, received before its own channels were all flagged open. */
  private pendingHello: ReturnType<typeof decodeHello> | undefined;
  private readonly liveness: Liveness;
  private connectTimer: Timer | undefined;
  private drainTimer: Timer | undefined;
  private remoteClose: { kind: CloseKindValue; reason: string; sent: readonly number[] } | undefined;
  private readonly address: RemoteAddress;

  constructor(
    private readonly pc: RtcPeerConnectionLike,
    /** `client` (made by `connectWebRtc`: creates the offer, sends HELLO) or `server` (made by a `WebRtcListener`: answers, replies WELCOME). Fixed for the connection's life. */
    readonly role: WebRtcRole,
    /** The address until the selected candidate pair is known, and the fallback: `webrtc:<peer>`. */
    fallbackAddress: string,
    options: WebRtcConnectionOptions,
    private readonly signal: (s: PeerSignal) => void,
    private readonly hooks?: WebRtcServerHooks,
    /** The IP the signaling server saw the peer's socket come from (stamped on its offer). */
    signaledAddress?: string,
  ) {
    this.address = new RemoteAddress(fallbackAddress, signaledAddress);
    this.channels = validateChannels(options.channels);
    this.opts = resolveOptions(options, this.channels);
    this.stats = this.mstats;
    this.currentLimits = Object.freeze({
      maxMessageBytes: this.opts.maxMessageBytes,
      maxUnreliableBytes: this.opts.maxUnreliableBytes,
    });
    const now = this.opts.clock.now();
    this.liveness = new Liveness(
      this.opts.clock,
      this.opts.timeouts,
      this.opts.pingIntervalMs,
      this.mstats,
      {
        ping: (t) => this.transmit(this.pingChannel, encodePing(ControlType.ping, t)),
        interrupted: (silentMs) => this.emitter.emit('interrupted', { silentMs }),
        resumed: (interruptedMs) => this.emitter.emit('resumed', { interruptedMs }),
        timedOut: (silent) => {
          const error = new TransportError('timeout', `the peer was silent for ${Math.round(silent)} ms`);
          this.finish('timeout', error.message, error, CloseKind.timeout);
        },
        open: () => this.currentState === 'open',
      },
      now,
    );
    this.budget = this.opts.rateLimits === false ? undefined : new RateBudget(this.opts.rateLimits, now);
    this.chans = this.channels.map((spec) => newChan(spec, this.opts.maxMessageBytes));
    for (const c of this.chans) this.byName.set(c.spec.name, c);
    this.outbox = new Outbox(this.chans, this.opts, this.mstats, {
      fail: (e) => this.fail(e),
      open: () => this.currentState === 'open',
    });
    // The offerer creates its data channels now (the offer must describe them); the answerer
    // once the offer is applied: node-datachannel would otherwise make an offer of its own.
    if (role === 'client') this.createChannels();
    this.negotiation = new Negotiation(pc, role, {
      signal: (sig) => this.signal(sig),
      fail: (e) => this.fail(e),
      closed: () => this.isClosed(),
      offerApplied: () => this.createChannels(),
    });
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === 'failed')
        this.fail(new TransportError('io', 'the peer connection failed (ICE or DTLS)'));
    };
    this.connectTimer = this.opts.clock.setTimer(this.opts.timeouts.connectMs, () => this.onConnectTimeout());
    if (role === 'client') void this.negotiation.offer();
  }

  get state(): ConnectionState {
    return this.currentState;
  }

  /** Size limits of `send`: after the handshake, the smaller of both ends' limits and the SCTP limit. */
  get limits(): ConnectionLimits {
    return this.currentLimits;
  }

  /**
   * Where the peer is, for per-address limits: the selected ICE pair's remote `ip:port`, else the
   * signaling server's IP, else `webrtc:<peer>` (README, "Remote address"). Final from `open` on.
   */
  get remoteAddress(): string {
    return this.address.address;
  }

  /** Which rule gave {@link remoteAddress}. */
  get remoteAddressSource(): RemoteAddressSource {
    return this.address.source;
  }

  /** @internal The IP the signaling server stamped on the peer's answer (client side). */
  stampAddress(ip: string): void {
    this.address.stamp(ip);
  }

  /** The underlying peer connection (e.g. for `getStats()`). */
  get peerConnection(): RtcPeerConnectionLike {
    return this.pc;
  }

  on<K extends keyof ConnectionEventMap>(type: K, handler: Handler<ConnectionEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  send(channel: string, data: Uint8Array): void {
    const chan = checkSend(this.currentState, this.byName, channel, data.length, this.currentLimits);
    if (this.currentState === 'connecting') {
      this.outbox.queue(chan, data);
      return;
    }
    this.outbox.send(chan, data);
  }

  close(reason = ''): void {
    this.finish('local', reason, undefined, CloseKind.normal);
  }

  /** A signal from the peer (through the signaling server). */
  handleSignal(s: PeerSignal): void {
    if (this.currentState !== 'closed') this.negotiation.handle(s);
  }

  /** The signaling path to the peer is gone: fatal only while connecting. */
  signalingLost(reason: string): void {
    if (this.currentState === 'connecting') this.fail(new TransportError('io', `signaling lost: ${reason}`));
  }

  // ---- negotiation ----

  /** Creates the negotiated data channels (ids 0, 1, then 2 + i per channel) and wires them. */
  private createChannels(): void {
    this.control = openNegotiatedChannel(this.pc, 'np-control', CONTROL_CHANNEL_ID, true);
    this.pingChannel = openNegotiatedChannel(this.pc, 'np-ping', PING_CHANNEL_ID, false);
    this.chans.forEach((c, i) => {
      c.dc = openNegotiatedChannel(this.pc, `np-${i}`, FIRST_DATA_CHANNEL_ID + i, c.reliable);
      c.dc.onmessage = (ev) => this.onData(c, ev.data);
    });
    // Every channel must be open before the handshake goes on: a browser or node-datachannel may
    // dispatch one channel's `open` after messages of another, and a channel not flagged open
    // cannot send (what went out on it would be lost).
    for (const dc of this.allChannels()) dc.onopen = () => this.onChannelOpen();
    this.control.onclose = () => this.onChannelGone('the control data channel closed');
    this.control.onmessage = (ev) => this.onControl(ev.data);
    this.pingChannel.onmessage = (ev) => this.onPingFrame(ev.data);
  }

  /** Control, ping, then the data channels. */
  private allChannels(): RtcDataChannelLike[] {
    return [this.control, this.pingChannel, ...this.chans.map((c) => c.dc)];
  }

  /** One data channel opened: once all are, the handshake goes on (see {@link onAllOpen}). */
  private onChannelOpen(): void {
    if (this.allOpen || this.currentState !== 'connecting') return;
    for (const dc of this.allChannels()) if (dc.readyState !== 'open') return;
    this.allOpen = true;
    this.onAllOpen();
  }

  private onAllOpen(): void {
    const sctpMax = this.pc.sctp?.maxMessageSize;
    const max = typeof sctpMax === 'number' && sctpMax > 0 ? sctpMax : 65536;
    this.outbox.chunkBytes = Math.max(1024, Math.min(max, 64 << 10));
    // ICE, DTLS and SCTP are up: the selected pair is known. Both ends open only once it is read.
    this.resolveAddress();
    if (this.role === 'client') this.address.whenResolved(() => this.sendHello());
    else if (this.pendingHello !== undefined) this.onHelloReady(this.pendingHello);
  }

  private resolveAddress(): void {
    this.address.resolve(this.pc.getStats ? () => this.pc.getStats!() : undefined);
  }

  private sendHello(): void {
    if (this.currentState !== 'connecting' || this.helloSent) return;
    this.helloSent = true;
    this.transmitControl(
      encodeHello(ControlType.hello, {
        maxMessageBytes: this.opts.maxMessageBytes,
        maxUnreliableBytes: this.opts.maxUnreliableBytes,
        signature: channelSignature(this.channels),
      }),
    );
  }

  private agree(peerMax: number, peerMaxUnreliable: number): void {
    this.currentLimits = Object.freeze({
      maxMessageBytes: Math.min(this.opts.maxMessageBytes, peerMax),
      maxUnreliableBytes: Math.min(
        this.opts.maxUnreliableBytes,
        peerMaxUnreliable,
        this.outbox.chunkBytes - UNRELIABLE_HEADER_BYTES,
      ),
    });
  }

  private onHello(bytes: Uint8Array): void {
    if (this.role !== 'server' || this.currentState !== 'connecting' || this.helloSent)
      throw new TransportError('protocol', 'unexpected HELLO');
    this.helloSent = true; // server: HELLO received
    const hello = decodeHello(bytes);
    if (hello.version !== PROTOCOL_VERSION) {
      this.refuse(`unsupported netplay-webrtc version ${hello.version} (this end speaks ${PROTOCOL_VERSION})`);
      return;
    }
    if (hello.signature !== channelSignature(this.channels)) {
      this.refuse(`channel mismatch: server has ${channelSignature(this.channels)}`);
      return;
    }
    // The client's channels are all open; ours may not be flagged yet (see `onChannelOpen`).
    if (this.allOpen) this.onHelloReady(hello);
    else this.pendingHello = hello;
  }

  private onHelloReady(hello: ReturnType<typeof decodeHello>): void {
    this.pendingHello = undefined;
    this.resolveAddress();
    this.address.whenResolved(() => {
      if (this.currentState === 'connecting') this.welcome(hello);
    });
  }

  private welcome(hello: ReturnType<typeof decodeHello>): void {
    this.agree(hello.maxMessageBytes, hello.maxUnreliableBytes);
    this.transmitControl(
      encodeHello(ControlType.welcome, {
        maxMessageBytes: this.opts.maxMessageBytes,
        maxUnreliableBytes: this.opts.maxUnreliableBytes,
        signature: '',
      }),
    );
    this.becomeOpen();
    this.hooks?.accepted(this);
  }

  private onWelcome(bytes: Uint8Array): void {
    if (this.role !== 'client' || this.currentState !== 'connecting' || !this.helloSent) {
      throw new TransportError('protocol', 'unexpected WELCOME');
    }
    const welcome = decodeHello(bytes);
    if (welcome.version !== PROTOCOL_VERSION) {
      throw new TransportError('protocol', `the peer speaks netplay-webrtc version ${welcome.version}`);
    }
    this.agree(welcome.maxMessageBytes, welcome.maxUnreliableBytes);
    this.becomeOpen();
    // What was queued before open goes out first, so a message sent from an `open` handler
    // follows it (in order on its channel).
    this.outbox.flushQueued(
      this.currentLimits,
      (e) => this.emitter.emit('error', e),
      () => this.isClosed(),
    );
    if (this.isClosed()) return;
    this.emitter.emit('open', undefined);
    if (this.isClosed()) return;
    for (const e of this.early.splice(0)) {
      this.deliver(e.chan, e.bytes);
      if (this.isClosed()) return;
    }
    this.earlyBytes = 0;
  }

  private becomeOpen(): void {
    this.currentState = 'open';
    this.connectTimer?.cancel();
    this.connectTimer = undefined;
    this.liveness.start();
  }

  private refuse(reason: string): void {
    this.finish('refused', reason, new TransportError('refused', reason), CloseKind.refused);
  }

  private onConnectTimeout(): void {
    this.connectTimer = undefined;
    if (this.currentState !== 'connecting') return;
    const error = new TransportError('timeout', `no connection within ${this.opts.timeouts.connectMs} ms`);
    this.finish('timeout', error.message, error, CloseKind.timeout);
  }

  private isClosed(): boolean {
    return this.currentState === 'closed';
  }

  // ---- receiving ----

  /** Counts, charges and checks one received data channel message; undefined when it must be ignored. */
  private receive(data: unknown): Uint8Array | undefined {
    if (this.currentState === 'closed') return undefined;
    const bytes = bytesOf(data);
    const size = bytes ? bytes.length : typeof data === 'string' ? data.length : 0;
    this.mstats.bytesReceived += size;
    this.mstats.packetsReceived++;
    if (this.budget && !this.budget.take(size, this.opts.clock.now())) {
      const reason = this.budget.describe();
      this.finish('error', reason, new TransportError('flood', reason), CloseKind.normal);
      return undefined;
    }
    this.liveness.heard();
    if (this.isClosed()) return undefined;
    if (!bytes) {
      this.fail(new TransportError('protocol', 'text messages are not part of netplay-webrtc'));
      return undefined;
    }
    return bytes;
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      if (!(e instanceof TransportError)) throw e;
      this.fail(e);
    }
  }

  private onControl(data: unknown): void {
    const bytes = this.receive(data);
    if (!bytes) return;
    this.guard(() => {
      switch (bytes[0]) {
        case ControlType.hello:
          this.onHello(bytes);
          return;
        case ControlType.welcome:
          this.onWelcome(bytes);
          return;
        case ControlType.close:
          this.onClose(bytes);
          return;
        default:
          throw new TransportError('protocol', `unknown control frame type ${bytes[0] ?? '(empty)'}`);
      }
    });
  }

  private onPingFrame(data: unknown): void {
    const bytes = this.receive(data);
    if (!bytes) return;
    this.guard(() => {
      const time = decodePingTime(bytes);
      if (bytes[0] === ControlType.ping) {
        if (this.currentState === 'open') this.transmit(this.pingChannel, encodePing(ControlType.pong, time));
      } else if (bytes[0] === ControlType.pong) {
        this.liveness.pong(time);
      } else {
        throw new TransportError('protocol', `unknown ping frame type ${bytes[0]}`);
      }
    });
  }

  private onData(chan: Chan, data: unknown): void {
    const bytes = this.receive(data);
    if (!bytes) return;
    if (this.currentState === 'connecting') {
      // Only the client can see data before open: the server's first messages may overtake WELCOME.
      if (this.role !== 'client' || !this.helloSent || this.earlyBytes + bytes.length > this.opts.maxBufferedBytes) {
        this.fail(new TransportError('protocol', 'data before the handshake'));
        return;
      }
      this.early.push({ chan, bytes: bytes.slice() });
      this.earlyBytes += bytes.length;
      return;
    }
    this.guard(() => this.deliver(chan, bytes));
  }

  private deliver(chan: Chan, bytes: Uint8Array): void {
    if (chan.reliable) {
      const message = chan.reassembler!.push(bytes);
      if (!message) return;
      chan.received++;
      this.emitter.emit('message', { channel: chan.spec.name, data: message });
      if (this.remoteClose) this.maybeFinishRemoteClose();
      return;
    }
    const data = unreliablePayload(chan, bytes, this.currentLimits.maxUnreliableBytes, this.mstats);
    if (data !== undefined) this.emitter.emit('message', { channel: chan.spec.name, data });
  }

  private onClose(bytes: Uint8Array): void {
    const frame = decodeClose(bytes);
    const reason = decodeCloseReason(frame.reason);
    if (this.currentState === 'connecting') {
      const code: CloseCode = frame.kind === CloseKind.timeout ? 'timeout' : 'refused';
      this.finish(
        code,
        reason,
        new TransportError(code === 'timeout' ? 'timeout' : 'refused', reason || 'the peer refused'),
      );
      return;
    }
    this.remoteClose = { kind: frame.kind, reason, sent: frame.sent };
    this.maybeFinishRemoteClose();
    if (!this.isClosed() && !this.drainTimer) {
      this.drainTimer = this.opts.clock.setTimer(this.opts.closeGraceMs, () => {
        this.drainTimer = undefined;
        this.finishRemoteClose();
      });
    }
  }

  private maybeFinishRemoteClose(): void {
    if (this.remoteClose && allReliableReceived(this.chans, this.remoteClose.sent)) this.finishRemoteClose();
  }

  private finishRemoteClose(): void {
    const rc = this.remoteClose;
    if (!rc || this.isClosed()) return;
    if (rc.kind === CloseKind.timeout) {
      this.finish('timeout', rc.reason, new TransportError('timeout', rc.reason || 'the peer timed out'));
    } else {
      this.finish('remote', rc.reason, undefined);
    }
  }

  private onChannelGone(why: string): void {
    if (this.currentState === 'closed') return;
    if (this.remoteClose) {
      this.finishRemoteClose();
      return;
    }
    this.fail(new TransportError('io', why));
  }

  // ---- sending ----

  private transmit(dc: RtcDataChannelLike, frame: Uint8Array): boolean {
    return this.outbox.transmit(dc, frame);
  }

  private transmitControl(frame: Uint8Array): void {
    this.transmit(this.control, frame);
  }

  // ---- closing ----

  /** Ends the connection because of `error` (code `refused` before open for a refusal, else `error`). */
  fail(error: TransportError): void {
    if (this.currentState === 'closed') return;
    const code: CloseCode = this.currentState !== 'open' && error.code === 'refused' ? 'refused' : 'error';
    this.finish(code, error.message, error, error.code === 'io' ? undefined : CloseKind.normal);
  }

  /**
   * State `closed`, timers and queues dropped; with `notify`, a CLOSE frame (with the count of
   * reliable messages sent on each channel) goes to the peer and the peer connection lingers until
   * the peer closes it or `closeGraceMs` pass. Then the listener hooks and the user events run.
   */
  private finish(code: CloseCode, reason: string, error: TransportError | undefined, notify?: CloseKindValue): void {
    if (this.currentState === 'closed') return;
    const wasOpen = this.currentState === 'open';
    this.currentState = 'closed';
    this.liveness.stop();
    for (const t of [this.connectTimer, this.drainTimer]) t?.cancel();
    this.connectTimer = this.drainTimer = undefined;
    this.outbox.clear();
    this.early.length = 0;
    if (notify !== undefined && this.control.readyState === 'open') {
      const sent = this.chans.filter((c) => c.reliable).map((c) => c.sent);
      this.transmit(this.control, encodeClose({ kind: notify, sent, reason: encodeCloseReason(reason) }));
      this.linger();
    } else {
      this.shutdown();
    }
    if (this.hooks) {
      if (!wasOpen && error) this.hooks.rejected(this, error);
      this.hooks.closed(this);
    }
    try {
      if (error && code === 'error') this.emitter.emit('error', error);
    } finally {
      try {
        this.emitter.emit('close', { code, reason, ...(error ? { error } : {}) });
      } finally {
        this.emitter.clear();
      }
    }
  }

  /** Keeps the peer connection until the peer closes it (the control channel closes) or the grace ends. */
  private linger(): void {
    const timer = this.opts.clock.setTimer(this.opts.closeGraceMs, () => this.shutdown());
    this.control.onclose = () => {
      timer.cancel();
      this.shutdown();
    };
    for (const dc of this.allChannels()) dc.onmessage = null;
  }

  private shutdown(): void {
    this.control.onclose = null;
    this.pc.onicecandidate = null;
    this.pc.onconnectionstatechange = null;
    for (const dc of this.allChannels()) {
      dc.onmessage = null;
      dc.onopen = null;
    }
    try {
      this.pc.close();
    } catch {
      // Already closed.
    }
  }
}

import type {
  ChannelSpec,
  CloseCode,
  Connection,
  ConnectionEventMap,
  ConnectionLimits,
  ConnectionState,
  ConnectionStats,
  Handler,
  Timer,
  Unsubscribe,
} from '@netplay/transport';
import {
  channelSignature,
  decodeCloseReason,
  Emitter,
  encodeCloseReason,
  MutableConnectionStats,
  RateBudget,
  RttEstimator,
  TransportError,
  validateChannels,
} from '@netplay/transport';
import { type ResolvedOptions, resolveOptions, type WebRtcConnectionOptions } from './options.js';
import type { PeerSignal, RtcDataChannelLike, RtcPeerConnectionLike } from './rtc.js';
import { SendLedger } from './send-ledger.js';
import {
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
  encodeReliable,
  encodeUnreliable,
  FIRST_DATA_CHANNEL_ID,
  PING_BYTES,
  PING_CHANNEL_ID,
  PROTOCOL_VERSION,
  Reassembler,
  seqNewer,
  UNRELIABLE_HEADER_BYTES,
} from './wire.js';

/** Stands in for a data channel not created yet (the answerer's, before the offer). */
const UNOPENED: RtcDataChannelLike = {
  readyState: 'closed',
  bufferedAmount: 0,
  binaryType: 'arraybuffer',
  onopen: null,
  onclose: null,
  onerror: null,
  onmessage: null,
  send() {},
  close() {},
};

/** An SDP without its `a=candidate` and `a=end-of-candidates` lines (they are trickled instead). */
function withoutCandidates(sdp: string): string {
  return sdp
    .split(/\r?\n/)
    .filter((line) => !line.startsWith('a=candidate') && !line.startsWith('a=end-of-candidates'))
    .join('\r\n');
}

/** {@link ConnectionStats} plus counters specific to netplay-webrtc. */
export interface WebRtcConnectionStats extends ConnectionStats {
  /** Unreliable messages replaced by a newer one before sending (backpressure). */
  readonly staleDropped: number;
  /** Unreliable messages received that were not newer than the last delivered one (dropped). */
  readonly staleReceived: number;
  /** PINGs sent and PONGs received (the loss estimate comes from them). */
  readonly pingsSent: number;
  readonly pongsReceived: number;
}

class MutableStats extends MutableConnectionStats implements WebRtcConnectionStats {
  staleDropped = 0;
  staleReceived = 0;
  pingsSent = 0;
  pongsReceived = 0;
}

/** Which end a {@link WebRtcConnection} is: the `client` offers, the `server` answers. */
export type WebRtcRole = 'client' | 'server';

/** Callbacks a listener receives from its server-side connections. */
export interface WebRtcServerHooks {
  accepted(conn: WebRtcConnection): void;
  rejected(conn: WebRtcConnection, error: TransportError): void;
  closed(conn: WebRtcConnection): void;
}

interface Chan {
  readonly spec: ChannelSpec;
  readonly reliable: boolean;
  dc: RtcDataChannelLike;
  /** Reliable: reassembly of fragments. */
  readonly reassembler: Reassembler | undefined;
  /** Reliable: messages sent and received (for the CLOSE frame's counts). */
  sent: number;
  received: number;
  readonly ledger: SendLedger;
  /** Unreliable. */
  nextSeq: number;
  pending: Uint8Array | undefined;
  got: boolean;
  lastSeq: number;
}

/** Data received on the client before WELCOME (another stream may overtake it), delivered at open. */
interface Early {
  readonly chan: Chan;
  readonly bytes: Uint8Array;
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
  private readonly rtt = new RttEstimator();
  private readonly budget: RateBudget | undefined;
  private currentLimits: ConnectionLimits;
  private chunkBytes = 16 << 10;
  private currentState: ConnectionState = 'connecting';
  private readonly queued: Array<{ chan: Chan; data: Uint8Array }> = [];
  private queuedBytes = 0;
  private readonly early: Early[] = [];
  private earlyBytes = 0;
  private pendingCount = 0;
  private pendingBytes = 0;
  private remoteDescriptionSet = false;
  private remoteOffered = false;
  private readonly remoteCandidates: PeerSignal[] = [];
  private readonly localCandidates: PeerSignal[] = [];
  private helloSent = false;
  private lastHeard: number;
  private interruptedSince = -1;
  private lastPing = Number.NEGATIVE_INFINITY;
  private pingOutstanding = false;
  private readonly pingFrame = new Uint8Array(PING_BYTES);
  private readonly createdAt: number;
  private tickTimer: Timer | undefined;
  private pollTimer: Timer | undefined;
  private connectTimer: Timer | undefined;
  private drainTimer: Timer | undefined;
  private remoteClose: { kind: CloseKindValue; reason: string; sent: readonly number[] } | undefined;

  constructor(
    private readonly pc: RtcPeerConnectionLike,
    readonly role: WebRtcRole,
    /** The peer's name in the signaling room (plus `webrtc:` prefix). */
    readonly remoteAddress: string,
    options: WebRtcConnectionOptions,
    private readonly signal: (s: PeerSignal) => void,
    private readonly hooks?: WebRtcServerHooks,
  ) {
    this.channels = validateChannels(options.channels);
    this.opts = resolveOptions(options, this.channels);
    this.stats = this.mstats;
    this.currentLimits = Object.freeze({
      maxMessageBytes: this.opts.maxMessageBytes,
      maxUnreliableBytes: this.opts.maxUnreliableBytes,
    });
    const now = this.opts.clock.now();
    this.createdAt = now;
    this.lastHeard = now;
    this.budget = this.opts.rateLimits === false ? undefined : new RateBudget(this.opts.rateLimits, now);
    this.chans = this.channels.map((spec) => {
      const reliable = spec.kind === 'reliable';
      return {
        spec,
        reliable,
        dc: UNOPENED,
        reassembler: reliable ? new Reassembler(this.opts.maxMessageBytes) : undefined,
        sent: 0,
        received: 0,
        ledger: new SendLedger(),
        nextSeq: 0,
        pending: undefined,
        got: false,
        lastSeq: 0,
      };
    });
    for (const c of this.chans) this.byName.set(c.spec.name, c);
    // The offerer creates its data channels now (the offer must describe them); the answerer
    // once the offer is applied: node-datachannel would otherwise make an offer of its own.
    if (role === 'client') this.createChannels();
    pc.onicecandidate = (ev) => {
      const c = ev.candidate;
      if (!c?.candidate || this.currentState === 'closed') return;
      const s: PeerSignal = {
        kind: 'candidate',
        candidate: c.candidate,
        sdpMid: c.sdpMid ?? null,
        sdpMLineIndex: c.sdpMLineIndex ?? null,
      };
      // The offerer keeps its candidates until it has the answer: a peer that could reach it
      // earlier would finish ICE before the offerer knows the answer's DTLS fingerprint
      // (node-datachannel then fails the DTLS handshake).
      if (this.role === 'client' && !this.remoteDescriptionSet) this.localCandidates.push(s);
      else this.signal(s);
    };
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === 'failed')
        this.fail(new TransportError('io', 'the peer connection failed (ICE or DTLS)'));
    };
    this.connectTimer = this.opts.clock.setTimer(this.opts.timeouts.connectMs, () => this.onConnectTimeout());
    if (role === 'client') void this.offer();
  }

  get state(): ConnectionState {
    return this.currentState;
  }

  /** Size limits of `send`: after the handshake, the smaller of both ends' limits and the SCTP limit. */
  get limits(): ConnectionLimits {
    return this.currentLimits;
  }

  /** The underlying peer connection (e.g. for `getStats()`). */
  get peerConnection(): RtcPeerConnectionLike {
    return this.pc;
  }

  on<K extends keyof ConnectionEventMap>(type: K, handler: Handler<ConnectionEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  send(channel: string, data: Uint8Array): void {
    if (this.currentState === 'closed') throw new TransportError('closed', 'the connection is closed');
    const chan = this.byName.get(channel);
    if (!chan) throw new TransportError('unknown-channel', `no channel named "${channel}"`);
    const max = chan.reliable ? this.currentLimits.maxMessageBytes : this.currentLimits.maxUnreliableBytes;
    if (data.length > max) {
      throw new TransportError('too-large', `${data.length} bytes exceed the ${chan.spec.kind} limit of ${max}`);
    }
    if (this.currentState === 'connecting') {
      if (this.queuedBytes + data.length > this.opts.maxBufferedBytes) {
        throw new TransportError('limit', `more than ${this.opts.maxBufferedBytes} bytes queued before open`);
      }
      this.queued.push({ chan, data: data.slice() });
      this.queuedBytes += data.length;
      this.refreshQueueStats();
      return;
    }
    this.sendNow(chan, data);
  }

  close(reason = ''): void {
    this.finish('local', reason, undefined, CloseKind.normal);
  }

  /** A signal from the peer (through the signaling server). */
  handleSignal(s: PeerSignal): void {
    if (this.currentState === 'closed') return;
    if (s.kind === 'candidate') {
      if (!this.remoteDescriptionSet) {
        if (this.remoteCandidates.length < 64) this.remoteCandidates.push(s);
        return;
      }
      this.pc
        .addIceCandidate({ candidate: s.candidate, sdpMid: s.sdpMid, sdpMLineIndex: s.sdpMLineIndex })
        .catch(() => {
          // A candidate the implementation cannot use is not fatal: ICE tries the others.
        });
      return;
    }
    if (s.kind === 'offer' && this.role === 'server' && !this.remoteOffered) {
      void this.answer(s.sdp);
      return;
    }
    if (s.kind === 'answer' && this.role === 'client' && !this.remoteOffered) {
      void this.accept(s.sdp);
      return;
    }
    this.fail(new TransportError('protocol', `unexpected ${s.kind} from the peer`));
  }

  /** The signaling path to the peer is gone: fatal only while connecting. */
  signalingLost(reason: string): void {
    if (this.currentState === 'connecting') this.fail(new TransportError('io', `signaling lost: ${reason}`));
  }

  // ---- negotiation ----

  /** Creates the negotiated data channels (ids 0, 1, then 2 + i per channel) and wires them. */
  private createChannels(): void {
    this.control = this.open('np-control', CONTROL_CHANNEL_ID, true);
    this.pingChannel = this.open('np-ping', PING_CHANNEL_ID, false);
    this.chans.forEach((c, i) => {
      c.dc = this.open(`np-${i}`, FIRST_DATA_CHANNEL_ID + i, c.reliable);
      c.dc.onmessage = (ev) => this.onData(c, ev.data);
    });
    this.control.onopen = () => this.onControlOpen();
    this.control.onclose = () => this.onChannelGone('the control data channel closed');
    this.control.onmessage = (ev) => this.onControl(ev.data);
    this.pingChannel.onmessage = (ev) => this.onPingFrame(ev.data);
  }

  private open(label: string, id: number, reliable: boolean): RtcDataChannelLike {
    const dc = this.pc.createDataChannel(
      label,
      reliable ? { negotiated: true, id, ordered: true } : { negotiated: true, id, ordered: false, maxRetransmits: 0 },
    );
    dc.binaryType = 'arraybuffer';
    return dc;
  }

  private async offer(): Promise<void> {
    try {
      const offer = await this.pc.createOffer();
      await this.pc.setLocalDescription(offer);
      if (this.currentState === 'closed') return;
      this.signal({ kind: 'offer', sdp: withoutCandidates(this.pc.localDescription?.sdp ?? offer.sdp ?? '') });
    } catch (e) {
      this.fail(new TransportError('io', `cannot create an offer: ${(e as Error).message}`, { cause: e }));
    }
  }

  private async answer(sdp: string): Promise<void> {
    try {
      this.remoteOffered = true;
      await this.setRemote({ type: 'offer', sdp });
      if (this.currentState === 'closed') return;
      this.createChannels();
      const answer = await this.pc.createAnswer();
      await this.pc.setLocalDescription(answer);
      if (this.isClosed()) return;
      this.signal({ kind: 'answer', sdp: this.pc.localDescription?.sdp ?? answer.sdp ?? '' });
    } catch (e) {
      this.fail(new TransportError('protocol', `bad offer: ${(e as Error).message}`, { cause: e }));
    }
  }

  private async accept(sdp: string): Promise<void> {
    try {
      this.remoteOffered = true;
      await this.setRemote({ type: 'answer', sdp });
    } catch (e) {
      this.fail(new TransportError('protocol', `bad answer: ${(e as Error).message}`, { cause: e }));
    }
  }

  /** Sets the remote description, then adds the candidates that arrived before it and sends ours. */
  private async setRemote(description: { type: string; sdp: string }): Promise<void> {
    await this.pc.setRemoteDescription(description);
    if (this.currentState === 'closed') return;
    this.remoteDescriptionSet = true;
    this.flushCandidates();
    for (const c of this.localCandidates.splice(0)) this.signal(c);
  }

  private flushCandidates(): void {
    const list = this.remoteCandidates.splice(0);
    for (const c of list) this.handleSignal(c);
  }

  private onControlOpen(): void {
    const sctpMax = this.pc.sctp?.maxMessageSize;
    const max = typeof sctpMax === 'number' && sctpMax > 0 ? sctpMax : 65536;
    this.chunkBytes = Math.max(1024, Math.min(max, 64 << 10));
    if (this.role !== 'client' || this.currentState !== 'connecting' || this.helloSent) return;
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
        this.chunkBytes - UNRELIABLE_HEADER_BYTES,
      ),
    });
  }

  private onHello(bytes: Uint8Array): void {
    if (this.role !== 'server' || this.currentState !== 'connecting')
      throw new TransportError('protocol', 'unexpected HELLO');
    const hello = decodeHello(bytes);
    if (hello.version !== PROTOCOL_VERSION) {
      this.refuse(`unsupported netplay-webrtc version ${hello.version} (this end speaks ${PROTOCOL_VERSION})`);
      return;
    }
    if (hello.signature !== channelSignature(this.channels)) {
      this.refuse(`channel mismatch: server has ${channelSignature(this.channels)}`);
      return;
    }
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
    this.emitter.emit('open', undefined);
    if (this.isClosed()) return;
    for (const e of this.early.splice(0)) {
      this.deliver(e.chan, e.bytes);
      if (this.isClosed()) return;
    }
    this.earlyBytes = 0;
    const queued = this.queued.splice(0);
    this.queuedBytes = 0;
    for (const { chan, data } of queued) {
      const max = chan.reliable ? this.currentLimits.maxMessageBytes : this.currentLimits.maxUnreliableBytes;
      try {
        if (data.length > max)
          throw new TransportError(
            'too-large',
            `a ${data.length}-byte message queued before open exceeds the agreed ${max}`,
          );
        this.sendNow(chan, data);
      } catch (e) {
        if (!(e instanceof TransportError)) throw e;
        this.emitter.emit('error', e);
      }
      if (this.isClosed()) return;
    }
    this.refreshQueueStats();
  }

  private becomeOpen(): void {
    this.currentState = 'open';
    this.connectTimer?.cancel();
    this.connectTimer = undefined;
    this.lastHeard = this.opts.clock.now();
    this.tick();
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

  /** Bytes of a data channel message (ArrayBuffer in browsers, a typed array in some polyfills). */
  private bytesOf(data: unknown): Uint8Array | undefined {
    if (data instanceof ArrayBuffer) return new Uint8Array(data);
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    return undefined;
  }

  /** Counts, charges and checks one received data channel message; undefined when it must be ignored. */
  private receive(data: unknown): Uint8Array | undefined {
    if (this.currentState === 'closed') return undefined;
    const bytes = this.bytesOf(data);
    const size = bytes ? bytes.length : typeof data === 'string' ? data.length : 0;
    this.mstats.bytesReceived += size;
    this.mstats.packetsReceived++;
    if (this.budget && !this.budget.take(size, this.opts.clock.now())) {
      const reason = this.budget.describe();
      this.finish('error', reason, new TransportError('flood', reason), CloseKind.normal);
      return undefined;
    }
    this.heard();
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
        this.onPong(time);
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
    if (bytes.length < UNRELIABLE_HEADER_BYTES)
      throw new TransportError('protocol', `unreliable frame of ${bytes.length} bytes`);
    const payload = bytes.length - UNRELIABLE_HEADER_BYTES;
    if (payload > this.currentLimits.maxUnreliableBytes) {
      throw new TransportError(
        'too-large',
        `received ${payload} bytes on "${chan.spec.name}" (limit ${this.currentLimits.maxUnreliableBytes})`,
      );
    }
    const seq = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
    if (chan.got && !seqNewer(seq, chan.lastSeq)) {
      this.mstats.staleReceived++;
      return;
    }
    chan.got = true;
    chan.lastSeq = seq;
    this.emitter.emit('message', { channel: chan.spec.name, data: bytes.subarray(UNRELIABLE_HEADER_BYTES) });
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
    const rc = this.remoteClose;
    if (!rc) return;
    let i = 0;
    for (const c of this.chans) {
      if (!c.reliable) continue;
      if (c.received < (rc.sent[i] ?? 0)) return;
      i++;
    }
    this.finishRemoteClose();
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
    if (dc.readyState !== 'open') return false;
    try {
      dc.send(frame);
    } catch (e) {
      this.fail(new TransportError('io', `data channel send failed: ${(e as Error).message}`, { cause: e }));
      return false;
    }
    this.mstats.bytesSent += frame.length;
    this.mstats.packetsSent++;
    return true;
  }

  private transmitControl(frame: Uint8Array): void {
    this.transmit(this.control, frame);
  }

  private sendNow(chan: Chan, data: Uint8Array): void {
    if (chan.reliable) {
      if (chan.dc.bufferedAmount + data.length > this.opts.maxBufferedBytes) {
        throw new TransportError('limit', `the data channel buffer would pass ${this.opts.maxBufferedBytes} bytes`);
      }
      const frames = encodeReliable(data, this.chunkBytes);
      let bytes = 0;
      for (const f of frames) {
        if (!this.transmit(chan.dc, f)) return;
        bytes += f.length;
      }
      chan.sent++;
      chan.ledger.push(bytes, data.length, true);
      this.refresh(chan);
      return;
    }
    const frame = encodeUnreliable(chan.nextSeq, data);
    chan.nextSeq = (chan.nextSeq + 1) >>> 0;
    if (chan.pending) {
      this.pendingCount--;
      this.pendingBytes -= chan.pending.length - UNRELIABLE_HEADER_BYTES;
      chan.pending = undefined;
      this.mstats.staleDropped++;
    }
    if (chan.dc.bufferedAmount <= this.opts.highWaterBytes) {
      this.transmit(chan.dc, frame);
      return;
    }
    chan.pending = frame;
    this.pendingCount++;
    this.pendingBytes += data.length;
    this.refreshQueueStats();
    this.armPoll();
  }

  private refresh(chan: Chan): void {
    chan.ledger.update(chan.dc.bufferedAmount);
    this.refreshQueueStats();
    if (chan.ledger.length > 0) this.armPoll();
  }

  private armPoll(): void {
    if (this.pollTimer || this.currentState === 'closed') return;
    this.pollTimer = this.opts.clock.setTimer(this.opts.pollMs, () => {
      this.pollTimer = undefined;
      this.poll();
    });
  }

  private poll(): void {
    if (this.currentState !== 'open') return;
    let busy = false;
    for (const chan of this.chans) {
      if (chan.pending && chan.dc.bufferedAmount <= this.opts.highWaterBytes) {
        const frame = chan.pending;
        chan.pending = undefined;
        this.pendingCount--;
        this.pendingBytes -= frame.length - UNRELIABLE_HEADER_BYTES;
        this.transmit(chan.dc, frame);
        if (this.isClosed()) return;
      }
      chan.ledger.update(chan.dc.bufferedAmount);
      if (chan.ledger.length > 0 || chan.pending) busy = true;
    }
    this.refreshQueueStats();
    if (busy) this.armPoll();
  }

  private refreshQueueStats(): void {
    let length = this.pendingCount + this.queued.length;
    let bytes = this.pendingBytes + this.queuedBytes;
    for (const c of this.chans) {
      length += c.ledger.length;
      bytes += c.ledger.queuedBytes;
    }
    this.mstats.sendQueueLength = length;
    this.mstats.sendQueueBytes = bytes;
  }

  // ---- liveness, RTT, loss ----

  private onPong(sentAt: number): void {
    const rtt = this.opts.clock.now() - sentAt;
    if (!(rtt >= 0) || sentAt < this.createdAt) return;
    this.mstats.pongsReceived++;
    if (sentAt === this.lastPing) this.pingOutstanding = false;
    this.rtt.sample(rtt);
    this.mstats.rttMs = this.rtt.srtt;
    this.mstats.rttVarMs = this.rtt.rttvar;
    this.mstats.rttSamples = this.rtt.samples;
  }

  private heard(): void {
    const now = this.opts.clock.now();
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
    const now = this.opts.clock.now();
    const { interruptMs, disconnectMs } = this.opts.timeouts;
    const silent = now - this.lastHeard;
    if (silent >= disconnectMs) {
      const error = new TransportError('timeout', `the peer was silent for ${Math.round(silent)} ms`);
      this.finish('timeout', error.message, error, CloseKind.timeout);
      return;
    }
    if (silent >= interruptMs && this.interruptedSince < 0) {
      this.interruptedSince = this.lastHeard + interruptMs;
      this.emitter.emit('interrupted', { silentMs: silent });
      if (this.isClosed()) return;
    }
    const interval = this.opts.pingIntervalMs;
    if (now - this.lastPing >= interval) {
      // Round-trip loss of the previous PING (no PONG by now), folded into a one-way estimate.
      if (this.mstats.pingsSent > 0 && silent < interruptMs) {
        const roundTripLost = this.pingOutstanding ? 1 : 0;
        const oneWay = roundTripLost === 1 ? 1 - Math.sqrt(0.5) : 0;
        this.mstats.lossRate += (oneWay * 2 - this.mstats.lossRate) / 16;
        this.mstats.lossRate = Math.min(1, Math.max(0, this.mstats.lossRate));
      }
      this.lastPing = now;
      this.pingOutstanding = true;
      this.mstats.pingsSent++;
      this.transmit(this.pingChannel, encodePing(ControlType.ping, now, this.pingFrame.slice()));
      if (this.isClosed()) return;
    }
    let next = this.lastPing + interval;
    if (this.interruptedSince < 0) next = Math.min(next, this.lastHeard + interruptMs);
    next = Math.min(next, this.lastHeard + disconnectMs);
    this.tickTimer = this.opts.clock.setTimer(Math.max(1, next - now), () => this.tick());
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
    for (const t of [this.tickTimer, this.pollTimer, this.connectTimer, this.drainTimer]) t?.cancel();
    this.tickTimer = this.pollTimer = this.connectTimer = this.drainTimer = undefined;
    for (const c of this.chans) c.pending = undefined;
    this.pendingCount = this.pendingBytes = 0;
    this.queued.length = 0;
    this.queuedBytes = 0;
    this.early.length = 0;
    this.mstats.sendQueueLength = 0;
    this.mstats.sendQueueBytes = 0;
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
    for (const dc of [this.control, this.pingChannel, ...this.chans.map((c) => c.dc)]) dc.onmessage = null;
  }

  private shutdown(): void {
    this.control.onclose = null;
    this.pc.onicecandidate = null;
    this.pc.onconnectionstatechange = null;
    for (const dc of [this.control, this.pingChannel, ...this.chans.map((c) => c.dc)]) {
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

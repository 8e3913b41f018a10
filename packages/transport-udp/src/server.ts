import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  type AdmissionLimits,
  addressKey,
  type ChannelSpec,
  type Clock,
  type Connection,
  Emitter,
  type Handler,
  type Listener,
  type ListenerEventMap,
  TransportError,
  type Unsubscribe,
  validateChannels,
} from '@netplay/transport';
import type { UdpConfig } from './config.js';
import { type DropCounters, newDropCounters } from './counters.js';
import { UdpPeer } from './peer.js';
import { channelHash } from './peer-io.js';
import { PendingSessions, UDP_ADMISSION_LIMITS } from './pending-sessions.js';
import { ReassemblyBudget } from './reassembly.js';
import {
  COOKIE_BYTES,
  crcOk,
  HEADER_BYTES,
  HELLO_BYTES,
  isData,
  PacketType,
  PROTOCOL_MAGIC,
  PROTOCOL_MAGIC_V1,
  putU32,
  RefuseReason,
  seal,
  sessionOf,
  u16,
  u32,
} from './wire.js';

/** What a {@link UdpServerCore} needs from its shell. */
export interface ServerIo {
  /** Time and timers for the cookie buckets, the pending-session timeouts and every session's timers (the dgram shell passes the system clock; tests a `ManualClock` or `SimulatedNetwork`'s). */
  readonly clock: Clock;
  /**
   * Sends one datagram to `address` (an address key as passed to {@link UdpServerCore.input}).
   * `datagram` is lent for the duration of the call (sessions reuse their buffer): send it at once
   * or copy it.
   */
  output(datagram: Uint8Array, address: string): void;
  /** Cryptographically random bytes (cookie secret, session ids). */
  random(n: number): Uint8Array;
  /** Batching hook passed on to the sessions (default `queueMicrotask`). */
  readonly defer?: (fn: () => void) => void;
  /** Called when the server is closed and its last session has finished (release the socket). */
  onDrained?(): void;
}

/** Server options beyond {@link UdpConfig}. */
export interface ServerOptions {
  /** Most simultaneous (confirmed) sessions; further clients get REFUSE (default 64). */
  readonly maxConnections?: number;
  /**
   * Most confirmed sessions from one source address (host without port); further clients from it
   * get REFUSE `full` (default 16).
   */
  readonly maxConnectionsPerAddress?: number;
  /**
   * Caps on sessions that passed the cookie handshake but were not heard on their session yet
   * (pending: not announced, not counted in `maxConnections`). Default {@link UDP_ADMISSION_LIMITS}:
   * 64 in total, 8 per address, aborted after 2 s.
   */
  readonly admission?: Partial<AdmissionLimits>;
  /**
   * Most reassembly bytes all sessions together may hold (default 32 MiB). Past it, the session
   * whose oldest unfinished message started first is closed with `limit` (see `ReassemblyBudget`).
   * With the defaults the listener's worst-case buffered memory stays under 64 MiB (see the README).
   */
  readonly maxListenerReassemblyBytes?: number;
  /** Cookies are valid for the current and the previous bucket of this many ms (default 10 000). */
  readonly cookieBucketMs?: number;
}

/**
 * The sans-I/O server: demultiplexes datagrams by source address, runs the stateless cookie
 * handshake and owns one {@link UdpPeer} per session.
 *
 * Anti-amplification: to an address that has not echoed a valid cookie the server only ever sends
 * CHALLENGE (37 bytes) in reply to a HELLO of at least {@link HELLO_BYTES} (64) bytes, and keeps no
 * state for it. Sessions, ACCEPT and REFUSE only follow a CONNECT carrying a valid cookie (HMAC-SHA256
 * of the address, the client nonce and a time bucket under a random secret).
 *
 * Drops (all counted in {@link drops}, none changes any state): bad CRC; a known address with the
 * wrong session id; an unknown address sending anything but HELLO/CONNECT (one with a session id is
 * dropped before its CRC is computed, so a peer closed for flooding costs little); short or malformed
 * handshakes; bad or expired cookies.
 */
export class UdpServerCore implements Listener {
  /** Dropped datagrams by cause, for the listener and all its sessions. */
  readonly drops: DropCounters = newDropCounters();
  /** Replies sent to unverified addresses (CHALLENGE), and their total bytes. */
  readonly handshakeReplies = {
    /** CHALLENGE packets sent: one per HELLO of at least 64 bytes with the magic `NPU2` or `NPU1`; only grows. */
    count: 0,
    /** Their total size in bytes (37 each), to compare with the HELLO bytes received (amplification factor below 1). */
    bytes: 0,
  };
  private readonly emitter = new Emitter<ListenerEventMap>();
  private readonly sessions = new Map<string, UdpPeer>();
  private readonly accepted: UdpPeer[] = [];
  private readonly channels: readonly ChannelSpec[];
  private readonly hash: number;
  private readonly secret: Uint8Array;
  private readonly maxConnections: number;
  private readonly maxPerAddress: number;
  private readonly bucketMs: number;
  /** Sessions accepted but not yet heard on their session id. */
  readonly pending: PendingSessions;
  /** The listener-wide reassembly account (`held` bytes now, `evictions` so far). */
  readonly reassembly: ReassemblyBudget;
  private closed = false;

  constructor(
    private readonly io: ServerIo,
    /** The tunables every session of this listener runs with (MTU, limits, timeouts, window); `keepaliveMs` also bounds how long an evicted pending session can be revived. Never changed. */
    readonly config: UdpConfig,
    channels: readonly ChannelSpec[],
    readonly localAddress: string,
    options: ServerOptions = {},
  ) {
    this.channels = validateChannels(channels);
    this.hash = channelHash(this.channels);
    this.secret = io.random(32);
    this.maxConnections = options.maxConnections ?? 64;
    this.maxPerAddress = options.maxConnectionsPerAddress ?? 16;
    this.bucketMs = options.cookieBucketMs ?? 10_000;
    const total = options.maxListenerReassemblyBytes ?? 32 << 20;
    if (!(this.maxPerAddress >= 1) || !(total >= config.maxMessageBytes)) {
      throw new TransportError(
        'invalid-argument',
        'need maxConnectionsPerAddress >= 1 and maxListenerReassemblyBytes >= maxMessageBytes',
      );
    }
    this.reassembly = new ReassemblyBudget(total);
    try {
      const limits = { ...UDP_ADMISSION_LIMITS, ...options.admission };
      this.pending = new PendingSessions(limits, io.clock, config.keepaliveMs);
    } catch (e) {
      throw new TransportError('invalid-argument', (e as Error).message);
    }
  }

  get connections(): readonly Connection[] {
    return this.accepted;
  }

  on<K extends keyof ListenerEventMap>(type: K, handler: Handler<ListenerEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  /** The session of `address`, if any (for tests and tools). */
  session(address: string): UdpPeer | undefined {
    return this.sessions.get(address);
  }

  /** Feeds a datagram received from `address`. Never throws. */
  input(d: Uint8Array, address: string): void {
    const known = this.sessions.get(address);
    if (isData(d)) {
      // A version-2 DATA packet: routed by address and connection id (the peer checks the rest).
      const conn = u16(d, 1);
      if (known !== undefined && conn === (known.session & 0xffff)) {
        if (this.pending.has(known)) this.confirm(known);
        known.input(d);
        return;
      }
      if (known === undefined && !this.closed) {
        // A client whose pending session was evicted moments ago proves it got the ACCEPT.
        const session = this.pending.reviveConn(address, conn);
        if (session !== undefined) {
          const peer = this.createSession(address, session.session, session.nonce);
          this.confirm(peer);
          peer.input(d);
          return;
        }
      }
      // Not a session's: maybe a handshake packet whose CRC starts with the DATA bits (below).
      if (!crcOk(d)) {
        if (known === undefined) this.drops.unknownAddress++;
        else this.drops.badSession++;
        return;
      }
    }
    // An unknown address with a session id (a peer closed for flooding, say): dropped before the CRC.
    if (!known && d.length >= HEADER_BYTES && sessionOf(d) !== 0 && !this.pending.mayRevive(address)) {
      this.drops.unknownAddress++;
      return;
    }
    if (!crcOk(d)) {
      this.drops.badCrc++;
      return;
    }
    const session = sessionOf(d);
    // Once closed, only the sessions still finishing their close hear anything.
    if (this.closed && !known) return;
    if (known) {
      if (session === known.session) {
        if (this.pending.has(known)) this.confirm(known);
        known.input(d);
        return;
      }
      if (session === 0 && d[8] === PacketType.Connect) {
        // Our ACCEPT was lost and the client asks again, or the client restarted on the same port.
        this.onConnect(d, address, known);
        return;
      }
      if (session === 0 && d[8] === PacketType.Hello) {
        // A client restarted on the same address: stateless, as for any unverified address.
        this.onHello(d, address);
        return;
      }
      this.drops.badSession++;
      return;
    }
    if (session !== 0) {
      // A client whose pending session was evicted moments ago (before its first datagram came
      // in) proves it got the ACCEPT: its session is recreated, confirmed, instead of lost.
      const evicted = this.pending.revive(address, session);
      if (evicted === undefined) {
        this.drops.unknownAddress++;
        return;
      }
      const peer = this.createSession(address, session, evicted);
      this.confirm(peer);
      peer.input(d);
      return;
    }
    const type = d[8];
    if (type === PacketType.Hello) this.onHello(d, address);
    else if (type === PacketType.Connect) this.onConnect(d, address, undefined);
    else this.drops.unknownAddress++;
  }

  private cookieFor(address: string, nonce: number, bucket: number): Uint8Array {
    const h = createHmac('sha256', this.secret);
    const b = new Uint8Array(8);
    putU32(b, 0, nonce);
    putU32(b, 4, bucket);
    h.update(address);
    h.update(b);
    return new Uint8Array(h.digest().subarray(0, COOKIE_BYTES));
  }

  private onHello(d: Uint8Array, address: string): void {
    // A version-1 client is challenged in its own magic, so that its CONNECT gets a REFUSE (Version).
    const magic = d.length >= HELLO_BYTES ? u32(d, 9) : 0;
    if (magic !== PROTOCOL_MAGIC && magic !== PROTOCOL_MAGIC_V1) {
      this.drops.handshakeIgnored++;
      return;
    }
    const nonce = u32(d, 13);
    const bucket = Math.floor(this.io.clock.now() / this.bucketMs) >>> 0;
    const reply = new Uint8Array(HEADER_BYTES + 12 + COOKIE_BYTES);
    reply[8] = PacketType.Challenge;
    putU32(reply, 9, magic);
    putU32(reply, 13, nonce);
    putU32(reply, 17, bucket);
    reply.set(this.cookieFor(address, nonce, bucket), 21);
    seal(reply);
    this.handshakeReplies.count++;
    this.handshakeReplies.bytes += reply.length;
    this.io.output(reply, address);
  }

  private onConnect(d: Uint8Array, address: string, known: UdpPeer | undefined): void {
    const magic = d.length >= HELLO_BYTES ? u32(d, 9) : 0;
    if (magic !== PROTOCOL_MAGIC && magic !== PROTOCOL_MAGIC_V1) {
      this.drops.handshakeIgnored++;
      return;
    }
    const nonce = u32(d, 13);
    const bucket = u32(d, 17);
    const current = Math.floor(this.io.clock.now() / this.bucketMs) >>> 0;
    const fresh = bucket === current || bucket === (current - 1) >>> 0;
    const cookie = d.subarray(21, 21 + COOKIE_BYTES);
    if (!fresh || !timingSafeEqual(cookie, this.cookieFor(address, nonce, bucket))) {
      this.drops.handshakeIgnored++;
      return;
    }
    if (magic === PROTOCOL_MAGIC_V1) {
      // A cookie-verified version-1 client: refused, typed, in its own format.
      this.reply(address, PacketType.Refuse, 0, nonce, RefuseReason.Version, PROTOCOL_MAGIC_V1);
      this.emitter.emit(
        'error',
        new TransportError('refused', `${address}: speaks transport-udp wire version 1; this listener speaks 2`),
      );
      return;
    }
    if (known) {
      if (known.clientNonce === nonce) {
        // A repeated CONNECT from the same client: repeat the ACCEPT.
        if (known.state === 'open') this.reply(address, PacketType.Accept, known.session, nonce);
        else this.drops.handshakeIgnored++;
        return;
      }
      // A new client on the address of an old session (proven by the cookie): the old one is gone.
      known.abort(new TransportError('closed', `${address} connected again; this session is replaced`));
      this.forget(address, known);
    }
    if (u32(d, 21 + COOKIE_BYTES) !== this.hash) {
      this.refuse(address, nonce, RefuseReason.Channels, `${address}: channel lists differ`);
      return;
    }
    if (this.accepted.length >= this.maxConnections) {
      this.refuse(address, nonce, RefuseReason.Full, `${address}: listener full (${this.maxConnections})`);
      return;
    }
    if (this.connectedFrom(addressKey(address)) >= this.maxPerAddress) {
      const why = `${address}: listener full for its address (${this.maxPerAddress})`;
      this.refuse(address, nonce, RefuseReason.Full, why);
      return;
    }
    let id = 0;
    while (id === 0) id = u32(this.io.random(4), 0);
    const peer = this.createSession(address, id, nonce);
    this.reply(address, PacketType.Accept, id, nonce);
    // Pending until the client is heard on its session (it answers ACCEPT at once).
    this.pending.admit(peer);
  }

  private createSession(address: string, id: number, nonce: number): UdpPeer {
    const peer = UdpPeer.server(
      {
        clock: this.io.clock,
        output: (datagram) => this.io.output(datagram, address),
        drops: this.drops,
        onDead: () => this.forget(address, peer),
        reassemblyBudget: this.reassembly,
        ...(this.io.defer ? { defer: this.io.defer } : {}),
      },
      this.config,
      this.channels,
      address,
      id,
      nonce,
    );
    this.sessions.set(address, peer);
    peer.on('close', () => {
      this.pending.release(peer);
      const i = this.accepted.indexOf(peer);
      if (i >= 0) this.accepted.splice(i, 1);
    });
    return peer;
  }

  /** A pending session was heard on its session id: announce it, or close it if full by now. */
  private confirm(peer: UdpPeer): void {
    this.pending.release(peer);
    const full = this.accepted.length >= this.maxConnections;
    if (full || this.connectedFrom(addressKey(peer.remoteAddress)) >= this.maxPerAddress) {
      peer.close(full ? 'listener full' : 'listener full for this address');
      return;
    }
    this.accepted.push(peer);
    this.emitter.emit('connection', peer);
  }

  /** Confirmed sessions from address key `key`. */
  private connectedFrom(key: string): number {
    let n = 0;
    for (const p of this.accepted) if (addressKey(p.remoteAddress) === key) n++;
    return n;
  }

  private refuse(address: string, nonce: number, reason: number, message: string): void {
    this.reply(address, PacketType.Refuse, 0, nonce, reason);
    this.emitter.emit('error', new TransportError('refused', message));
  }

  private reply(
    address: string,
    type: number,
    session: number,
    nonce: number,
    extra?: number,
    magic = PROTOCOL_MAGIC,
  ): void {
    const r = new Uint8Array(HEADER_BYTES + 8 + (extra === undefined ? 0 : 1));
    putU32(r, 4, session);
    r[8] = type;
    putU32(r, 9, magic);
    putU32(r, 13, nonce);
    if (extra !== undefined) r[17] = extra;
    seal(r);
    this.io.output(r, address);
  }

  private forget(address: string, peer: UdpPeer): void {
    this.pending.release(peer);
    if (this.sessions.get(address) === peer) this.sessions.delete(address);
    const i = this.accepted.indexOf(peer);
    if (i >= 0) this.accepted.splice(i, 1);
    if (this.closed && this.sessions.size === 0) this.io.onDrained?.();
  }

  /** Emits a listener `error` (used by the shell for socket errors). */
  reportError(error: TransportError): void {
    this.emitter.emit('error', error);
  }

  /** Number of session entries (including closed sessions still lingering). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  close(reason = 'listener closed'): void {
    if (this.closed) return;
    for (const p of [...this.accepted]) p.close(reason);
    this.pending.drain(reason);
    this.closed = true;
    this.emitter.emit('close', undefined);
  }
}

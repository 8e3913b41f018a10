import type { Clock, Timer } from '@netplay/transport';
import {
  COOKIE_BYTES,
  HEADER_BYTES,
  HELLO_BYTES,
  PacketType,
  PROTOCOL_MAGIC,
  putU32,
  RefuseReason,
  seal,
  u32,
} from './wire.js';

/** What a handshake datagram the client read turned out to be. */
export const HandshakeReply = {
  /** Not a reply to us, or not one we expect now. */
  Ignored: 0,
  /** CHALLENGE: the cookie is kept; send CONNECT now. */
  Challenge: 1,
  /** ACCEPT: the session is open (its id is the datagram's session). */
  Accept: 2,
  /** REFUSE: see {@link ClientHandshake.refusal}. */
  Refuse: 3,
} as const;
export type HandshakeReply = (typeof HandshakeReply)[keyof typeof HandshakeReply];

/**
 * The client's half of the handshake (HELLO → CHALLENGE → CONNECT → ACCEPT or REFUSE), as data:
 * the datagrams to send, retried 100 ms doubling to 1 s until {@link stop}, a deadline, and what a
 * reply means. The peer owns the connection state. Cold path (it allocates its datagrams).
 * @internal
 */
export class ClientHandshake {
  private cookie: Uint8Array | undefined;
  private bucket = 0;
  private attempts = 0;
  /** After a {@link HandshakeReply.Refuse}: why, in words. */
  refusal = '';
  private active = true;
  private retryTimer: Timer | undefined;
  private deadline: Timer | undefined;

  constructor(
    /** The client's nonce (nonzero). */
    readonly nonce: number,
    /** The channel-list hash (see `channelHash`). */
    private readonly hash: number,
    private readonly clock: Clock,
    /** Sends a handshake datagram. */
    private readonly send: (datagram: Uint8Array) => void,
  ) {}

  /** Arms the deadline (`onTimeout` after `connectMs`) and sends the first HELLO. */
  start(connectMs: number, onTimeout: () => void): void {
    this.deadline = this.clock.setTimer(connectMs, onTimeout);
    this.step();
  }

  /** Sends the datagram due now (HELLO or CONNECT) and schedules the retry. */
  step(): void {
    if (!this.active) return;
    this.send(this.datagram());
    const delay = this.sent();
    this.retryTimer?.cancel();
    this.retryTimer = this.clock.setTimer(delay, () => this.step());
  }

  /** Stops retrying and the deadline (the handshake finished, or the connection ended). */
  stop(): void {
    this.active = false;
    this.retryTimer?.cancel();
    this.deadline?.cancel();
  }

  /** The datagram to send now: HELLO, or CONNECT once a cookie came. */
  private datagram(): Uint8Array {
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
    return d;
  }

  /** The datagram went out; returns how long to wait before the next attempt, ms. */
  private sent(): number {
    this.attempts++;
    return Math.min(1000, 100 * 2 ** Math.min(4, this.attempts - 1));
  }

  /** Whether `d` answers our nonce at all (magic and nonce match). */
  answersUs(d: Uint8Array): boolean {
    return d.length >= HEADER_BYTES + 8 && u32(d, 9) === PROTOCOL_MAGIC && u32(d, 13) === this.nonce;
  }

  /** Reads a reply of `type` for `session` that {@link answersUs}. */
  read(d: Uint8Array, session: number, type: number): HandshakeReply {
    if (type === PacketType.Challenge && session === 0 && d.length >= 21 + COOKIE_BYTES && !this.cookie) {
      this.bucket = u32(d, 17);
      this.cookie = d.slice(21, 21 + COOKIE_BYTES);
      this.attempts = 0;
      return HandshakeReply.Challenge;
    }
    if (type === PacketType.Accept && session !== 0 && this.cookie) return HandshakeReply.Accept;
    if (type === PacketType.Refuse && session === 0 && d.length >= 18 && this.cookie) {
      this.refusal =
        d[17] === RefuseReason.Full
          ? 'listener full'
          : d[17] === RefuseReason.Channels
            ? 'channel lists differ'
            : d[17] === RefuseReason.Version
              ? 'the listener speaks another wire version'
              : 'listener closed';
      return HandshakeReply.Refuse;
    }
    return HandshakeReply.Ignored;
  }
}

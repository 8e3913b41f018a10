import type { ChannelKind, ChannelSpec } from '@netplay/transport';
import { TransportError } from '@netplay/transport';

/**
 * The netplay-ws frame layout, version 1. Every WebSocket binary message is one frame; its first
 * byte is the frame type. Integers are big-endian.
 *
 * | type | name       | layout after the type byte                                                     |
 * |------|------------|--------------------------------------------------------------------------------|
 * | 0x01 | RELIABLE   | channel u8, payload                                                            |
 * | 0x02 | UNRELIABLE | channel u8, sequence u32, payload                                              |
 * | 0x10 | HELLO      | magic "NPWS", version u8, maxMessage u32, maxUnreliable u32, count u8, then per channel: kind u8 (0 reliable, 1 unreliable), name length u8, name UTF-8 |
 * | 0x11 | WELCOME    | magic "NPWS", version u8, maxMessage u32, maxUnreliable u32                    |
 * | 0x12 | PING       | sender time f64 (ms, the sender's own clock)                                   |
 * | 0x13 | PONG       | the PING's time f64, echoed                                                    |
 *
 * Close reasons travel in the WebSocket close frame (see `close-codes.ts`).
 */
export const FrameType = Object.freeze({
  /** RELIABLE: one whole message of a reliable channel (channel index u8, then the payload); in order and never dropped, as the WebSocket stream is. */
  reliable: 0x01,
  /** UNRELIABLE: one message of an unreliable channel with a u32 sequence number; the receiver drops one not newer than the last it delivered on that channel. */
  unreliable: 0x02,
  /** HELLO: the client's first frame (magic, version, its receive limits, its channel list); the server answers WELCOME or closes with 4001. */
  hello: 0x10,
  /** WELCOME: the server's answer to an accepted HELLO (magic, version, its receive limits); the connection is open on both ends after it. */
  welcome: 0x11,
  /** PING: sent by either end every `pingIntervalMs` once open, carrying the sender's clock time in ms; answered with a PONG. */
  ping: 0x12,
  /** PONG: a PING's time echoed back, from which the sender measures the round-trip time. */
  pong: 0x13,
} as const);

/** Version of the frame layout carried in HELLO and WELCOME. */
export const PROTOCOL_VERSION = 1;
/** The four magic bytes of HELLO and WELCOME: "NPWS". */
export const MAGIC = Object.freeze([0x4e, 0x50, 0x57, 0x53] as const);
/** Header bytes of a RELIABLE frame. */
export const RELIABLE_HEADER_BYTES = 2;
/** Header bytes of an UNRELIABLE frame. */
export const UNRELIABLE_HEADER_BYTES = 6;
/** Size of PING and PONG frames. */
export const PING_BYTES = 9;
/** Size of a WELCOME frame. */
export const WELCOME_BYTES = 14;
/** Largest limit value a HELLO or WELCOME can carry. */
export const MAX_LIMIT = 0xffff_ffff;

/** The decoded HELLO frame: the client's channels and receive limits. */
export interface Hello {
  /** The client's frame-layout version (u8); the server refuses (close 4001) anything but its {@link PROTOCOL_VERSION}. Set by the encoder, never by the caller. */
  readonly version: number;
  /** Largest reliable message the client accepts, in bytes (u32, 0 to {@link MAX_LIMIT}); both ends then use the smaller of this and the server's. */
  readonly maxMessageBytes: number;
  /** Largest unreliable message the client accepts, in bytes (u32, 0 to {@link MAX_LIMIT}); agreed like `maxMessageBytes`. */
  readonly maxUnreliableBytes: number;
  /** The client's channels in order (at most 255, names at most 255 UTF-8 bytes); the server refuses a list that differs from its own. Decoded as sent, not validated. */
  readonly channels: readonly ChannelSpec[];
}

/** The decoded WELCOME frame: the server's receive limits. */
export interface Welcome {
  /** The server's frame-layout version (u8); the client closes with `protocol` unless it is its own {@link PROTOCOL_VERSION}. Set by the encoder. */
  readonly version: number;
  /** Largest reliable message the server accepts, in bytes (u32, 0 to {@link MAX_LIMIT}); both ends then use the smaller of this and the client's. */
  readonly maxMessageBytes: number;
  /** Largest unreliable message the server accepts, in bytes (u32, 0 to {@link MAX_LIMIT}); agreed like `maxMessageBytes`. */
  readonly maxUnreliableBytes: number;
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

function bad(message: string): TransportError {
  return new TransportError('protocol', message);
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function checkLimit(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > MAX_LIMIT) {
    throw new TransportError('invalid-argument', `${what} must be an integer in [0, ${MAX_LIMIT}]`);
  }
}

/** Encodes a HELLO frame. Throws `TransportError('invalid-argument')` on out-of-range values. */
export function encodeHello(hello: Omit<Hello, 'version'>): Uint8Array {
  checkLimit(hello.maxMessageBytes, 'maxMessageBytes');
  checkLimit(hello.maxUnreliableBytes, 'maxUnreliableBytes');
  if (hello.channels.length > 255) throw new TransportError('invalid-argument', 'at most 255 channels');
  const names = hello.channels.map((c) => utf8.encode(c.name));
  let size = 15;
  for (const n of names) {
    if (n.length > 255) throw new TransportError('invalid-argument', 'channel names are at most 255 UTF-8 bytes');
    size += 2 + n.length;
  }
  const out = new Uint8Array(size);
  const dv = view(out);
  out[0] = FrameType.hello;
  out.set(MAGIC, 1);
  out[5] = PROTOCOL_VERSION;
  dv.setUint32(6, hello.maxMessageBytes);
  dv.setUint32(10, hello.maxUnreliableBytes);
  out[14] = hello.channels.length;
  let o = 15;
  hello.channels.forEach((c, i) => {
    const n = names[i]!;
    out[o] = c.kind === 'reliable' ? 0 : 1;
    out[o + 1] = n.length;
    out.set(n, o + 2);
    o += 2 + n.length;
  });
  return out;
}

function checkMagic(bytes: Uint8Array, what: string): void {
  for (let i = 0; i < 4; i++) {
    if (bytes[1 + i] !== MAGIC[i]) throw bad(`${what} without the NPWS magic: not a netplay-ws peer`);
  }
}

/**
 * Decodes a HELLO frame (type byte included). Throws only `TransportError('protocol')`; the
 * channel list is returned as sent (not validated: compare it with `sameChannels`).
 */
export function decodeHello(bytes: Uint8Array): Hello {
  if (bytes.length < 15) throw bad(`HELLO of ${bytes.length} bytes is truncated`);
  if (bytes[0] !== FrameType.hello) throw bad('not a HELLO frame');
  checkMagic(bytes, 'HELLO');
  const dv = view(bytes);
  const count = bytes[14]!;
  const channels: ChannelSpec[] = [];
  let o = 15;
  for (let i = 0; i < count; i++) {
    if (o + 2 > bytes.length) throw bad(`HELLO truncated in channel ${i}`);
    const k = bytes[o]!;
    const len = bytes[o + 1]!;
    if (k > 1) throw bad(`HELLO channel ${i} has unknown kind ${k}`);
    if (o + 2 + len > bytes.length) throw bad(`HELLO truncated in the name of channel ${i}`);
    let name: string;
    try {
      name = utf8Decoder.decode(bytes.subarray(o + 2, o + 2 + len));
    } catch {
      throw bad(`HELLO channel ${i} name is not UTF-8`);
    }
    const kind: ChannelKind = k === 0 ? 'reliable' : 'unreliable';
    channels.push({ name, kind });
    o += 2 + len;
  }
  if (o !== bytes.length) throw bad(`HELLO has ${bytes.length - o} trailing bytes`);
  return {
    version: bytes[5]!,
    maxMessageBytes: dv.getUint32(6),
    maxUnreliableBytes: dv.getUint32(10),
    channels,
  };
}

/** Encodes a WELCOME frame. */
export function encodeWelcome(welcome: Omit<Welcome, 'version'>): Uint8Array {
  checkLimit(welcome.maxMessageBytes, 'maxMessageBytes');
  checkLimit(welcome.maxUnreliableBytes, 'maxUnreliableBytes');
  const out = new Uint8Array(WELCOME_BYTES);
  out[0] = FrameType.welcome;
  out.set(MAGIC, 1);
  out[5] = PROTOCOL_VERSION;
  const dv = view(out);
  dv.setUint32(6, welcome.maxMessageBytes);
  dv.setUint32(10, welcome.maxUnreliableBytes);
  return out;
}

/** Decodes a WELCOME frame. Throws only `TransportError('protocol')`. */
export function decodeWelcome(bytes: Uint8Array): Welcome {
  if (bytes.length !== WELCOME_BYTES) throw bad(`WELCOME of ${bytes.length} bytes, expected ${WELCOME_BYTES}`);
  if (bytes[0] !== FrameType.welcome) throw bad('not a WELCOME frame');
  checkMagic(bytes, 'WELCOME');
  const dv = view(bytes);
  return { version: bytes[5]!, maxMessageBytes: dv.getUint32(6), maxUnreliableBytes: dv.getUint32(10) };
}

/** Encodes a PING (or, with `type` PONG) frame carrying `timeMs`. */
export function encodePing(timeMs: number, type: 0x12 | 0x13 = FrameType.ping): Uint8Array {
  const out = new Uint8Array(PING_BYTES);
  out[0] = type;
  view(out).setFloat64(1, timeMs);
  return out;
}

/** Reads the time of a PING or PONG frame. Throws only `TransportError('protocol')`. */
export function decodePingTime(bytes: Uint8Array): number {
  if (bytes.length !== PING_BYTES) throw bad(`PING/PONG of ${bytes.length} bytes, expected ${PING_BYTES}`);
  return view(bytes).getFloat64(1);
}

/** Builds a RELIABLE frame: header plus a copy of `payload`. */
export function encodeReliable(channel: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(RELIABLE_HEADER_BYTES + payload.length);
  out[0] = FrameType.reliable;
  out[1] = channel;
  out.set(payload, RELIABLE_HEADER_BYTES);
  return out;
}

/** Builds an UNRELIABLE frame: header (with the sequence number) plus a copy of `payload`. */
export function encodeUnreliable(channel: number, seq: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(UNRELIABLE_HEADER_BYTES + payload.length);
  out[0] = FrameType.unreliable;
  out[1] = channel;
  out[2] = seq >>> 24;
  out[3] = (seq >>> 16) & 0xff;
  out[4] = (seq >>> 8) & 0xff;
  out[5] = seq & 0xff;
  out.set(payload, UNRELIABLE_HEADER_BYTES);
  return out;
}

/** Reads the sequence number of an UNRELIABLE frame (length checked by the caller). */
export function unreliableSeq(bytes: Uint8Array): number {
  return ((bytes[2]! << 24) | (bytes[3]! << 16) | (bytes[4]! << 8) | bytes[5]!) >>> 0;
}

/** Whether u32 sequence number `a` is newer than `b` (serial-number arithmetic, RFC 1982). */
export function seqNewer(a: number, b: number): boolean {
  const d = (a - b) >>> 0;
  return d !== 0 && d < 0x8000_0000;
}

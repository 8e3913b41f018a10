import * as zlib from 'node:zlib';
import { crc32Update } from '@netplay/protocol';

/** Node's native CRC-32 (Node ≥ 20.15 / 22.2), about 7× the JS table loop; else the portable one. */
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** CRC-32 (zlib) of all of `view`. */
export function crc32Of(view: Uint8Array): number {
  return nativeCrc32 !== undefined ? nativeCrc32(view) : crc32Update(0, view, 0, view.length);
}

/** The CRC-32 of a message followed by its own CRC written little-endian: the same for every message. */
export const CRC32_RESIDUE = 0x2144df1c;

/**
 * The datagram format of @netplay/transport-udp, wire version 2 (all integers big-endian; README
 * "Wire format" has the byte-by-byte tables).
 *
 * Handshake packets (HELLO … REFUSE) keep version 1's layout:
 * ```
 * 0  u32 CRC-32 (zlib) of bytes 4..end
 * 4  u32 session id ("magic number"): 0 during the handshake, then the id the server chose
 * 8  u8  packet type
 * 9  u32 PROTOCOL_MAGIC ("NPU2"; "NPU1" was version 1), u32 client nonce, …
 * ```
 * DATA packets (version 2) start with a byte whose top two bits are `10`:
 * ```
 * 0  u8  0x80 | flags: 0x20 TRACKED, 0x10 ACK, 0x08 CRC (set iff TRACKED or ACK)
 * 1  u16 connection id: the low 16 bits of the session id
 * [TRACKED] u16 packet sequence number (mod 2^16; the receiver takes the value nearest its highest)
 * [ACK]     u16 ack: highest tracked packet received (mod 2^16), varint ack delay (100 µs units),
 *           u8 n (0..16), n bytes of ack bits: bit i of byte j set = packet ack − 1 − (8j + i)
 *           received (trailing zero bytes left out)
 * …  frames ({@link FrameType}) until the CRC or the end
 * [CRC]     u32 CRC-32 of every byte before it, little-endian (the CRC of the whole datagram is then
 *           the constant 0x2144DF1C, checked in one native pass)
 * ```
 */
export const HEADER_BYTES = 9;
/** Packets covered by the ack bitfield of a DATA packet (below the acked one). */
export const ACK_BITS = 128;
/** Top bits of the first byte of a version-2 DATA packet, and its flags. */
export const DATA_MARK = 0x80;
export const DATA_MARK_MASK = 0xc0;
export const DataFlag = { Tracked: 0x20, Ack: 0x10, Crc: 0x08 } as const;
/** Bytes a DATA packet's header and CRC take at most (3 + seq 2 + ack 2 + delay 3 + 1 + 16 bits + CRC 4). */
export const DATA_HEADER_BYTES = 31;
/** Bytes of the header of an untracked DATA packet without acks (flags, connection id). */
export const DATA_MIN_HEADER_BYTES = 3;
/** Second word of every handshake packet: "NPU2" (wire version 2). */
export const PROTOCOL_MAGIC = 0x4e505532;
/** The handshake magic of wire version 1 ("NPU1"): such a HELLO is refused with {@link RefuseReason} Version. */
export const PROTOCOL_MAGIC_V1 = 0x4e505531;
/** A HELLO shorter than this is ignored, so no reply is ever larger than its request. */
export const HELLO_BYTES = 64;
/** Size of the server's cookie. */
export const COOKIE_BYTES = 16;

/** Packet types (byte 8). */
export const PacketType = {
  /** client → server, session 0: magic, nonce, channel hash, zero padding to {@link HELLO_BYTES}. */
  Hello: 1,
  /** server → client, session 0: magic, nonce, u32 time bucket, cookie[16] (37 bytes, < HELLO). */
  Challenge: 2,
  /** client → server, session 0: magic, nonce, bucket, cookie[16], channel hash, padding to 64. */
  Connect: 3,
  /** server → client, session = the new id: magic, nonce. */
  Accept: 4,
  /** server → client, session 0: magic, nonce, u8 {@link RefuseReason}. Only to cookie-verified addresses. */
  Refuse: 5,
  /** Version 1's DATA type (byte 8): no longer accepted. */
  DataV1: 16,
} as const;

/** Why a server refused (byte after the nonce of a REFUSE). */
export const RefuseReason = {
  /** The listener holds `maxConnections` sessions, or `maxConnectionsPerAddress` from the client's host; the client rejects with `refused` ("listener full"). */
  Full: 1,
  /** The client's channel hash differs from the listener's (other names, kinds or order); the client rejects with `refused` ("channel lists differ"). */
  Channels: 2,
  /** Reserved: the listener is closed. Never sent (a closed listener ignores new clients, which time out); a client reads it, or any unknown value, as "listener closed". */
  Closed: 3,
  /** The client speaks another wire version: sent to a version-1 client (in version 1's format) after its cookie-verified CONNECT. */
  Version: 4,
} as const;

/**
 * Frame types inside DATA packets. A frame starts with a byte `type << 4 | channel` (channel 15:
 * the channel index follows in a byte of its own; frames without a channel use 0).
 */
export const FrameType = {
  /**
   * One fragment of a reliable message: u32 message seq, u32 message length, u32 fragment index,
   * u16 fragment size, then the fragment's bytes (`fragment size` bytes, or what is left of the
   * message for the last fragment). 15 bytes of header (16 with a channel byte).
   */
  Fragment: 1,
  /** An unreliable message: u16 seq (mod 2^16), varint length, bytes. 4–6 bytes of header. */
  Unreliable: 2,
  /** Asks for an ack (keepalive). 1 byte. */
  Ping: 3,
  /** The sender closes: u8 length, UTF-8 reason. */
  Close: 4,
  /** Acknowledges a Close. 1 byte. */
  CloseAck: 5,
} as const;

/** Bytes of a Fragment frame before its data, at most. */
export const FRAGMENT_HEADER_BYTES = 16;
/** Bytes of an Unreliable frame before its data, at most (frame byte, channel, seq, 3-byte varint). */
export const UNRELIABLE_HEADER_BYTES = 7;

/** Writes a frame's first byte(s) at `o`: type and channel; returns the offset after them. */
export function putFrameStart(b: Uint8Array, o: number, type: number, channel: number): number {
  if (channel < 15) {
    b[o] = (type << 4) | channel;
    return o + 1;
  }
  b[o] = (type << 4) | 15;
  b[o + 1] = channel;
  return o + 2;
}

/** Writes `v` as LEB128 at `o`; returns the offset after it. */
export function putVarint(b: Uint8Array, o: number, v: number): number {
  while (v >= 0x80) {
    b[o++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  b[o++] = v;
  return o;
}

/** The whole number ≡ `v16` (mod 2^16) nearest `near` (at least 1). */
export function resolve16(v16: number, near: number): number {
  const r = near + ((((v16 - near) & 0xffff) << 16) >> 16);
  return r < 1 ? r + 0x10000 : r;
}

/**
 * Seals a DATA packet `d[0, end)` that has the CRC flag: writes its CRC-32 little-endian at `end`
 * (so that the CRC of the whole datagram is {@link CRC32_RESIDUE}); returns `end + 4`. `view`, if
 * given, is `d[0, end)` (a reused view, so sealing allocates nothing).
 */
export function sealData(d: Uint8Array, end: number, view: Uint8Array = d.subarray(0, end)): number {
  const crc = crc32Of(view);
  d[end] = crc;
  d[end + 1] = crc >>> 8;
  d[end + 2] = crc >>> 16;
  d[end + 3] = crc >>> 24;
  return end + 4;
}

/** Whether a DATA packet's trailing CRC matches (one pass over the whole datagram, no copy). */
export function dataCrcOk(d: Uint8Array): boolean {
  return d.length >= DATA_MIN_HEADER_BYTES + 4 && crc32Of(d) >>> 0 === CRC32_RESIDUE;
}

/** Whether a datagram is a version-2 DATA packet (else: a handshake packet, CRC first). */
export function isData(d: Uint8Array): boolean {
  return d.length >= DATA_MIN_HEADER_BYTES && (d[0]! & DATA_MARK_MASK) === DATA_MARK;
}

/** Writes the CRC of `datagram[4..length)` into its first four bytes. */
export function seal(datagram: Uint8Array, length: number = datagram.length): void {
  const crc = crc32Update(0, datagram, 4, length);
  datagram[0] = crc >>> 24;
  datagram[1] = crc >>> 16;
  datagram[2] = crc >>> 8;
  datagram[3] = crc;
}

/** Whether the datagram is long enough for a header and its CRC matches. */
export function crcOk(datagram: Uint8Array): boolean {
  if (datagram.length < HEADER_BYTES) return false;
  const stored = ((datagram[0]! << 24) | (datagram[1]! << 16) | (datagram[2]! << 8) | datagram[3]!) >>> 0;
  return stored === crc32Update(0, datagram, 4, datagram.length);
}

/** Reads a big-endian u32 (the caller checked the bounds). */
export function u32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

/** Reads a big-endian u16 (the caller checked the bounds). */
export function u16(b: Uint8Array, o: number): number {
  return (b[o]! << 8) | b[o + 1]!;
}

/** Writes a big-endian u32. */
export function putU32(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 24;
  b[o + 1] = v >>> 16;
  b[o + 2] = v >>> 8;
  b[o + 3] = v;
}

/** Writes a big-endian u16. */
export function putU16(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 8;
  b[o + 1] = v;
}

/** The session id of a datagram (the caller checked the length). */
export function sessionOf(datagram: Uint8Array): number {
  return u32(datagram, 4);
}

/** A DATA packet (wire version 2) of `frames`, for tests, benchmarks and tools; see the module comment. */
export function encodeDataPacket(
  session: number,
  frames: Uint8Array,
  options: { seq?: number; ack?: number; ackBits?: Uint8Array; ackDelay100us?: number } = {},
): Uint8Array {
  const tracked = options.seq !== undefined && options.seq !== 0;
  const withAck = options.ack !== undefined && options.ack !== 0;
  const bits = options.ackBits ?? new Uint8Array(0);
  const d = new Uint8Array(DATA_HEADER_BYTES + frames.length + bits.length);
  d[0] =
    DATA_MARK |
    (tracked ? DataFlag.Tracked : 0) |
    (withAck ? DataFlag.Ack : 0) |
    (tracked || withAck ? DataFlag.Crc : 0);
  d[1] = session >>> 8;
  d[2] = session;
  let o = 3;
  if (tracked) {
    d[o++] = options.seq! >>> 8;
    d[o++] = options.seq!;
  }
  if (withAck) {
    d[o++] = options.ack! >>> 8;
    d[o++] = options.ack!;
    o = putVarint(d, o, options.ackDelay100us ?? 0);
    d[o++] = bits.length;
    d.set(bits, o);
    o += bits.length;
  }
  d.set(frames, o);
  o += frames.length;
  if (tracked || withAck) o = sealData(d, o);
  return d.slice(0, o);
}

/** A Fragment frame (wire version 2): `data` is the fragment's bytes (may be shorter than announced, for tests). */
export function encodeFragmentFrame(
  channel: number,
  msgSeq: number,
  msgLength: number,
  index: number,
  fragmentSize: number,
  data: Uint8Array,
): Uint8Array {
  const f = new Uint8Array(FRAGMENT_HEADER_BYTES + data.length);
  let o = putFrameStart(f, 0, FrameType.Fragment, channel);
  putU32(f, o, msgSeq);
  putU32(f, o + 4, msgLength);
  putU32(f, o + 8, index);
  putU16(f, o + 12, fragmentSize);
  o += 14;
  f.set(data, o);
  return f.slice(0, o + data.length);
}

import { crc32Update } from '@netplay/protocol';

/**
 * The datagram format of @netplay/transport-udp (all integers big-endian).
 *
 * Every datagram:
 * ```
 * 0  u32 CRC-32 (zlib) of bytes 4..end
 * 4  u32 session id ("magic number"): 0 during the handshake, then the id the server chose
 * 8  u8  packet type
 * ```
 * Handshake packets (session id 0, except ACCEPT) continue with `u32 PROTOCOL_MAGIC` and a
 * `u32 client nonce`; see {@link PacketType}. DATA packets continue with
 * ```
 * 9  u32 packet sequence number (from 1; 0 for untracked packets)
 * 13 u32 ack: highest tracked packet sequence number received (0: none yet)
 * 17 u8[16] ack bits: bit i of byte j set = packet (ack − 1 − (8j + i)) received
 * 33 u16 ack delay: time between receiving packet `ack` and sending this one, in 100 µs units
 * 35 frames...
 * ```
 * and frames ({@link FrameType}) until the end of the datagram.
 */
export const HEADER_BYTES = 9;
/** Packets covered by the ack bitfield of a DATA packet (below the acked one). */
export const ACK_BITS = 128;
/** Offset of the ack bitfield in a DATA packet. */
export const ACK_BITS_AT = 17;
/** Offset of the ack delay in a DATA packet. */
export const ACK_DELAY_AT = ACK_BITS_AT + ACK_BITS / 8;
/** Bytes before the first frame of a DATA packet. */
export const DATA_HEADER_BYTES = ACK_DELAY_AT + 2;
/** Second word of every handshake packet: "NPU1". */
export const PROTOCOL_MAGIC = 0x4e505531;
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
  /** Either way, session = id: see the header layout above. */
  Data: 16,
} as const;

/** Why a server refused (byte after the nonce of a REFUSE). */
export const RefuseReason = { Full: 1, Channels: 2, Closed: 3 } as const;

/** Frame types inside DATA packets. */
export const FrameType = {
  /**
   * One fragment of a reliable message: u8 channel, u32 message seq, u32 message length,
   * u32 fragment index, u16 fragment size, then the fragment's bytes (`fragment size` bytes, or
   * what is left of the message for the last fragment). 16 bytes of header.
   */
  Fragment: 1,
  /** An unreliable message: u8 channel, u32 seq, u16 length, bytes. 8 bytes of header. */
  Unreliable: 2,
  /** Asks for an ack (keepalive). 1 byte. */
  Ping: 3,
  /** The sender closes: u8 length, UTF-8 reason. */
  Close: 4,
  /** Acknowledges a Close. 1 byte. */
  CloseAck: 5,
} as const;

/** Bytes of a Fragment frame before its data. */
export const FRAGMENT_HEADER_BYTES = 16;
/** Bytes of an Unreliable frame before its data. */
export const UNRELIABLE_HEADER_BYTES = 8;

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

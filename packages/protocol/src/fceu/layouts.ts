import { blob, type Layout, seq, struct, u8, u32 } from '@solana/buffer-layout';

/*
 * buffer-layout declarations of the FCE Ultra 0.91 messages. They are the specification the
 * hand-written codecs are tested against (property tests check byte-for-byte equality); the
 * codecs themselves do not use them. buffer-layout's `u32` is little-endian, as FCE Ultra is.
 */

/** Fields of the server init message as buffer-layout sees them. */
export interface FceuServerInitFields {
  /** u32 LE at offset 0: the UDP port the server listens on (0–65535). */
  udpPort: number;
  /** u32 LE at offset 4: the player number the server gives this client, 0–3. */
  player: number;
  /** u32 LE at offset 8: the number, chosen at random by the server, that every UDP packet of the session carries. */
  magic: number;
}

/** Fields of a frame-data packet as buffer-layout sees them (`controllers` is 4 numbers). */
export interface FceuFrameFields {
  /**
   * u32 LE (offset 0 over TCP, offset 8 over UDP): the packet counter, linear from 0; over TCP 0xFFFFFFFF announces a
   * text instead.
   */
  counter: number;
  /** 4 bytes after the counter: the controller byte of players 0–3 for this frame. */
  controllers: number[];
  /** u8 after the controllers: a `FceuCommand` code, 0 for none. */
  command: number;
}

/** Fields of a UDP frame packet as buffer-layout sees them. */
export interface FceuUdpFrameFields extends FceuFrameFields {
  /** u32 LE at offset 0: zlib CRC-32 of the rest of the packet (magic, counter and data). */
  crc: number;
  /** u32 LE at offset 4: the session's magic number from the server init; a packet with another is dropped. */
  magic: number;
}

/** Fields of a UDP input packet as buffer-layout sees them. */
export interface FceuUdpInputFields {
  /** u32 LE at offset 0: zlib CRC-32 of the rest of the packet (magic, counter and controller byte). */
  crc: number;
  /** u32 LE at offset 4: the session's magic number from the server init; a packet with another is dropped. */
  magic: number;
  /** u32 LE at offset 8: the client's packet counter, linear from 0; the server uses the highest it has seen. */
  counter: number;
  /** u8 at offset 12: this client's controller byte. */
  controller: number;
}

/** Fields of a server→client text message as buffer-layout sees them. */
export interface FceuServerTextFields {
  /** u32 LE at offset 0: always 0xFFFFFFFF, which marks a text message on the TCP stream. */
  counter: number;
  /** u32 LE at offset 4: the text's length in bytes, not counting its NUL (which is sent). */
  length: number;
  /** `length` bytes from offset 8: one line of text, one Latin-1 character per byte. */
  text: Uint8Array;
  /** u8 after the text: the terminating 0. */
  nul: number;
}

/** Server→client init: udp port, player, magic. */
export const fceuServerInitLayout: Layout<FceuServerInitFields> = struct<FceuServerInitFields>([
  u32('udpPort'),
  u32('player'),
  u32('magic'),
]);

/** Client→server init: udp port. */
export const fceuClientInitLayout: Layout<{
  /** u32 LE at offset 0, the whole 4-byte message: the UDP port the client listens on (0–65535). */
  udpPort: number;
}> = struct<{ udpPort: number }>([u32('udpPort')]);

/** UDP packet with server→client frame data. */
export const fceuUdpFrameLayout: Layout<FceuUdpFrameFields> = struct<FceuUdpFrameFields>([
  u32('crc'),
  u32('magic'),
  u32('counter'),
  seq(u8(), 4, 'controllers'),
  u8('command'),
]);

/** UDP packet with a client's controller byte. */
export const fceuUdpInputLayout: Layout<FceuUdpInputFields> = struct<FceuUdpInputFields>([
  u32('crc'),
  u32('magic'),
  u32('counter'),
  u8('controller'),
]);

/** TCP packet with server→client frame data. */
export const fceuTcpFrameLayout: Layout<FceuFrameFields> = struct<FceuFrameFields>([
  u32('counter'),
  seq(u8(), 4, 'controllers'),
  u8('command'),
]);

/** Server→client text message carrying `length` bytes of text (the layout depends on it). */
export function fceuServerTextLayout(length: number): Layout<FceuServerTextFields> {
  return struct<FceuServerTextFields>([u32('counter'), u32('length'), blob(length, 'text'), u8('nul')]);
}

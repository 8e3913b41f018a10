import { blob, type Layout, seq, struct, u8, u32 } from '@solana/buffer-layout';

/*
 * buffer-layout declarations of the FCE Ultra 0.91 messages. They are the specification the
 * hand-written codecs are tested against (property tests check byte-for-byte equality); the
 * codecs themselves do not use them. buffer-layout's `u32` is little-endian, as FCE Ultra is.
 */

/** Fields of the server init message as buffer-layout sees them. */
export interface FceuServerInitFields {
  udpPort: number;
  player: number;
  magic: number;
}

/** Fields of a frame-data packet as buffer-layout sees them (`controllers` is 4 numbers). */
export interface FceuFrameFields {
  counter: number;
  controllers: number[];
  command: number;
}

/** Fields of a UDP frame packet as buffer-layout sees them. */
export interface FceuUdpFrameFields extends FceuFrameFields {
  crc: number;
  magic: number;
}

/** Fields of a UDP input packet as buffer-layout sees them. */
export interface FceuUdpInputFields {
  crc: number;
  magic: number;
  counter: number;
  controller: number;
}

/** Fields of a server→client text message as buffer-layout sees them. */
export interface FceuServerTextFields {
  counter: number;
  length: number;
  text: Uint8Array;
  nul: number;
}

/** Server→client init: udp port, player, magic. */
export const fceuServerInitLayout: Layout<FceuServerInitFields> = struct<FceuServerInitFields>([
  u32('udpPort'),
  u32('player'),
  u32('magic'),
]);

/** Client→server init: udp port. */
export const fceuClientInitLayout: Layout<{ udpPort: number }> = struct<{ udpPort: number }>([u32('udpPort')]);

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

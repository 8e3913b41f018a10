import { DecodeError, EncodeError } from '@netplay/protocol';

/*
 * Session messages. Every message starts with a type byte; numbers are big-endian.
 *
 * INPUT (1, unreliable channel, every frame to every playing peer):
 *    0 u8  type = 1
 *    1 u8  player      sender's player slot (255: none)
 *    2 u32 frame       sender's current frame
 *    6 u32 ack         next frame of the RECEIVER's player the sender still lacks
 *   10 i16 advantage   sender's local frame advantage over the receiver, in 1/16 frame
 *   12 u32 sendTime    sender's clock, ms (mod 2^32)
 *   16 u32 echoTime    the last sendTime the sender received from the receiver
 *   20 u16 echoDelay   ms between receiving echoTime and sending this (65535 = no echo)
 *   22 u8  epoch       how many LEAVE / MODE / LOAD(load) the host has broadcast (host) or the
 *                      sender has applied (others), mod 256
 *                      (a peer that has not applied them all ignores the host's inputs)
 *   23 u32 held        the sender holds every player's input for every frame before this one
 *                      (its unread frame; 0xffffffff: every input it will ever need). A frame is
 *                      final only once every member reported holding it (see final-frontier.ts).
 *   27     input stream (@netplay/protocol input-stream codec, no reference), or nothing
 *
 * CHECKSUM (2, unreliable channel, at each exchange frame to every playing peer):
 *    1 u8  repairs     host repairs the sender applied (mod 256; the host ignores checksums
 *                      computed before its last repair landed)
 *    2 u8  count       1..CHECKSUMS_PER_MESSAGE
 *    3     count × (u32 frame, u64 checksum of the state at that frame), newest first: the
 *          sender's latest exchange frames, so a lost message costs no comparison
 *
 * Control messages (reliable channel):
 *   LEAVE (3)     u8 player, u32 frame from which the player is gone, then the player's last
 *                 inputs before that frame as an input stream (or nothing)
 *   SPECTATE (4)  (spectator → host) asks to watch
 *   SYNC (5)      (host → spectator) u32 frame, u8 players, u16 inputBytes, players × u32
 *                 disconnect frame (0xffffffff: present), then the savestate of that frame
 *   CONFIRMED (6) (host → spectator) an input stream of whole frames (players × inputBytes each)
 *   LOAD (7)      (host → peers) u8 reason (0 repair, 1 load), u32 frame, then the savestate
 *   PAUSE (8)     (host → peers) u8 paused (0/1), u32 host frame
 *   JOINED (9)    (host → players) u32 frame a spectator joined at
 *   MODE (10)     (host → peers) u8 player | 0x80 if it plays from now, u32 frame, then (when it
 *                 stops playing) its last inputs as an input stream
 *   MODE_REQUEST (11) (peer → host) u8 1 to play, 0 to spectate, u32 frame it stops at
 *   REPORT_REQUEST (12) (host → peers) u8 player whose link broke, u32 0: stop taking its
 *                 inputs and report them
 *   REPORT (13)   (peer → host) u8 player, u32 next frame missing, then its last inputs held as
 *                 an input stream
 *   DROPPED (14)  (any peer → a peer) no body: the sender no longer takes this peer's messages
 *                 (it was silent or stalled too long); the receiver drops the sender too
 */

/** Message type bytes. */
export const MessageType = {
  Input: 1,
  Checksum: 2,
  Leave: 3,
  Spectate: 4,
  Sync: 5,
  Confirmed: 6,
  Load: 7,
  Pause: 8,
  Joined: 9,
  Mode: 10,
  ModeRequest: 11,
  ReportRequest: 12,
  Report: 13,
  Dropped: 14,
} as const;

/** Bytes before the input stream of an INPUT message. */
export const INPUT_HEADER_BYTES = 27;
/** `echoDelay` value meaning "no echo yet". */
export const NO_ECHO = 0xffff;
/** Disconnect frame meaning "present" in SYNC. */
export const PRESENT = 0xffffffff;

/** The fixed fields of an INPUT message (reused object when decoding). */
export interface InputHeader {
  player: number;
  frame: number;
  ack: number;
  advantage16: number;
  sendTime: number;
  echoTime: number;
  echoDelay: number;
  epoch: number;
  /** The sender holds every input of every frame before this one (its unread frame, capped to u32). */
  held: number;
}

/** An {@link InputHeader} of zeros, to be filled by `readInputHeader` or set field by field. */
export function blankInputHeader(): InputHeader {
  return { player: 0, frame: 0, ack: 0, advantage16: 0, sendTime: 0, echoTime: 0, echoDelay: 0, epoch: 0, held: 0 };
}

export function writeU16(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 8;
  b[o + 1] = v;
}

export function writeU32(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 24;
  b[o + 1] = v >>> 16;
  b[o + 2] = v >>> 8;
  b[o + 3] = v;
}

export function readU16(b: Uint8Array, o: number): number {
  return (b[o]! << 8) | b[o + 1]!;
}

export function readU32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

/** Throws `DecodeError('truncated')` unless `bytes` holds at least `n` bytes. */
export function need(bytes: Uint8Array, n: number, what: string): void {
  if (bytes.length < n)
    throw new DecodeError('truncated', bytes.length, `${what} needs ${n} bytes, got ${bytes.length}`);
}

/** Writes the fixed part of an INPUT message; the input stream (if any) follows at {@link INPUT_HEADER_BYTES}. */
export function writeInputHeader(b: Uint8Array, h: InputHeader): void {
  b[0] = MessageType.Input;
  b[1] = h.player;
  writeU32(b, 2, h.frame);
  writeU32(b, 6, h.ack);
  writeU16(b, 10, h.advantage16 & 0xffff);
  writeU32(b, 12, h.sendTime);
  writeU32(b, 16, h.echoTime);
  writeU16(b, 20, h.echoDelay);
  b[22] = h.epoch;
  writeU32(b, 23, h.held);
}

/** Reads the fixed part of an INPUT message into `h`. */
export function readInputHeader(b: Uint8Array, h: InputHeader): void {
  need(b, INPUT_HEADER_BYTES, 'INPUT');
  h.player = b[1]!;
  h.frame = readU32(b, 2);
  h.ack = readU32(b, 6);
  h.advantage16 = (readU16(b, 10) << 16) >> 16;
  h.sendTime = readU32(b, 12);
  h.echoTime = readU32(b, 16);
  h.echoDelay = readU16(b, 20);
  h.epoch = b[22]!;
  h.held = readU32(b, 23);
}

/** Checksums one CHECKSUM message carries at most (the sender's latest exchange frames). */
export const CHECKSUMS_PER_MESSAGE = 8;

/** One checksum of a CHECKSUM message. */
export interface FrameChecksum {
  readonly frame: number;
  readonly checksum: bigint;
}

/** CHECKSUM: how many host repairs the sender has applied (mod 256), and 1..8 frame checksums. */
export function encodeChecksums(repairs: number, sums: readonly FrameChecksum[]): Uint8Array {
  if (sums.length < 1 || sums.length > CHECKSUMS_PER_MESSAGE)
    throw new EncodeError('out-of-range', `${sums.length} checksums, expected 1..${CHECKSUMS_PER_MESSAGE}`);
  const b = new Uint8Array(3 + 12 * sums.length);
  const view = new DataView(b.buffer);
  b[0] = MessageType.Checksum;
  b[1] = repairs;
  b[2] = sums.length;
  for (let i = 0; i < sums.length; i++) {
    writeU32(b, 3 + 12 * i, sums[i]!.frame);
    view.setBigUint64(7 + 12 * i, sums[i]!.checksum);
  }
  return b;
}

export function decodeChecksums(b: Uint8Array): { repairs: number; sums: FrameChecksum[] } {
  need(b, 3, 'CHECKSUM');
  const count = b[2]!;
  if (count < 1 || count > CHECKSUMS_PER_MESSAGE) throw new DecodeError('bad-value', 2, `${count} checksums`);
  need(b, 3 + 12 * count, 'CHECKSUM');
  if (b.length !== 3 + 12 * count)
    throw new DecodeError('trailing-bytes', 3 + 12 * count, `CHECKSUM of ${count} is ${3 + 12 * count} bytes`);
  const view = new DataView(b.buffer, b.byteOffset, b.length);
  const sums: FrameChecksum[] = [];
  for (let i = 0; i < count; i++) sums.push({ frame: readU32(b, 3 + 12 * i), checksum: view.getBigUint64(7 + 12 * i) });
  return { repairs: b[1]!, sums };
}

/** A message made of a type byte, a u8, a u32 and a tail of bytes (LEAVE, LOAD, PAUSE). */
export function encodeByteFrameTail(
  type: number,
  byte: number,
  frame: number,
  tail: Uint8Array | undefined,
): Uint8Array {
  const b = new Uint8Array(6 + (tail?.length ?? 0));
  b[0] = type;
  b[1] = byte;
  writeU32(b, 2, frame);
  if (tail !== undefined) b.set(tail, 6);
  return b;
}

export function decodeByteFrameTail(b: Uint8Array, what: string): { byte: number; frame: number; tail: Uint8Array } {
  need(b, 6, what);
  return { byte: b[1]!, frame: readU32(b, 2), tail: b.subarray(6) };
}

/** The fields of a SYNC message. */
export interface SyncMessage {
  frame: number;
  players: number;
  inputBytes: number;
  /** Per player: the frame from which it is gone, or {@link PRESENT}. */
  disconnectFrames: number[];
  state: Uint8Array;
}

export function encodeSync(m: SyncMessage): Uint8Array {
  const head = 8 + 4 * m.players;
  const b = new Uint8Array(head + m.state.length);
  b[0] = MessageType.Sync;
  writeU32(b, 1, m.frame);
  b[5] = m.players;
  writeU16(b, 6, m.inputBytes);
  for (let p = 0; p < m.players; p++) writeU32(b, 8 + 4 * p, m.disconnectFrames[p] ?? PRESENT);
  b.set(m.state, head);
  return b;
}

export function decodeSync(b: Uint8Array): SyncMessage {
  need(b, 8, 'SYNC');
  const players = b[5]!;
  const inputBytes = readU16(b, 6);
  if (players === 0) throw new DecodeError('bad-value', 5, 'SYNC with 0 players');
  if (inputBytes === 0) throw new DecodeError('bad-value', 6, 'SYNC with 0 input bytes');
  const head = 8 + 4 * players;
  need(b, head, 'SYNC');
  const disconnectFrames: number[] = [];
  for (let p = 0; p < players; p++) disconnectFrames.push(readU32(b, 8 + 4 * p));
  return { frame: readU32(b, 1), players, inputBytes, disconnectFrames, state: b.slice(head) };
}

import { DecodeError } from '@netplay/protocol';

/*
 * Session messages. Every message starts with a type byte; numbers are big-endian.
 *
 * INPUT (0x11, unreliable channel; wire version 2): see input-message.ts. It carries the
 * sender's frame, acks, time sync, the RTT echo, `held`, the host decision count, the checksum
 * exchange and the inputs, in one message per peer per send. Version 1's INPUT (1) and CHECKSUM
 * (2) are answered with RollbackError('version').
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
 *   ENTER (15)    (host → peers) u8 player, u32 entry frame, u32 state frame, then the UTF-8 id of
 *                 the peer that plays the slot from the entry frame (player-entries.ts)
 *   WELCOME (16)  (never sent by the session: the bytes `admitPlayer` returns for the joiner, which
 *                 the application ships with the state) see player-entries.ts
 *   DECISION (18) (host → peers) u8 the host's decision count with this decision (mod 256), then a
 *                 LEAVE, ENTER, MODE or LOAD (reason 1): applied only as the next decision expected;
 *                 sent once on the reliable channel, re-sent on the unreliable one (up to 256 bytes)
 *                 to a peer whose INPUT shows it lacks it (decision-log.ts)
 *   END (19)      (any → peers of its group) u8 flags (0x01 ASK: answer with yours, 0x02 the sender
 *                 is the host, 0x04 FINAL: the sender ended at this frame), u32 the sender's last
 *                 final frame: the end agreement of a group without quorum (end-agreement.ts)
 *   LOST (20)     (peer → its host) u8 player: the sender dropped that player (no life for
 *                 `disconnectMs`, or its DROPPED); the host removes it or the sender (drop-reports.ts)
 */

/** Message type bytes. */
export const MessageType = {
  /** Version-2 INPUT (input-message.ts). Version 1 used 1 (INPUT) and 2 (CHECKSUM). */
  Input: 0x11,
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
  Enter: 15,
  Welcome: 16,
  Decision: 18,
  End: 19,
  Lost: 20,
} as const;

/** Disconnect frame meaning "present" in SYNC. */
export const PRESENT = 0xffffffff;

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

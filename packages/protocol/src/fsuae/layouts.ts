import { blob, type Layout, nu64be, struct, u8, u16be, u32be } from '@solana/buffer-layout';

/*
 * buffer-layout declarations of the FS-UAE messages (our layout, big-endian): the oracle the
 * hand-written codec is tested against. The codec itself does not use them.
 */

/** Input event fields as buffer-layout sees them. */
export interface FsUaeInputEventFields {
  /** u8 at offset 0: 0x01, an input event. */
  type: number;
  /** u32 at offset 1: the frame at which every peer applies the event. */
  targetFrame: number;
  /** u32 at offset 5: the sender's random key that orders the events of one frame. */
  orderKey: number;
  /** u16 at offset 9: the sender's unique client id, which breaks ties of `orderKey`. */
  clientId: number;
  /** u8 at offset 11: the number of payload bytes that follow, 0–255. */
  payloadLength: number;
  /** The event itself from offset 12 (e.g. FS-UAE's input event code and state), `payloadLength` bytes. */
  payload: Uint8Array;
}

/** The input event carrying `payloadLength` payload bytes. */
export function fsUaeInputEventLayout(payloadLength: number): Layout<FsUaeInputEventFields> {
  return struct<FsUaeInputEventFields>([
    u8('type'),
    u32be('targetFrame'),
    u32be('orderKey'),
    u16be('clientId'),
    u8('payloadLength'),
    blob(payloadLength, 'payload'),
  ]);
}

/** Frame advance. */
export const fsUaeFrameAdvanceLayout: Layout<{
  /** u8 at offset 0: 0x02, a frame advance. */
  type: number;
  /** u32 at offset 1: the sender will schedule no more input events for this frame or any before it. */
  frame: number;
}> = struct<{ type: number; frame: number }>([u8('type'), u32be('frame')]);

/** Ping. */
export const fsUaePingLayout: Layout<{
  /** u8 at offset 0: 0x03, a ping. */
  type: number;
  /** u32 at offset 1: identifies the probe; the pong echoes it. */
  sequence: number;
  /** u64 at offset 5 (at most 2^53 − 1): the sender's clock when it sent the ping, in the sender's clock unit. */
  sentAt: number;
}> = struct<{
  type: number;
  sequence: number;
  sentAt: number;
}>([u8('type'), u32be('sequence'), nu64be('sentAt')]);

/** Pong. */
export const fsUaePongLayout: Layout<{
  /** u8 at offset 0: 0x04, a pong. */
  type: number;
  /** u32 at offset 1: the sequence of the ping answered. */
  sequence: number;
  /** u64 at offset 5: the ping's `sentAt`, echoed, so that the pinger gets the round-trip time as now − pingSentAt. */
  pingSentAt: number;
  /** u64 at offset 13 (at most 2^53 − 1): the responder's clock when it replied, for clock-offset estimates. */
  repliedAt: number;
}> = struct<{ type: number; sequence: number; pingSentAt: number; repliedAt: number }>([
  u8('type'),
  u32be('sequence'),
  nu64be('pingSentAt'),
  nu64be('repliedAt'),
]);

import { blob, type Layout, nu64be, struct, u8, u16be, u32be } from '@solana/buffer-layout';

/*
 * buffer-layout declarations of the FS-UAE messages (our layout, big-endian): the oracle the
 * hand-written codec is tested against. The codec itself does not use them.
 */

/** Input event fields as buffer-layout sees them. */
export interface FsUaeInputEventFields {
  type: number;
  targetFrame: number;
  orderKey: number;
  clientId: number;
  payloadLength: number;
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
export const fsUaeFrameAdvanceLayout: Layout<{ type: number; frame: number }> = struct<{ type: number; frame: number }>(
  [u8('type'), u32be('frame')],
);

/** Ping. */
export const fsUaePingLayout: Layout<{ type: number; sequence: number; sentAt: number }> = struct<{
  type: number;
  sequence: number;
  sentAt: number;
}>([u8('type'), u32be('sequence'), nu64be('sentAt')]);

/** Pong. */
export const fsUaePongLayout: Layout<{ type: number; sequence: number; pingSentAt: number; repliedAt: number }> =
  struct<{ type: number; sequence: number; pingSentAt: number; repliedAt: number }>([
    u8('type'),
    u32be('sequence'),
    nu64be('pingSentAt'),
    nu64be('repliedAt'),
  ]);

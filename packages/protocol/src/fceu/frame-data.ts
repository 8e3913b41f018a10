import { DecodeError } from '../errors.js';
import { isFceuCommand } from './command.js';
import type { FceuFrameData } from './packet.js';

/*
 * The two halves of reading the 5 bytes of FCE Ultra frame data (4 controller bytes, then a
 * command byte), shared by the allocating decoders and the decode-into ones so that both check the
 * same thing and report it at the same offset. Internal: not re-exported from the package.
 */

/**
 * The command byte of the frame data at `at` (read at `at + 4`, which the caller has checked is in
 * range). @throws DecodeError `unknown-type` at `at + 4` for a code the seed does not define.
 */
export function frameCommandAt(bytes: Uint8Array, at: number): number {
  const command = bytes[at + 4]!;
  if (!isFceuCommand(command)) throw new DecodeError('unknown-type', at + 4, `FCEU command ${command}`);
  return command;
}

/**
 * Writes the 4 controller bytes at `at` and `command` into `frame`, allocating nothing.
 * @throws RangeError, before writing anything, when `frame.controllers` holds fewer than 4 bytes.
 */
export function putFrameData(frame: FceuFrameData, bytes: Uint8Array, at: number, command: number): void {
  const c = frame.controllers;
  if (c.length < 4) throw new RangeError(`controllers holds ${c.length} bytes, needs 4`);
  // Byte by byte: `set(bytes.subarray(…))` would allocate a view on every call.
  c[0] = bytes[at]!;
  c[1] = bytes[at + 1]!;
  c[2] = bytes[at + 2]!;
  c[3] = bytes[at + 3]!;
  frame.command = command;
}

import { LibretroError } from './errors.js';

/**
 * A state written by `LibretroCore.saveInto`: this 24-byte header, then the core's own
 * `retro_serialize` bytes (the "raw" state RetroArch sends and hashes).
 *
 * | offset | bytes | field |
 * |---|---|---|
 * | 0 | 4 | magic `NPLR` |
 * | 4 | 2 | format version, 1 (u16 LE) |
 * | 6 | 2 | zero |
 * | 8 | 4 | core id: low 32 bits of hash64(library name, NUL, library version) (u32 LE) |
 * | 12 | 4 | content id: low 32 bits of hash64(content bytes) (u32 LE) |
 * | 16 | 4 | frame counter (u32 LE) |
 * | 20 | 4 | payload length (u32 LE) |
 */
export const STATE_HEADER_BYTES = 24;
const MAGIC = 0x524c504e; // 'NPLR' little-endian
const VERSION = 1;

/** The fields of a state header. */
export interface StateHeader {
  readonly coreId: number;
  readonly contentId: number;
  readonly frame: number;
  readonly payloadBytes: number;
}

/** Writes a header at the start of `target` (at least {@link STATE_HEADER_BYTES} long). */
export function writeStateHeader(target: Uint8Array, h: StateHeader): void {
  const v = new DataView(target.buffer, target.byteOffset, STATE_HEADER_BYTES);
  v.setUint32(0, MAGIC, true);
  v.setUint16(4, VERSION, true);
  v.setUint16(6, 0, true);
  v.setUint32(8, h.coreId, true);
  v.setUint32(12, h.contentId, true);
  v.setUint32(16, h.frame, true);
  v.setUint32(20, h.payloadBytes, true);
}

/**
 * Reads and checks the header of `state` against the core and content expected.
 * @throws LibretroError `truncated-state`, `not-a-state`, `foreign-state` or `other-content`
 */
export function readStateHeader(state: Uint8Array, coreId: number, contentId: number, file: string): StateHeader {
  if (state.length < STATE_HEADER_BYTES)
    throw new LibretroError(
      'truncated-state',
      `state of ${state.length} B is shorter than its ${STATE_HEADER_BYTES}-byte header`,
      file,
    );
  const v = new DataView(state.buffer, state.byteOffset, STATE_HEADER_BYTES);
  if (v.getUint32(0, true) !== MAGIC || v.getUint16(4, true) !== VERSION || v.getUint16(6, true) !== 0)
    throw new LibretroError(
      'not-a-state',
      'the bytes do not start with a core-libretro state header (NPLR, version 1)',
      file,
    );
  const h: StateHeader = {
    coreId: v.getUint32(8, true),
    contentId: v.getUint32(12, true),
    frame: v.getUint32(16, true),
    payloadBytes: v.getUint32(20, true),
  };
  if (h.coreId !== coreId)
    throw new LibretroError(
      'foreign-state',
      `state written by another core (core id ${hex(h.coreId)}, this core ${hex(coreId)})`,
      file,
    );
  if (h.contentId !== contentId)
    throw new LibretroError(
      'other-content',
      `state written with other content (content id ${hex(h.contentId)}, loaded ${hex(contentId)})`,
      file,
    );
  if (state.length < STATE_HEADER_BYTES + h.payloadBytes)
    throw new LibretroError(
      'truncated-state',
      `state of ${state.length} B, its header announces ${STATE_HEADER_BYTES + h.payloadBytes} B`,
      file,
    );
  return h;
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

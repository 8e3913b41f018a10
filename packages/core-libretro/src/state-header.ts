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

/** Writes a header at the start of `target` (at least {@link STATE_HEADER_BYTES} long). Allocates nothing. */
export function writeStateHeader(target: Uint8Array, h: StateHeader): void {
  writeHeaderFields(target, h.coreId, h.contentId, h.frame, h.payloadBytes);
}

/** {@link writeStateHeader} with the fields as arguments (no object). */
export function writeHeaderFields(
  t: Uint8Array,
  coreId: number,
  contentId: number,
  frame: number,
  payloadBytes: number,
): void {
  u32(t, 0, MAGIC);
  t[4] = VERSION;
  t[5] = 0;
  t[6] = 0;
  t[7] = 0;
  u32(t, 8, coreId);
  u32(t, 12, contentId);
  u32(t, 16, frame);
  u32(t, 20, payloadBytes);
}

function u32(t: Uint8Array, at: number, v: number): void {
  t[at] = v & 0xff;
  t[at + 1] = (v >>> 8) & 0xff;
  t[at + 2] = (v >>> 16) & 0xff;
  t[at + 3] = (v >>> 24) & 0xff;
}

function getU32(t: Uint8Array, at: number): number {
  return (t[at]! | (t[at + 1]! << 8) | (t[at + 2]! << 16) | (t[at + 3]! << 24)) >>> 0;
}

/** A header read into reused fields (so that loading allocates nothing). */
export class HeaderFields {
  frame = 0;
  payloadBytes = 0;
}

/**
 * {@link readStateHeader} into `out` without allocating.
 * @throws LibretroError as {@link readStateHeader}
 */
export function checkStateHeader(
  state: Uint8Array,
  coreId: number,
  contentId: number,
  file: string,
  out: HeaderFields,
): void {
  if (state.length < STATE_HEADER_BYTES)
    throw new LibretroError(
      'truncated-state',
      `state of ${state.length} B is shorter than its ${STATE_HEADER_BYTES}-byte header`,
      file,
    );
  if (getU32(state, 0) !== MAGIC || state[4] !== VERSION || state[5] !== 0 || state[6] !== 0 || state[7] !== 0)
    throw new LibretroError(
      'not-a-state',
      'the bytes do not start with a core-libretro state header (NPLR, version 1)',
      file,
    );
  const c = getU32(state, 8);
  if (c !== coreId)
    throw new LibretroError(
      'foreign-state',
      `state written by another core (core id ${hex(c)}, this core ${hex(coreId)})`,
      file,
    );
  const k = getU32(state, 12);
  if (k !== contentId)
    throw new LibretroError(
      'other-content',
      `state written with other content (content id ${hex(k)}, loaded ${hex(contentId)})`,
      file,
    );
  const payloadBytes = getU32(state, 20);
  if (state.length < STATE_HEADER_BYTES + payloadBytes)
    throw new LibretroError(
      'truncated-state',
      `state of ${state.length} B, its header announces ${STATE_HEADER_BYTES + payloadBytes} B`,
      file,
    );
  out.frame = getU32(state, 16);
  out.payloadBytes = payloadBytes;
}

/**
 * Reads and checks the header of `state` against the core and content expected.
 * @throws LibretroError `truncated-state`, `not-a-state`, `foreign-state` or `other-content`
 */
export function readStateHeader(state: Uint8Array, coreId: number, contentId: number, file: string): StateHeader {
  const out = new HeaderFields();
  checkStateHeader(state, coreId, contentId, file, out);
  return { coreId, contentId, frame: out.frame, payloadBytes: out.payloadBytes };
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

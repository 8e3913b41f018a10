import { type InflateBounded, maxInflatedBytes, pakoInflateBounded } from './bounded-inflate.js';
import { type DeflateAsync, type DeflateSync, defaultDeflateAsync, pakoDeflate } from './deflate.js';
import { pageDeltaBody, sameRange, wordViews, xorRange } from './delta-body.js';
import { DeltaError } from './errors.js';
import { hash64 } from './hash64.js';
import { pagedHash64 } from './paged-hash.js';

/** `NPDL`, the first four bytes of every delta. */
export const DELTA_MAGIC = 0x4c44504e; // 'N' 'P' 'D' 'L' read as a little-endian u32
/**
 * The delta format version `xorDelta` and `pageDelta` write: its hashes are `hash64` of the whole
 * base and target. Version 2 ({@link DELTA_VERSION_PAGED}) differs only in its hashes.
 */
export const DELTA_VERSION = 1;
/**
 * The delta format version `DeltaBase` writes: a page delta whose base and target hashes are
 * paged hashes (`pagedHash64` with the delta's page size), which can be computed from the pages
 * that changed alone. Everything else is as in version 1.
 */
export const DELTA_VERSION_PAGED = 2;
/** Size of the fixed delta header in bytes. */
export const DELTA_HEADER_BYTES = 48;
/** The default page size of page deltas. */
export const DEFAULT_PAGE_SIZE = 4096;
/** Largest target size the delta format can state (a `u32`), the most `maxTargetBytes` may be. */
export const MAX_DELTA_TARGET_BYTES = 0xffff_ffff;

/** The kind code of XOR deltas. */
export const KIND_XOR = 1;
const KIND_PAGES = 2;

/** The two kinds of delta: MAMEHub's XOR of the whole state, or only the changed pages. */
export type DeltaKind = 'xor' | 'pages';

/** Options of {@link xorDelta} and {@link pageDelta}. */
export interface DeltaOptions {
  /** The layout hash of the states (`StateRegistry.layoutHash`), checked when applying. */
  readonly layoutHash: bigint;
  /** zlib compression level 0..9 (default 6). */
  readonly level?: number;
  /**
   * `hash64(base)` when the caller already has it (a server keeps its initial state and its hash
   * for every joining player); saves one pass over the base. Must be the hash of `base`.
   */
  readonly baseHash?: bigint;
  /**
   * `hash64(current)` when the caller already has it: a `StateRegistry`'s `checksum()` is exactly
   * `hash64` of its snapshot, so a server that checks for desyncs has it every frame. Saves one
   * pass over the state. Must be the hash of `current`.
   */
  readonly targetHash?: bigint;
}

/** Options of {@link pageDelta}. */
export interface PageDeltaOptions extends DeltaOptions {
  /** Page size, a power of two from 256 to 1 MiB (default 4096). */
  readonly pageSize?: number;
  /**
   * The compressor (default pako). `nodeDeflate` from `@netplay/state/node` is node:zlib, several
   * times faster; any zlib-format compressor gives a delta every reader applies.
   */
  readonly deflate?: DeflateSync;
}

/** Options of {@link pageDeltaAsync}. */
export interface PageDeltaAsyncOptions extends Omit<PageDeltaOptions, 'deflate'> {
  /** The compressor (default: `CompressionStream('deflate')` where the platform has it, else pako). */
  readonly deflate?: DeflateAsync;
}

/** Options of {@link applyDelta}. */
export interface ApplyDeltaOptions {
  /** When given, a delta made for another layout is refused (`wrong-layout`). */
  readonly layoutHash?: bigint;
  /**
   * Refuse deltas whose target is larger (`too-large`, before anything is allocated): an integer
   * 0..{@link MAX_DELTA_TARGET_BYTES}. Default: the base's length, since a state of one layout keeps
   * its size (`Core.stateBytes`); pass the expected state size when it may differ from the base's
   * (a base that is empty or of an older layout). Bounds what a hostile delta can make us allocate.
   */
  readonly maxTargetBytes?: number;
  /** `hash64(base)` when the caller already has it; saves one pass over the base. Must be the hash of `base`. */
  readonly baseHash?: bigint;
  /**
   * For version 2 (paged) deltas: `pagedHash64(base, pageSize)` when the caller already has it
   * (`DeltaBase.hash`); saves one pass over the base. Must be that hash of `base`.
   */
  readonly basePagedHash?: bigint;
  /**
   * The inflater (default pako, `pakoInflateBounded`). `nodeInflateBounded` from
   * `@netplay/state/node` is node:zlib's, several times faster; both keep the allocation bound.
   */
  readonly inflate?: InflateBounded;
}

/** A delta's header, as {@link describeDelta} returns it. */
export interface DeltaInfo {
  /** Header byte 5: `xor` (the whole target XOR the base, deflated: `xorDelta`) or `pages` (the changed pages only: `pageDelta`, `DeltaBase`). */
  readonly kind: DeltaKind;
  /**
   * The format version: 1, hashes are `hash64` of the whole states; 2 (page deltas from a
   * `DeltaBase`), hashes are `pagedHash64` with the delta's page size.
   */
  readonly version: number;
  /** The `layoutHash` the maker passed (a `StateRegistry.layoutHash`), as an unsigned 64-bit value; `applyDelta` refuses the delta (`wrong-layout`) when given another. */
  readonly layoutHash: bigint;
  /** `hash64` of the base the delta was made from. */
  readonly baseHash: bigint;
  /** `hash64` of the state the delta rebuilds. */
  readonly targetHash: bigint;
  /** Length of the base in bytes (u32); `applyDelta` refuses a base of another length (`wrong-base`). */
  readonly baseBytes: number;
  /** Length of the rebuilt state in bytes (u32, up to {@link MAX_DELTA_TARGET_BYTES}); `applyDelta` refuses it (`too-large`) above its `maxTargetBytes`, by default the base's length. */
  readonly targetBytes: number;
  /** Page size of a page delta; 0 for an XOR delta. */
  readonly pageSize: number;
  /** Number of pages listed in a page delta; 0 for an XOR delta. */
  readonly pageCount: number;
  /** Size of the zlib stream after the header. */
  readonly compressedBytes: number;
}

/** Checks a deflate level 0..9. */
export function checkLevel(level: number): number {
  if (!Number.isInteger(level) || level < 0 || level > 9)
    throw new DeltaError('bad-argument', `deflate level must be 0..9, got ${level}`);
  return level;
}

/** Refuses a state the delta format cannot describe (sizes are u32). */
export function checkSize(bytes: Uint8Array, what: string): void {
  if (bytes.length > 0xffff_ffff) throw new DeltaError('too-large', `${what} exceeds 4 GiB`);
}

/** The fields of a delta's header that its maker supplies. */
export interface DeltaHeaderFields {
  readonly version: number;
  readonly kind: number;
  readonly pageShift: number;
  readonly layoutHash: bigint;
  readonly baseHash: bigint;
  readonly targetHash: bigint;
  readonly baseBytes: number;
  readonly targetBytes: number;
  readonly pageCount: number;
}

/** A delta: the 48-byte header of `h`, then the zlib stream `z`. */
export function writeDelta(h: DeltaHeaderFields, z: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(DELTA_HEADER_BYTES + z.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, DELTA_MAGIC, true);
  out[4] = h.version;
  out[5] = h.kind;
  out[6] = h.pageShift;
  out[7] = 0;
  dv.setBigUint64(8, BigInt.asUintN(64, h.layoutHash), true);
  dv.setBigUint64(16, BigInt.asUintN(64, h.baseHash), true);
  dv.setBigUint64(24, BigInt.asUintN(64, h.targetHash), true);
  dv.setUint32(32, h.baseBytes, true);
  dv.setUint32(36, h.targetBytes, true);
  dv.setUint32(40, h.pageCount, true);
  dv.setUint32(44, z.length, true);
  out.set(z, DELTA_HEADER_BYTES);
  return out;
}

/** A version 1 delta (whole-state `hash64`s, computed unless `options` gives them) around the zlib stream `z`. */
export function writeHeader(
  kind: number,
  pageShift: number,
  options: DeltaOptions,
  base: Uint8Array,
  current: Uint8Array,
  pageCount: number,
  z: Uint8Array,
): Uint8Array<ArrayBuffer> {
  return writeDelta(
    {
      version: DELTA_VERSION,
      kind,
      pageShift,
      layoutHash: options.layoutHash,
      baseHash: options.baseHash ?? hash64(base),
      targetHash: options.targetHash ?? hash64(current),
      baseBytes: base.length,
      targetBytes: current.length,
      pageCount,
    },
    z,
  );
}

/** The kind code of page deltas. */
export const KIND_PAGES_CODE = KIND_PAGES;

/**
 * Our delta: the state split into pages (default 4 KiB); only the pages that differ from the
 * base are sent, with their indexes, each page as XOR with the base page (mostly zeros when a
 * few bytes changed), all deflated together. Finding the pages is a word compare of the two
 * states, so the cost is dominated by the size of the change, not of the state.
 */
export function pageDelta(base: Uint8Array, current: Uint8Array, options: PageDeltaOptions): Uint8Array<ArrayBuffer> {
  const { shift, level, changed, count } = findChangedPages(base, current, options);
  const body = pageDeltaBody(base, current, 1 << shift, changed, count);
  const z = (options.deflate ?? pakoDeflate)(body, level);
  return writeHeader(KIND_PAGES, shift, options, base, current, count, z);
}

/**
 * {@link pageDelta} with an asynchronous compressor: by default the platform's native deflate
 * (`CompressionStream`, in browsers and Node), else pako. Same bytes as `pageDelta` up to the
 * compressor's choices: every delta reader applies either. The pages and hashes are read before
 * it returns, so `current` may change while the promise is pending.
 */
export async function pageDeltaAsync(
  base: Uint8Array,
  current: Uint8Array,
  options: PageDeltaAsyncOptions,
): Promise<Uint8Array<ArrayBuffer>> {
  const { shift, level, changed, count } = findChangedPages(base, current, options);
  const body = pageDeltaBody(base, current, 1 << shift, changed, count);
  const baseHash = options.baseHash ?? hash64(base);
  const targetHash = options.targetHash ?? hash64(current);
  const z = await (options.deflate ?? defaultDeflateAsync)(body, level);
  return writeHeader(KIND_PAGES, shift, { ...options, baseHash, targetHash }, base, current, count, z);
}

/** Checks a page size and returns log2 of it. */
export function pageShiftOf(pageSize: number): number {
  const shift = Math.log2(pageSize);
  if (!Number.isInteger(shift) || shift < 8 || shift > 20)
    throw new DeltaError('bad-argument', `page size must be a power of two from 256 to 1 MiB, got ${pageSize}`);
  return shift;
}

/** Checks a deflate level (default 6). */
export function deflateLevelOf(level: number | undefined): number {
  return checkLevel(level ?? 6);
}

function findChangedPages(
  base: Uint8Array,
  current: Uint8Array,
  options: Omit<PageDeltaOptions, 'deflate'>,
): { shift: number; level: number; changed: Uint32Array; count: number } {
  checkSize(base, 'base');
  checkSize(current, 'state');
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const shift = pageShiftOf(pageSize);
  const level = checkLevel(options.level ?? 6);
  const n = current.length;
  const pages = Math.ceil(n / pageSize);
  const words = wordViews(base, current);
  const changed = new Uint32Array(pages);
  let count = 0;
  for (let p = 0; p < pages; p++) {
    const start = p * pageSize;
    if (!sameRange(base, current, start, Math.min(n, start + pageSize), words?.wa, words?.wb)) changed[count++] = p;
  }
  return { shift, level, changed, count };
}

function u32(b: Uint8Array, o: number): number {
  return (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
}

function u64(b: Uint8Array, o: number): bigint {
  return (BigInt(u32(b, o + 4)) << 32n) | BigInt(u32(b, o));
}

/** Parses and checks a delta's header (not its compressed body). Throws only {@link DeltaError}. */
export function describeDelta(delta: Uint8Array): DeltaInfo {
  if (delta.length < DELTA_HEADER_BYTES)
    throw new DeltaError('corrupt', `delta of ${delta.length} bytes is shorter than its header`);
  if (u32(delta, 0) !== DELTA_MAGIC) throw new DeltaError('corrupt', 'not a netplay delta (magic NPDL)');
  const version = delta[4]!;
  if (version !== DELTA_VERSION && version !== DELTA_VERSION_PAGED)
    throw new DeltaError('corrupt', `delta format version ${version} is not supported`);
  const kindCode = delta[5];
  if (kindCode !== KIND_XOR && kindCode !== KIND_PAGES)
    throw new DeltaError('corrupt', `unknown delta kind ${kindCode}`);
  if (version === DELTA_VERSION_PAGED && kindCode !== KIND_PAGES)
    throw new DeltaError('corrupt', 'a version 2 delta must be a page delta');
  const shift = delta[6]!;
  if (kindCode === KIND_XOR ? shift !== 0 : shift < 8 || shift > 20)
    throw new DeltaError('corrupt', `bad page size exponent ${shift}`);
  if (delta[7] !== 0) throw new DeltaError('corrupt', 'reserved byte is not zero');
  const baseBytes = u32(delta, 32);
  const targetBytes = u32(delta, 36);
  const pageCount = u32(delta, 40);
  const compressedBytes = u32(delta, 44);
  const pageSize = kindCode === KIND_PAGES ? 2 ** shift : 0;
  const maxPages = kindCode === KIND_PAGES ? Math.ceil(targetBytes / pageSize) : 0;
  if (pageCount > maxPages) throw new DeltaError('corrupt', `${pageCount} pages listed, the target has ${maxPages}`);
  if (compressedBytes !== delta.length - DELTA_HEADER_BYTES)
    throw new DeltaError(
      'corrupt',
      `compressed size ${compressedBytes} but ${delta.length - DELTA_HEADER_BYTES} bytes follow the header`,
    );
  return {
    kind: kindCode === KIND_XOR ? 'xor' : 'pages',
    version,
    layoutHash: u64(delta, 8),
    baseHash: u64(delta, 16),
    targetHash: u64(delta, 24),
    baseBytes,
    targetBytes,
    pageSize,
    pageCount,
    compressedBytes,
  };
}

/**
 * The largest target {@link applyDelta} accepts: `maxTargetBytes`, checked, or the base's length.
 * @throws DeltaError `bad-argument` for a `maxTargetBytes` that is not an integer 0..2^32−1.
 */
function targetLimit(base: Uint8Array, maxTargetBytes: number | undefined): number {
  if (maxTargetBytes === undefined) return base.length;
  if (!Number.isInteger(maxTargetBytes) || maxTargetBytes < 0 || maxTargetBytes > MAX_DELTA_TARGET_BYTES)
    throw new DeltaError('bad-argument', `maxTargetBytes must be an integer 0..2^32-1, got ${maxTargetBytes}`);
  return maxTargetBytes;
}

/**
 * Rebuilds the state a delta (of either kind) was made for, from the same base. Checks, before
 * allocating or inflating anything: the header, the layout hash (when `options.layoutHash` is
 * given), the base size, that the target size is within `maxTargetBytes` (default: the base's
 * length) and the base hash. Inflation is bounded by the sizes the header states; the result is
 * checked against the target hash. What it allocates is bounded by the limit: the result, plus
 * for a page delta a buffer of at most the limit and 4 bytes per 256 of it, plus zlib's fixed state.
 * @returns a new buffer of the target size.
 * @throws DeltaError only: `corrupt`, `wrong-layout`, `wrong-base`, `too-large` or `bad-argument`
 *   (a bad `maxTargetBytes`).
 */
export function applyDelta(
  base: Uint8Array,
  delta: Uint8Array,
  options: ApplyDeltaOptions = {},
): Uint8Array<ArrayBuffer> {
  const max = targetLimit(base, options.maxTargetBytes);
  const info = describeDelta(delta);
  if (options.layoutHash !== undefined && info.layoutHash !== BigInt.asUintN(64, options.layoutHash))
    throw new DeltaError(
      'wrong-layout',
      `delta made for layout ${info.layoutHash.toString(16)}, not ${BigInt.asUintN(64, options.layoutHash).toString(16)}`,
    );
  if (info.baseBytes !== base.length)
    throw new DeltaError('wrong-base', `delta made from a ${info.baseBytes}-byte base, given ${base.length} bytes`);
  if (info.targetBytes > max)
    throw new DeltaError(
      'too-large',
      `delta target of ${info.targetBytes} bytes exceeds the limit of ${max} bytes (${
        options.maxTargetBytes === undefined ? "the base's size; pass maxTargetBytes to allow more" : 'maxTargetBytes'
      })`,
    );
  // The stream inflates to the whole target (XOR), or to the page list and the listed pages, and no
  // zlib stream inflates to more than 1032 times its size: a header stating more is refused here.
  const n = info.targetBytes;
  const { pageSize, pageCount } = info;
  const indexBytes = pageCount * 4;
  const least = info.kind === 'xor' ? n : indexBytes;
  const most = Math.min(
    info.kind === 'xor' ? n : indexBytes + Math.min(pageCount * pageSize, n),
    maxInflatedBytes(info.compressedBytes),
  );
  if (least > most)
    throw new DeltaError(
      'corrupt',
      `a ${info.compressedBytes}-byte zlib stream cannot inflate to the ${least} bytes stated`,
    );
  const paged = info.version === DELTA_VERSION_PAGED;
  const baseHash = paged ? (options.basePagedHash ?? pagedHash64(base, pageSize)) : (options.baseHash ?? hash64(base));
  if (baseHash !== info.baseHash)
    throw new DeltaError('wrong-base', 'the base is not the one the delta was made from (hash differs)');
  const stream = delta.subarray(DELTA_HEADER_BYTES);
  const common = Math.min(n, base.length);
  const inflate = options.inflate ?? pakoInflateBounded;
  let result: Uint8Array<ArrayBuffer>;
  if (info.kind === 'xor') {
    // The inflater's buffer of at most n bytes becomes the result.
    result = inflate(stream, n);
    if (result.length !== n) throw new DeltaError('corrupt', `XOR data of ${result.length} bytes, the target has ${n}`);
    xorRange(base, result, 0, common, result);
  } else {
    // The indexes and every listed page at full size (never more than the target plus one page).
    const body = inflate(stream, most);
    const produced = body.length;
    if (produced < indexBytes || produced > most)
      throw new DeltaError('corrupt', `page list cut short or page data over ${most} bytes`);
    result = new Uint8Array(n);
    result.set(base.subarray(0, common));
    let o = indexBytes;
    let previous = -1;
    for (let k = 0; k < pageCount; k++) {
      const p = u32(body, k * 4);
      if (p <= previous || p * pageSize >= n)
        throw new DeltaError('corrupt', `page index ${p} out of order or past the target`);
      previous = p;
      const start = p * pageSize;
      const len = Math.min(n, start + pageSize) - start;
      if (o + len > produced) throw new DeltaError('corrupt', 'page data cut short');
      for (let i = 0; i < len; i++) result[start + i]! ^= body[o + i]!;
      o += len;
    }
    if (o !== produced) throw new DeltaError('corrupt', `${produced - o} bytes after the last page`);
  }
  if ((paged ? pagedHash64(result, pageSize) : hash64(result)) !== info.targetHash)
    throw new DeltaError('corrupt', "the rebuilt state does not match the delta's target hash");
  return result;
}

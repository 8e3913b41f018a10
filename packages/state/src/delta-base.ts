import { type DeflateAsync, type DeflateSync, defaultDeflateAsync, pakoDeflate } from './deflate.js';
import {
  DEFAULT_PAGE_SIZE,
  DELTA_VERSION_PAGED,
  deflateLevelOf,
  KIND_PAGES_CODE,
  pageShiftOf,
  writeDelta,
} from './delta.js';
import { pageDeltaBody, type RangeCompare, sameRange, wordViews } from './delta-body.js';
import { DeltaError } from './errors.js';
import { hash64 } from './hash64.js';
import type { DirtyPageSet } from './page-tracker.js';
import { pageCountOf, pageHashesInto, writePageHash } from './paged-hash.js';

/** Options of the {@link DeltaBase} constructor. */
export interface DeltaBaseOptions {
  /** The layout hash of the states (`StateRegistry.layoutHash`), checked when applying. */
  readonly layoutHash: bigint;
  /** Page size, a power of two from 256 to 1 MiB (default 4096). */
  readonly pageSize?: number;
  /**
   * How pages are compared with the base when looking for changes (default: a JavaScript word
   * compare). `nodeRangeCompare()` from `@netplay/state/node` is native `memcmp`.
   */
  readonly compare?: RangeCompare;
}

/** Options of {@link DeltaBase.pageDelta}. */
export interface BasePageDeltaOptions {
  /**
   * The pages that may differ from the base (a `PageTracker`'s `since(checkpoint)`, or a core's):
   * the others are neither read nor hashed. Must cover every change, and have the base's page size.
   * Without it every page is compared with the base.
   */
  readonly dirty?: DirtyPageSet;
  /** zlib compression level 0..9 (default 6). */
  readonly level?: number;
  /** The compressor (default pako; `nodeDeflate` from `@netplay/state/node` is node:zlib). */
  readonly deflate?: DeflateSync;
}

/** Options of {@link DeltaBase.pageDeltaAsync}. */
export interface BasePageDeltaAsyncOptions extends Omit<BasePageDeltaOptions, 'deflate'> {
  /** The compressor (default: `CompressionStream('deflate')` where the platform has it, else pako). */
  readonly deflate?: DeflateAsync;
}

/** What both delta makers compute before compressing. */
interface Prepared {
  readonly body: Uint8Array;
  readonly level: number;
  readonly count: number;
  readonly targetHash: bigint;
}

/**
 * A base state kept for making page deltas against it (a late-join server's initial state), with
 * the hash of each of its pages computed once. Its deltas (format version 2) carry paged hashes
 * (`pagedHash64`), so making one reads only the pages that may differ: with a dirty-page set, a
 * delta of a 128 MiB state with 1 % of its pages changed reads about 1 % of it (no whole-state
 * hash, no whole-state compare). `applyDelta` reads both versions.
 *
 * `bytes` is kept by reference: leave it unchanged while the base is in use.
 */
export class DeltaBase {
  /** The base state. */
  readonly bytes: Uint8Array;
  /** The page size of its deltas. */
  readonly pageSize: number;
  /** The layout hash written into its deltas. */
  readonly layoutHash: bigint;
  /** `pagedHash64(bytes, pageSize)`: pass it to `applyDelta` as `basePagedHash` to save a pass. */
  readonly hash: bigint;
  private readonly shift: number;
  /** hash64 of every page of the base, 8 bytes each (little-endian). */
  private readonly pageHashes: Uint8Array;
  private readonly compare: RangeCompare | undefined;

  /** Hashes every page of `bytes` once (one pass over the base). */
  constructor(bytes: Uint8Array, options: DeltaBaseOptions) {
    if (bytes.length > 0xffff_ffff) throw new DeltaError('too-large', 'base exceeds 4 GiB');
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.shift = pageShiftOf(this.pageSize);
    this.bytes = bytes;
    this.layoutHash = options.layoutHash;
    this.compare = options.compare;
    this.pageHashes = pageHashesInto(
      bytes,
      this.pageSize,
      new Uint8Array(pageCountOf(bytes.length, this.pageSize) * 8),
    );
    this.hash = hash64(this.pageHashes);
  }

  /**
   * A page delta (version 2) rebuilding `current` from this base, compressed synchronously
   * (pako by default). Reads only the pages `options.dirty` says may differ (all without it).
   */
  pageDelta(current: Uint8Array, options: BasePageDeltaOptions = {}): Uint8Array<ArrayBuffer> {
    const p = this.prepare(current, options);
    return this.finish(current, p, (options.deflate ?? pakoDeflate)(p.body, p.level));
  }

  /**
   * {@link pageDelta} with an asynchronous compressor: by default the platform's native deflate
   * (`CompressionStream`), else pako. `current` is read before this returns, so it may change
   * while the promise is pending.
   */
  async pageDeltaAsync(current: Uint8Array, options: BasePageDeltaAsyncOptions = {}): Promise<Uint8Array<ArrayBuffer>> {
    const p = this.prepare(current, options);
    return this.finish(current, p, await (options.deflate ?? defaultDeflateAsync)(p.body, p.level));
  }

  private finish(current: Uint8Array, p: Prepared, z: Uint8Array): Uint8Array<ArrayBuffer> {
    return writeDelta(
      {
        version: DELTA_VERSION_PAGED,
        kind: KIND_PAGES_CODE,
        pageShift: this.shift,
        layoutHash: this.layoutHash,
        baseHash: this.hash,
        targetHash: p.targetHash,
        baseBytes: this.bytes.length,
        targetBytes: current.length,
        pageCount: p.count,
      },
      z,
    );
  }

  private prepare(current: Uint8Array, options: BasePageDeltaOptions | BasePageDeltaAsyncOptions): Prepared {
    if (current.length > 0xffff_ffff) throw new DeltaError('too-large', 'state exceeds 4 GiB');
    const level = deflateLevelOf(options.level);
    const dirty = options.dirty;
    const ps = this.pageSize;
    if (dirty !== undefined && dirty.pageSize !== ps)
      throw new DeltaError('bad-argument', `dirty pages of ${dirty.pageSize} bytes, the base's pages are ${ps}`);
    const base = this.bytes;
    const baseLength = base.length;
    const n = current.length;
    const pages = pageCountOf(n, ps);
    const basePages = pageCountOf(baseLength, ps);
    const words = wordViews(base, current);
    const wa = words?.wa;
    const wb = words?.wb;
    const compare = this.compare;
    // The target's page hashes: the base's, with the pages that differ (or that the base does not
    // hold whole) rehashed from `current`.
    const hashes = new Uint8Array(pages * 8);
    hashes.set(this.pageHashes.subarray(0, Math.min(pages, basePages) * 8));
    const changed = new Uint32Array(pages);
    let count = 0;
    for (let p = 0; p < pages; p++) {
      const start = p * ps;
      const end = Math.min(n, start + ps);
      const sameExtent = p < basePages && Math.min(baseLength, start + ps) === end;
      if (sameExtent && dirty !== undefined && !dirty.mayDiffer(p)) continue;
      const differs =
        compare !== undefined && end <= baseLength
          ? !compare(base, current, start, end)
          : !sameRange(base, current, start, end, wa, wb);
      if (differs) changed[count++] = p;
      if (differs || !sameExtent) writePageHash(current, ps, p, hashes);
    }
    return {
      body: pageDeltaBody(base, current, ps, changed, count),
      level,
      count,
      targetHash: hash64(hashes),
    };
  }
}

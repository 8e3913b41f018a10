import { StateError } from './errors.js';
import {
  type DirectoryEntry,
  encodeDirectory,
  encodePrefix,
  HEADER_BYTES,
  MAX_SECTION_BYTES,
} from './snapshot-format.js';
import { type EntryInfo, formatSignature, type MemoryRegion, type ScalarAccessor } from './types.js';

/** An entry's kind: a typed array, a scalar accessor, or a memory region. */
export const KIND_ARRAY = 0;
export const KIND_SCALAR = 1;
export const KIND_REGION = 2;

/** A registered entry, as the registry keeps it. */
export interface Entry extends EntryInfo {
  readonly key: string;
  readonly code: number;
  readonly kind: number;
  /** KIND_ARRAY: a byte view over the registered array, made once at registration. */
  readonly bytes: Uint8Array | undefined;
  readonly accessor: ScalarAccessor | undefined;
  readonly region: MemoryRegion | undefined;
  /** KIND_REGION: the buffer of the last view and the view. */
  regionBuffer: ArrayBufferLike | undefined;
  regionBytes: Uint8Array;
}

/** The frozen layout of a snapshot (or NVRAM blob): what saving and loading walk. */
export interface Layout {
  readonly entries: readonly Entry[];
  /** Offset of each entry's data in the snapshot. */
  readonly offsets: readonly number[];
  /** Header and directory, written in front of every snapshot. */
  readonly prefix: Uint8Array;
  /** Where each directory record starts, relative to the directory. */
  readonly recordStarts: readonly number[];
  readonly layoutHash: bigint;
  readonly totalBytes: number;
  readonly flags: number;
  /** Parallel to `entries`: the kind of each entry (hot loops read these, not the entry objects). */
  readonly kinds: Uint8Array;
  /** Parallel to `entries`: the byte view of array entries, `EMPTY` for the others. */
  readonly arrays: readonly Uint8Array[];
  /** Parallel to `entries`: the byte length of each entry. */
  readonly lengths: readonly number[];
  /** The directory as 32-bit words (for a word-wise comparison on load). */
  readonly directoryWords: Int32Array;
  /** Views into source snapshots, so that repeated loads from the same buffer allocate nothing. */
  readonly sourceViews: WeakMap<Uint8Array, Uint8Array[]>;
}

/**
 * Makes (and caches) the views of each entry's bytes in a source snapshot. A function of its own:
 * the closure would otherwise make every call of `loadLayout` allocate a context.
 */
export function sourceViews(layout: Layout, bytes: Uint8Array): Uint8Array[] {
  const { offsets, lengths } = layout;
  const views = layout.entries.map((e, i) =>
    e.kind === KIND_SCALAR ? EMPTY : bytes.subarray(offsets[i]!, offsets[i]! + lengths[i]!),
  );
  layout.sourceViews.set(bytes, views);
  return views;
}

/** Throws StateError('size-changed') unless every array and region still has its registered size; refreshes region views. */
export function checkSizes(layout: Layout): void {
  const { kinds, arrays, lengths } = layout;
  for (let i = 0, n = kinds.length; i < n; i++) {
    const k = kinds[i];
    if (k === KIND_ARRAY) {
      if (arrays[i]!.length !== lengths[i]) {
        throw new StateError(
          'size-changed',
          `${formatSignature(layout.entries[i]!)}: the registered array was detached or resized`,
        );
      }
    } else if (k === KIND_REGION) refreshRegion(layout.entries[i]!);
  }
}

/** The byte view of a non-array entry in `Layout.arrays`. */
const EMPTY = new Uint8Array(0);

/** Builds the layout of `entries` (header, directory, offsets) for a snapshot with `flags`. */
export function buildLayout(entries: readonly Entry[], flags: number): Layout {
  const dir: DirectoryEntry[] = entries.map((e) => ({
    module: e.module,
    instance: e.instance,
    name: e.name,
    type: e.type,
    count: e.count,
    nvram: e.nvram,
  }));
  const { bytes: directory, recordStarts } = encodeDirectory(dir);
  let payload = 0;
  for (const e of entries) payload += e.byteLength;
  if (payload > MAX_SECTION_BYTES || directory.length > MAX_SECTION_BYTES)
    throw new StateError('too-large', `a snapshot of ${payload} payload bytes exceeds the format's 4 GiB limit`);
  const { prefix, layoutHash } = encodePrefix(directory, entries.length, payload, flags);
  const offsets: number[] = [];
  let o = prefix.length;
  for (const e of entries) {
    offsets.push(o);
    o += e.byteLength;
  }
  return {
    entries: entries.slice(),
    offsets,
    prefix,
    recordStarts,
    layoutHash,
    totalBytes: o,
    flags,
    kinds: Uint8Array.from(entries, (e) => e.kind),
    arrays: entries.map((e) => e.bytes ?? EMPTY),
    lengths: entries.map((e) => e.byteLength),
    directoryWords: new Int32Array(prefix.buffer, HEADER_BYTES, (prefix.length - HEADER_BYTES) >>> 2),
    sourceViews: new WeakMap(),
  };
}

/** Points a region entry's view at its current buffer; throws StateError('size-changed') if it no longer fits. */
export function refreshRegion(e: Entry): void {
  const buffer = e.region!.buffer();
  if (buffer !== e.regionBuffer || e.regionBytes.length !== e.byteLength) {
    const start = e.region!.byteOffset;
    if (start + e.byteLength > buffer.byteLength)
      throw new StateError(
        'size-changed',
        `${formatSignature(e)}: region ends at ${start + e.byteLength}, buffer holds ${buffer.byteLength}`,
      );
    e.regionBytes = new Uint8Array(buffer, start, e.byteLength);
    e.regionBuffer = buffer;
  }
}

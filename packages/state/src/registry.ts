import { crc32 } from '@netplay/protocol';
import { LITTLE_ENDIAN_HOST } from './endian.js';
import { SnapshotError, StateError } from './errors.js';
import { hash64 } from './hash64.js';
import {
  type DirectoryEntry,
  describeSnapshot,
  encodeDirectory,
  encodePrefix,
  FLAG_NVRAM,
  HEADER_BYTES,
  MAX_SECTION_BYTES,
  readU32,
  readU64,
  SNAPSHOT_MAGIC,
  SNAPSHOT_VERSION,
} from './snapshot-format.js';
import {
  type EntryInfo,
  formatSignature,
  type MemoryRegion,
  type RegisterOptions,
  type ScalarAccessor,
  type Signature,
  type StateArray,
  type StateType,
  type StateValue,
  TYPE_CODES,
  TYPE_SIZES,
  typeOfArray,
} from './types.js';

/** What `loadLenient` did: which entries it restored and which it could not match. */
export interface LenientLoadReport {
  /** How many entries were restored. */
  readonly loaded: number;
  /** Registered entries the snapshot does not hold; they keep their current values. */
  readonly missing: readonly Signature[];
  /** Snapshot entries no registered entry has the signature of; ignored. */
  readonly extra: readonly Signature[];
  /** Entries present on both sides with another type or count; not restored. */
  readonly mismatched: readonly Signature[];
}

const KIND_ARRAY = 0;
const KIND_SCALAR = 1;
const KIND_REGION = 2;

interface Entry extends EntryInfo {
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

interface Layout {
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

// Scratch space for scalars: their bytes go through these views (host order = little-endian).
const scratch = new ArrayBuffer(8);
const scratchBytes = new Uint8Array(scratch);
const scratchViews: Record<StateType, StateArray> = {
  u8: new Uint8Array(scratch, 0, 1),
  i8: new Int8Array(scratch, 0, 1),
  u16: new Uint16Array(scratch, 0, 1),
  i16: new Int16Array(scratch, 0, 1),
  u32: new Uint32Array(scratch, 0, 1),
  i32: new Int32Array(scratch, 0, 1),
  u64: new BigUint64Array(scratch, 0, 1),
  i64: new BigInt64Array(scratch, 0, 1),
  f32: new Float32Array(scratch, 0, 1),
  f64: new Float64Array(scratch, 0, 1),
};

function isAccessor(v: StateValue): v is ScalarAccessor {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as ScalarAccessor).get === 'function' &&
    typeof (v as ScalarAccessor).set === 'function'
  );
}

function isRegion(v: StateValue): v is MemoryRegion {
  return typeof v === 'object' && v !== null && typeof (v as MemoryRegion).buffer === 'function';
}

const utf8 = new TextEncoder();

/**
 * The savestate registry, after MAME's save state system (seed 003): an emulator registers
 * where its state lives once, during an init window, under unique signatures
 * (module, instance, name); the registry then saves and loads all of it as one snapshot.
 *
 * Lifecycle: `register` (and `onPresave`/`onPostload`) while open → `freeze()` → `saveInto` /
 * `load` / `checksum` as often as needed. `beginScope()`/`endScope()` bracket registrations
 * that a machine reset forgets and redoes (MAME's MACHINE_INIT); `endScope()` reopens the init
 * window, so call `freeze()` again after re-registering.
 *
 * Snapshots are versioned and self-describing; see the package README for the byte format.
 * Saving allocates nothing: the header and directory are built once at `freeze()`.
 */
export class StateRegistry {
  private readonly list: Entry[] = [];
  private readonly byKey = new Map<string, Entry>();
  private readonly presave: (() => void)[] = [];
  private readonly postload: (() => void)[] = [];
  private readonly scopes: { entries: number; presave: number; postload: number }[] = [];
  private isFrozen = false;
  private full: Layout | undefined;
  private nvram: Layout | undefined;
  private scratchState: Uint8Array | undefined;

  /**
   * Registers one entry under the unique signature (module, instance, name).
   * @param value a typed array (saved in place), a scalar accessor `{type, get, set}`, or a
   *   {@link MemoryRegion} `{buffer(), byteOffset, count, type?}` for buffers that may be replaced
   *   (WebAssembly memory).
   * @throws StateError `frozen` after `freeze()`, `duplicate-signature` if the signature is taken,
   *   `bad-argument` for an empty name, a negative or fractional instance, an unsupported value or
   *   a zero count, `big-endian-host` for multi-byte arrays or scalars on a big-endian host.
   */
  register(module: string, instance: number, name: string, value: StateValue, options: RegisterOptions = {}): void {
    const sig = `${module}[${instance}].${name}`;
    if (this.isFrozen) throw new StateError('frozen', `cannot register ${sig}: the registry is frozen`);
    if (typeof module !== 'string' || module.length === 0 || utf8.encode(module).length > 0xffff)
      throw new StateError('bad-argument', `bad module name for ${sig}`);
    if (typeof name !== 'string' || name.length === 0 || utf8.encode(name).length > 0xffff)
      throw new StateError('bad-argument', `bad data name for ${sig}`);
    if (!Number.isInteger(instance) || instance < 0 || instance > 0xffff_ffff)
      throw new StateError('bad-argument', `instance of ${sig} must be an integer in 0..2^32-1`);
    const key = `${module}\u0000${instance}\u0000${name}`;
    if (this.byKey.has(key)) throw new StateError('duplicate-signature', `${sig} is already registered`);
    let type: StateType;
    let count: number;
    let kind: number;
    let bytes: Uint8Array | undefined;
    let accessor: ScalarAccessor | undefined;
    let region: MemoryRegion | undefined;
    if (ArrayBuffer.isView(value)) {
      const t = typeOfArray(value);
      if (t === undefined) throw new StateError('bad-argument', `${sig}: unsupported array type`);
      type = t;
      count = value.length;
      kind = KIND_ARRAY;
      bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    } else if (isAccessor(value)) {
      if (!Object.hasOwn(TYPE_CODES, value.type))
        throw new StateError('bad-argument', `${sig}: unknown type ${String(value.type)}`);
      type = value.type;
      count = 1;
      kind = KIND_SCALAR;
      accessor = value;
    } else if (isRegion(value)) {
      type = value.type ?? 'u8';
      if (!Object.hasOwn(TYPE_CODES, type))
        throw new StateError('bad-argument', `${sig}: unknown type ${String(type)}`);
      count = value.count;
      if (!Number.isInteger(value.byteOffset) || value.byteOffset < 0)
        throw new StateError('bad-argument', `${sig}: byteOffset must be a non-negative integer`);
      if (!Number.isInteger(count) || count < 0)
        throw new StateError('bad-argument', `${sig}: count must be a non-negative integer`);
      kind = KIND_REGION;
      region = value;
    } else {
      throw new StateError(
        'bad-argument',
        `${sig}: expected a typed array, a {type, get, set} accessor or a memory region`,
      );
    }
    if (count === 0) throw new StateError('bad-argument', `${sig}: an entry must hold at least one element`);
    if (count > 0xffff_ffff) throw new StateError('too-large', `${sig}: more than 2^32-1 elements`);
    const size = TYPE_SIZES[type];
    if (!LITTLE_ENDIAN_HOST && size > 1 && kind !== KIND_REGION)
      throw new StateError('big-endian-host', `${sig}: multi-byte entries need a little-endian host`);
    const entry: Entry = {
      module,
      instance,
      name,
      key,
      type,
      code: TYPE_CODES[type],
      count,
      byteLength: count * size,
      nvram: options.nvram === true,
      kind,
      bytes,
      accessor,
      region,
      regionBuffer: undefined,
      regionBytes: new Uint8Array(0),
    };
    this.list.push(entry);
    this.byKey.set(key, entry);
  }

  /**
   * Adds a hook run before every save (`saveInto`, `save`, `checksum`, `crc32`, `saveNvram…`),
   * to store derived state into registered entries. Hooks run in the order they were added, all
   * of them before the first byte is written. Open only during the init window, and scoped like
   * registrations.
   */
  onPresave(hook: () => void): void {
    if (this.isFrozen) throw new StateError('frozen', 'cannot add a presave hook: the registry is frozen');
    this.presave.push(hook);
  }

  /**
   * Adds a hook run after every successful load (`load`, `loadLenient`, `loadNvram`), once all
   * bytes are written, to rebuild derived state (bank pointers, caches). Hooks run in the order
   * they were added. Not run when a load is rejected. Open only during the init window; scoped.
   */
  onPostload(hook: () => void): void {
    if (this.isFrozen) throw new StateError('frozen', 'cannot add a postload hook: the registry is frozen');
    this.postload.push(hook);
  }

  /** Opens a scope: what is registered from now until the matching `endScope()` is forgotten then. */
  beginScope(): void {
    if (this.isFrozen) throw new StateError('frozen', 'cannot begin a scope: the registry is frozen');
    this.scopes.push({ entries: this.list.length, presave: this.presave.length, postload: this.postload.length });
  }

  /**
   * Closes the innermost scope: forgets the entries and hooks registered inside it and reopens
   * the init window (the registry is no longer frozen), so that a machine reset can register
   * them again and `freeze()` once more. Signatures re-registered identically give the same
   * layout hash, so snapshots taken before the reset still load.
   */
  endScope(): void {
    const scope = this.scopes.pop();
    if (scope === undefined) throw new StateError('no-scope', 'endScope() without beginScope()');
    for (const e of this.list.splice(scope.entries)) this.byKey.delete(e.key);
    this.presave.length = scope.presave;
    this.postload.length = scope.postload;
    this.isFrozen = false;
    this.full = undefined;
    this.nvram = undefined;
    this.scratchState = undefined;
  }

  /**
   * Closes the init window and fixes the layout: computes the header, directory and layout hash
   * of snapshots and NVRAM blobs. Idempotent.
   * @throws StateError `too-large` if a snapshot would exceed 4 GiB.
   */
  freeze(): void {
    if (this.isFrozen) return;
    this.full = buildLayout(this.list, 0);
    this.nvram = buildLayout(
      this.list.filter((e) => e.nvram),
      FLAG_NVRAM,
    );
    this.isFrozen = true;
  }

  /** True between `freeze()` and the next `endScope()`. */
  get frozen(): boolean {
    return this.isFrozen;
  }

  /** The registered entries in registration order (which is the snapshot order). */
  entries(): EntryInfo[] {
    return this.list.map(({ module, instance, name, type, count, nvram, byteLength }) => ({
      module,
      instance,
      name,
      type,
      count,
      nvram,
      byteLength,
    }));
  }

  /** Size in bytes of a snapshot (header, directory and payload). Needs `freeze()`. */
  get snapshotBytes(): number {
    return this.layout().totalBytes;
  }

  /**
   * Where an entry's data starts in a snapshot (a byte offset into what `saveInto` writes), for
   * dirty-page tracking: a game that writes `ram[i]` marks `tracker.mark(registry.snapshotOffset('main', 0, 'ram') + i)`.
   * Needs `freeze()`.
   * @throws StateError `bad-argument` when no such entry is registered.
   */
  snapshotOffset(module: string, instance: number, name: string): number {
    const layout = this.layout();
    const e = this.byKey.get(`${module}\u0000${instance}\u0000${name}`);
    const i = e === undefined ? -1 : layout.entries.indexOf(e);
    if (i < 0) throw new StateError('bad-argument', `${module}[${instance}].${name} is not registered`);
    return layout.offsets[i]!;
  }

  /** The layout hash: a 64-bit hash over every signature, type, count and flag, in order. Needs `freeze()`. */
  get layoutHash(): bigint {
    return this.layout().layoutHash;
  }

  /** Size in bytes of an NVRAM blob. Needs `freeze()`. */
  get nvramBytes(): number {
    return this.nvramLayout().totalBytes;
  }

  /**
   * Writes a snapshot of every entry into `target` (which must hold at least `snapshotBytes`)
   * after running the presave hooks. Allocates nothing.
   * @returns the number of bytes written, `snapshotBytes`.
   * @throws StateError `not-frozen`, `buffer-too-small`, `size-changed` (a registered array's
   *   buffer was detached or a memory region no longer fits its buffer).
   */
  saveInto(target: Uint8Array): number {
    return this.saveLayout(this.layout(), target);
  }

  /** A new snapshot of every entry (allocates one buffer of `snapshotBytes`). */
  save(): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(this.snapshotBytes);
    this.saveInto(out);
    return out;
  }

  /**
   * Restores a snapshot written by a registry with the same layout. Checks everything before
   * writing anything: size, magic, version, flags, entry count, directory size, layout hash,
   * payload size, every directory byte, and that every registered array and region still has its
   * size. Then writes every entry and runs the postload hooks. Allocates nothing when loading
   * repeatedly from the same buffer.
   * @throws SnapshotError naming the first problem in the bytes; nothing was written.
   * @throws StateError `not-frozen` or `size-changed`; nothing was written.
   */
  load(bytes: Uint8Array): void {
    this.loadLayout(this.layout(), bytes);
  }

  /**
   * Restores what can be matched from a snapshot of another layout (an older build, another
   * version of a core): entries are matched by signature; those with the same type and count
   * are restored, the rest is reported. The whole snapshot is checked (header, directory, layout
   * hash against the directory, sizes) before anything is written. Postload hooks run after.
   * @throws SnapshotError for malformed bytes or an NVRAM blob; nothing was written.
   */
  loadLenient(bytes: Uint8Array): LenientLoadReport {
    const layout = this.layout();
    const info = describeSnapshot(bytes);
    if (info.nvram) throw new SnapshotError('bad-flags', 6, 'this is an NVRAM blob, not a snapshot');
    const matched: { entry: Entry; offset: number }[] = [];
    const extra: Signature[] = [];
    const mismatched: Signature[] = [];
    const seen = new Set<string>();
    info.entries.forEach((d, i) => {
      const key = `${d.module}\u0000${d.instance}\u0000${d.name}`;
      const e = this.byKey.get(key);
      const sig = { module: d.module, instance: d.instance, name: d.name };
      if (e === undefined || seen.has(key)) {
        extra.push(sig);
        return;
      }
      seen.add(key);
      if (e.type !== d.type || e.count !== d.count) mismatched.push(sig);
      else matched.push({ entry: e, offset: info.offsets[i]! });
    });
    const missing: Signature[] = layout.entries
      .filter((e) => !seen.has(e.key))
      .map((e) => ({ module: e.module, instance: e.instance, name: e.name }));
    for (const { entry: e } of matched) {
      if (e.kind === KIND_ARRAY && e.bytes!.length !== e.byteLength)
        throw new StateError('size-changed', `${formatSignature(e)}: the registered array was detached or resized`);
      if (e.kind === KIND_REGION) refreshRegion(e);
    }
    for (const { entry: e, offset } of matched) {
      if (e.kind === KIND_SCALAR) readScalar(e.accessor!, bytes, offset);
      else (e.kind === KIND_ARRAY ? e.bytes! : e.regionBytes).set(bytes.subarray(offset, offset + e.byteLength));
    }
    for (const hook of this.postload) hook();
    return { loaded: matched.length, missing, extra, mismatched };
  }

  /** Writes the NVRAM blob (only entries flagged `nvram`) into `target`; see `saveInto`. */
  saveNvramInto(target: Uint8Array): number {
    return this.saveLayout(this.nvramLayout(), target);
  }

  /** A new NVRAM blob. */
  saveNvram(): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(this.nvramBytes);
    this.saveNvramInto(out);
    return out;
  }

  /** Restores an NVRAM blob with the same checks as `load`. */
  loadNvram(bytes: Uint8Array): void {
    this.loadLayout(this.nvramLayout(), bytes);
  }

  /**
   * The 64-bit hash ({@link hash64}) of a snapshot of the current state, for desync detection.
   * Runs the presave hooks; uses a scratch buffer allocated on the first call.
   */
  checksum(): bigint {
    const s = this.scratch();
    return hash64(s, 0, this.saveInto(s));
  }

  /** CRC-32 (zlib) of a snapshot of the current state, e.g. for RetroArch's CRC message. */
  crc32(): number {
    const s = this.scratch();
    return crc32(s, 0, this.saveInto(s));
  }

  private scratch(): Uint8Array {
    const size = this.snapshotBytes;
    if (this.scratchState === undefined || this.scratchState.length !== size) this.scratchState = new Uint8Array(size);
    return this.scratchState;
  }

  private layout(): Layout {
    if (this.full === undefined) throw new StateError('not-frozen', 'call freeze() before saving or loading');
    return this.full;
  }

  private nvramLayout(): Layout {
    if (this.nvram === undefined) throw new StateError('not-frozen', 'call freeze() before saving or loading NVRAM');
    return this.nvram;
  }

  private saveLayout(layout: Layout, target: Uint8Array): number {
    if (target.length < layout.totalBytes)
      throw new StateError(
        'buffer-too-small',
        `snapshot needs ${layout.totalBytes} bytes, target has ${target.length}`,
      );
    const presave = this.presave;
    for (let i = 0; i < presave.length; i++) presave[i]!();
    checkSizes(layout);
    const { entries, offsets, kinds, arrays } = layout;
    const n = kinds.length;
    target.set(layout.prefix, 0);
    for (let i = 0; i < n; i++) {
      const k = kinds[i];
      if (k === KIND_ARRAY) target.set(arrays[i]!, offsets[i]!);
      else if (k === KIND_REGION) target.set(entries[i]!.regionBytes, offsets[i]!);
      else writeScalar(entries[i]!.accessor!, target, offsets[i]!);
    }
    return layout.totalBytes;
  }

  private loadLayout(layout: Layout, bytes: Uint8Array): void {
    checkStrict(layout, bytes);
    checkSizes(layout);
    const { entries, offsets, kinds, arrays } = layout;
    const n = kinds.length;
    const views = layout.sourceViews.get(bytes) ?? sourceViews(layout, bytes);
    for (let i = 0; i < n; i++) {
      const k = kinds[i];
      if (k === KIND_ARRAY) arrays[i]!.set(views[i]!, 0);
      else if (k === KIND_REGION) entries[i]!.regionBytes.set(views[i]!, 0);
      else readScalar(entries[i]!.accessor!, bytes, offsets[i]!);
    }
    const postload = this.postload;
    for (let i = 0; i < postload.length; i++) postload[i]!();
  }
}

/**
 * Makes (and caches) the views of each entry's bytes in a source snapshot. A function of its own:
 * the closure would otherwise make every call of `loadLayout` allocate a context.
 */
function sourceViews(layout: Layout, bytes: Uint8Array): Uint8Array[] {
  const { offsets, lengths } = layout;
  const views = layout.entries.map((e, i) =>
    e.kind === KIND_SCALAR ? EMPTY : bytes.subarray(offsets[i]!, offsets[i]! + lengths[i]!),
  );
  layout.sourceViews.set(bytes, views);
  return views;
}

/** Throws StateError('size-changed') unless every array and region still has its registered size; refreshes region views. */
function checkSizes(layout: Layout): void {
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

const EMPTY = new Uint8Array(0);

function buildLayout(entries: readonly Entry[], flags: number): Layout {
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
function refreshRegion(e: Entry): void {
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

/**
 * Writes a scalar little-endian. Integers up to 32 bits are encoded with integer arithmetic,
 * which converts like a typed array store does (ToInt32 modulo 2^32); 64-bit integers and floats
 * go through the scratch views.
 */
function writeScalar(a: ScalarAccessor, t: Uint8Array, o: number): void {
  switch (a.type) {
    case 'u8':
    case 'i8':
      t[o] = a.get() & 0xff;
      return;
    case 'u16':
    case 'i16': {
      const v = a.get();
      t[o] = v & 0xff;
      t[o + 1] = (v >> 8) & 0xff;
      return;
    }
    case 'u32':
    case 'i32': {
      const v = a.get();
      t[o] = v & 0xff;
      t[o + 1] = (v >> 8) & 0xff;
      t[o + 2] = (v >> 16) & 0xff;
      t[o + 3] = (v >> 24) & 0xff;
      return;
    }
    default: {
      (scratchViews[a.type] as { [i: number]: number | bigint })[0] = a.get();
      const size = TYPE_SIZES[a.type];
      for (let j = 0; j < size; j++) t[o + j] = scratchBytes[j]!;
    }
  }
}

/**
 * Reads a little-endian scalar and hands it to its accessor. Integers up to 32 bits are decoded
 * with integer arithmetic (no boxed number for values in small-integer range); 64-bit integers
 * and floats go through the scratch views.
 */
function readScalar(a: ScalarAccessor, b: Uint8Array, o: number): void {
  const set = a.set as (v: number | bigint) => void;
  switch (a.type) {
    case 'u8':
      set(b[o]!);
      return;
    case 'i8':
      set((b[o]! << 24) >> 24);
      return;
    case 'u16':
      set(b[o]! | (b[o + 1]! << 8));
      return;
    case 'i16':
      set(((b[o]! | (b[o + 1]! << 8)) << 16) >> 16);
      return;
    case 'u32':
      set((b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0);
      return;
    case 'i32':
      set(b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24));
      return;
    default: {
      const size = TYPE_SIZES[a.type];
      for (let j = 0; j < size; j++) scratchBytes[j] = b[o + j]!;
      set(scratchViews[a.type][0]!);
    }
  }
}

/** Strict checks of `bytes` against the layout, in the order the README documents. */
function checkStrict(layout: Layout, bytes: Uint8Array): void {
  const p = layout.prefix;
  if (bytes.length < HEADER_BYTES)
    throw new SnapshotError('truncated', bytes.length, 'snapshot shorter than its header');
  if (readU32(bytes, 0) !== SNAPSHOT_MAGIC)
    throw new SnapshotError('bad-magic', 0, 'not a netplay snapshot (magic NPST)');
  const version = bytes[4]! | (bytes[5]! << 8);
  if (version !== SNAPSHOT_VERSION)
    throw new SnapshotError('bad-version', 4, `snapshot format version ${version} is not supported`);
  const flags = bytes[6]! | (bytes[7]! << 8);
  if (flags !== layout.flags)
    throw new SnapshotError(
      'bad-flags',
      6,
      layout.flags === FLAG_NVRAM
        ? 'expected an NVRAM blob'
        : flags === FLAG_NVRAM
          ? 'this is an NVRAM blob, not a snapshot'
          : `unknown flags 0x${flags.toString(16)}`,
    );
  if (readU32(bytes, 28) !== 0) throw new SnapshotError('bad-flags', 28, 'reserved header field is not zero');
  const count = readU32(bytes, 8);
  if (count !== layout.entries.length)
    throw new SnapshotError(
      'bad-entry-count',
      8,
      `snapshot has ${count} entries, the registry ${layout.entries.length}`,
    );
  const dirBytes = readU32(bytes, 12);
  if (dirBytes !== p.length - HEADER_BYTES)
    throw new SnapshotError(
      'bad-directory',
      12,
      `directory of ${dirBytes} bytes, the registry's has ${p.length - HEADER_BYTES}`,
    );
  for (let i = 16; i < 24; i++) {
    if (bytes[i] !== p[i]) {
      throw new SnapshotError(
        'bad-layout',
        16,
        `layout hash ${readU64(bytes, 16).toString(16)} is not the registry's ${layout.layoutHash.toString(16)}`,
      );
    }
  }
  const payload = readU32(bytes, 24);
  const expectedPayload = layout.totalBytes - p.length;
  if (payload !== expectedPayload)
    throw new SnapshotError(
      'bad-payload-size',
      24,
      `payload of ${payload} bytes, the registry's has ${expectedPayload}`,
    );
  if (bytes.length < layout.totalBytes)
    throw new SnapshotError('truncated', bytes.length, `snapshot of ${layout.totalBytes} bytes cut at ${bytes.length}`);
  if (bytes.length > layout.totalBytes)
    throw new SnapshotError(
      'trailing-bytes',
      layout.totalBytes,
      `${bytes.length - layout.totalBytes} bytes after the payload`,
    );
  if (!sameDirectory(layout, bytes)) {
    for (let i = HEADER_BYTES; i < p.length; i++) {
      if (bytes[i] !== p[i]) {
        const rel = i - HEADER_BYTES;
        let k = 0;
        while (k + 1 < layout.recordStarts.length && layout.recordStarts[k + 1]! <= rel) k++;
        const e = layout.entries[k];
        throw new SnapshotError(
          'bad-directory',
          i,
          `directory differs in the record of ${e ? formatSignature(e) : 'an entry'}`,
        );
      }
    }
  }
}

// One-entry cache of an Int32Array over the last source buffer compared (ring slots share one buffer).
let wordsBuffer: ArrayBufferLike | undefined;
let wordsView: Int32Array = new Int32Array(0);

/** True when the directory in `bytes` equals the layout's; word-wise when `bytes` is 4-aligned. */
function sameDirectory(layout: Layout, bytes: Uint8Array): boolean {
  const p = layout.prefix;
  const words = layout.directoryWords;
  let i = HEADER_BYTES;
  if ((bytes.byteOffset & 3) === 0 && words.length > 0) {
    const buffer = bytes.buffer;
    if (buffer !== wordsBuffer || wordsView.length !== buffer.byteLength >>> 2) {
      wordsView = new Int32Array(buffer, 0, buffer.byteLength >>> 2);
      wordsBuffer = buffer;
    }
    const w = wordsView;
    const base = (bytes.byteOffset + HEADER_BYTES) >>> 2;
    for (let k = 0, n = words.length; k < n; k++) if (w[base + k] !== words[k]) return false;
    i += words.length * 4;
  }
  for (; i < p.length; i++) if (bytes[i] !== p[i]) return false;
  return true;
}

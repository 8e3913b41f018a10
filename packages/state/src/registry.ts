import { crc32 } from '@netplay/protocol';
import { LITTLE_ENDIAN_HOST } from './endian.js';
import { SnapshotError, StateError } from './errors.js';
import { hash64 } from './hash64.js';
import {
  buildLayout,
  checkSizes,
  type Entry,
  KIND_ARRAY,
  KIND_REGION,
  KIND_SCALAR,
  type Layout,
  refreshRegion,
  sourceViews,
} from './registry-layout.js';
import { readScalar, writeScalar } from './scalar-codec.js';
import { checkStrict } from './snapshot-check.js';
import { describeSnapshot, FLAG_NVRAM } from './snapshot-format.js';
import {
  type EntryInfo,
  formatSignature,
  type MemoryRegion,
  type RegisterOptions,
  type ScalarAccessor,
  type Signature,
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

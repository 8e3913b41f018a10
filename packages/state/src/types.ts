/**
 * The element types a state entry can have, after MAME's `state_save_register_*` family:
 * unsigned and signed 8/16/32/64-bit integers and 32/64-bit floats.
 */
export type StateType = 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'u64' | 'i64' | 'f32' | 'f64';

/** The element types whose values are JavaScript numbers. */
export type NumberStateType = Exclude<StateType, 'u64' | 'i64'>;

/** The element types whose values are bigints (64-bit integers). */
export type BigIntStateType = 'u64' | 'i64';

/**
 * A typed array registered in place: its elements are saved and loaded directly. The type comes
 * from the array's class (`Uint8ClampedArray` counts as `u8`), the count from its length.
 */
export type StateArray =
  | Uint8Array
  | Uint8ClampedArray
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | BigUint64Array
  | BigInt64Array
  | Float32Array
  | Float64Array;

/**
 * One number held somewhere the registry cannot point into (a class field, a closure), reached
 * through accessors. `get` is called on save, `set` on load; values are converted as a typed
 * array of `type` would convert them (integers wrap, floats round).
 */
export interface NumberAccessor {
  /** The declared element type. */
  readonly type: NumberStateType;
  /** Returns the current value. */
  get(): number;
  /** Restores a value read from a snapshot. */
  set(value: number): void;
}

/** A 64-bit integer reached through accessors; see {@link NumberAccessor}. */
export interface BigIntAccessor {
  /** The declared element type. */
  readonly type: BigIntStateType;
  /** Returns the current value. */
  get(): bigint;
  /** Restores a value read from a snapshot. */
  set(value: bigint): void;
}

/** A single value with a declared type; the count is 1. */
export type ScalarAccessor = NumberAccessor | BigIntAccessor;

/**
 * A region of a buffer that may be replaced, such as WebAssembly linear memory: `memory.grow()`
 * detaches the old `ArrayBuffer`, so a typed array registered in place would go stale. The
 * registry calls `buffer()` on every save and load and rebuilds its view only when the buffer
 * object changed, so this costs nothing per frame. The region's bytes are copied as they are
 * (WebAssembly memory is little-endian on every host); `type` and `count` describe it in the
 * layout: the region spans `count` elements of `type` from `byteOffset`.
 */
export interface MemoryRegion {
  /** Returns the buffer that currently holds the region, e.g. `() => memory.buffer`. */
  buffer(): ArrayBufferLike;
  /** Where the region starts in that buffer. */
  readonly byteOffset: number;
  /** How many elements of `type` the region holds. */
  readonly count: number;
  /** The element type (default `u8`). */
  readonly type?: StateType;
}

/** Anything `StateRegistry.register` accepts. */
export type StateValue = StateArray | ScalarAccessor | MemoryRegion;

/** Options of `StateRegistry.register`. */
export interface RegisterOptions {
  /**
   * The entry is non-volatile memory (battery RAM, EEPROM, high scores): it is saved in snapshots
   * like any entry and, in addition, in the NVRAM blob (`saveNvram`/`loadNvram`), which persists
   * across power cycles.
   */
  readonly nvram?: boolean;
}

/** The identity of an entry, unique in a registry (MAME's module, instance and data name). */
export interface Signature {
  /** The owning component, e.g. `cpu` or `ppu` (non-empty, at most 65 535 UTF-8 bytes), as passed to `register`. */
  readonly module: string;
  /** Which copy of that component, for machines with several (an integer 0 … 2^32 − 1; usually 0). */
  readonly instance: number;
  /** The datum within the component, e.g. `pc` or `vram` (non-empty, at most 65 535 UTF-8 bytes). */
  readonly name: string;
}

/** What a registry knows about one entry, as listed by `StateRegistry.entries()`. */
export interface EntryInfo extends Signature {
  /** Element type: from the typed array's class, the accessor's or region's declared `type` (a region's default `u8`). */
  readonly type: StateType;
  /** Number of elements: the array's length or the region's `count`; 1 for an accessor. */
  readonly count: number;
  /** Whether it was registered with `{ nvram: true }`, so it is also in the NVRAM blob (`saveNvram` / `loadNvram`). */
  readonly nvram: boolean;
  /** Size of the entry's data in bytes (count × element size). */
  readonly byteLength: number;
}

/** Type codes as stored in the snapshot directory. */
export const TYPE_CODES: Readonly<Record<StateType, number>> = {
  u8: 1,
  i8: 2,
  u16: 3,
  i16: 4,
  u32: 5,
  i32: 6,
  u64: 7,
  i64: 8,
  f32: 9,
  f64: 10,
};

/** The type of each code, index = code. */
export const TYPES_BY_CODE: readonly (StateType | undefined)[] = [
  undefined,
  'u8',
  'i8',
  'u16',
  'i16',
  'u32',
  'i32',
  'u64',
  'i64',
  'f32',
  'f64',
];

/** Size in bytes of one element of each type. */
export const TYPE_SIZES: Readonly<Record<StateType, number>> = {
  u8: 1,
  i8: 1,
  u16: 2,
  i16: 2,
  u32: 4,
  i32: 4,
  u64: 8,
  i64: 8,
  f32: 4,
  f64: 8,
};

/** The element type of a typed array, or undefined if it is not one the registry supports. */
export function typeOfArray(a: ArrayBufferView): StateType | undefined {
  if (a instanceof Uint8Array || a instanceof Uint8ClampedArray) return 'u8';
  if (a instanceof Int8Array) return 'i8';
  if (a instanceof Uint16Array) return 'u16';
  if (a instanceof Int16Array) return 'i16';
  if (a instanceof Uint32Array) return 'u32';
  if (a instanceof Int32Array) return 'i32';
  if (a instanceof BigUint64Array) return 'u64';
  if (a instanceof BigInt64Array) return 'i64';
  if (a instanceof Float32Array) return 'f32';
  if (a instanceof Float64Array) return 'f64';
  return undefined;
}

/** The signature as text, `module[instance].name`, as errors and reports print it. */
export function formatSignature(s: Signature): string {
  return `${s.module}[${s.instance}].${s.name}`;
}

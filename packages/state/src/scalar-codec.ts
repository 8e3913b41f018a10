import { type ScalarAccessor, type StateArray, type StateType, TYPE_SIZES } from './types.js';

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

/**
 * Writes a scalar little-endian. Integers up to 32 bits are encoded with integer arithmetic,
 * which converts like a typed array store does (ToInt32 modulo 2^32); 64-bit integers and floats
 * go through the scratch views.
 */
export function writeScalar(a: ScalarAccessor, t: Uint8Array, o: number): void {
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
export function readScalar(a: ScalarAccessor, b: Uint8Array, o: number): void {
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

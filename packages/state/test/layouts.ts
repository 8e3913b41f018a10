import fc from 'fast-check';
import { type MemoryRegion, type ScalarAccessor, StateRegistry, type StateType } from '../src/index.js';

export const TYPES: readonly StateType[] = ['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'u64', 'i64', 'f32', 'f64'];
export const SIZES: Record<StateType, number> = {
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

const ARRAYS = {
  u8: Uint8Array,
  i8: Int8Array,
  u16: Uint16Array,
  i16: Int16Array,
  u32: Uint32Array,
  i32: Int32Array,
  u64: BigUint64Array,
  i64: BigInt64Array,
  f32: Float32Array,
  f64: Float64Array,
} as const;

/** The shape of one generated entry. */
export interface EntrySpec {
  module: string;
  instance: number;
  name: string;
  kind: 'array' | 'scalar' | 'region';
  type: StateType;
  count: number;
  nvram: boolean;
}

/** A generated layout: unique signatures, any kinds, types and counts. */
export const layoutArb: fc.Arbitrary<EntrySpec[]> = fc.uniqueArray(
  fc.record({
    module: fc.constantFrom('cpu', 'z80', 'pacman', 'ppu', 'sound', 'é'),
    instance: fc.integer({ min: 0, max: 3 }),
    name: fc.string({ minLength: 1, maxLength: 6 }),
    kind: fc.constantFrom('array', 'scalar', 'region'),
    type: fc.constantFrom(...TYPES),
    count: fc.integer({ min: 1, max: 40 }),
    nvram: fc.boolean(),
  }),
  { minLength: 0, maxLength: 12, selector: (e) => `${e.module}|${e.instance}|${e.name}` },
);

/** One value of a scalar entry: any value its type holds. */
export function scalarArb(type: StateType): fc.Arbitrary<number | bigint> {
  switch (type) {
    case 'u8':
      return fc.integer({ min: 0, max: 255 });
    case 'i8':
      return fc.integer({ min: -128, max: 127 });
    case 'u16':
      return fc.integer({ min: 0, max: 0xffff });
    case 'i16':
      return fc.integer({ min: -0x8000, max: 0x7fff });
    case 'u32':
      return fc.integer({ min: 0, max: 0xffff_ffff });
    case 'i32':
      return fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff });
    case 'u64':
      return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
    case 'i64':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    case 'f32':
      return fc.float();
    case 'f64':
      return fc.double();
  }
}

/** Contents for a layout: raw bytes for arrays and regions, a value for scalars. */
export function contentsArb(layout: readonly EntrySpec[]): fc.Arbitrary<(Uint8Array | number | bigint)[]> {
  return fc.tuple(
    ...layout.map(
      (e): fc.Arbitrary<Uint8Array | number | bigint> =>
        e.kind === 'scalar'
          ? scalarArb(e.type)
          : fc.uint8Array({ minLength: e.count * SIZES[e.type], maxLength: e.count * SIZES[e.type] }),
    ),
  );
}

/** A live machine for a layout: a registry over real arrays, scalars and regions, and ways to set and read its contents. */
export class Machine {
  readonly registry = new StateRegistry();
  private readonly bytes: Uint8Array[] = [];
  private readonly scalars: { value: number | bigint }[] = [];
  /** Region entries live in this buffer, which `grow()` replaces like WebAssembly memory does. */
  memory = new ArrayBuffer(16);
  private memoryUsed = 0;

  constructor(readonly layout: readonly EntrySpec[]) {
    const regionBytes = layout.filter((e) => e.kind === 'region').reduce((n, e) => n + e.count * SIZES[e.type] + 3, 0);
    this.memory = new ArrayBuffer(regionBytes + 16);
    for (const e of layout) {
      const size = e.count * SIZES[e.type];
      if (e.kind === 'array') {
        // Arrays are views at an offset into a larger buffer, to exercise byteOffset.
        const buf = new ArrayBuffer(size + 16);
        const arr = new ARRAYS[e.type](buf, 8, e.count);
        this.bytes.push(new Uint8Array(buf, 8, size));
        this.scalars.push({ value: 0 });
        this.registry.register(e.module, e.instance, e.name, arr, { nvram: e.nvram });
      } else if (e.kind === 'region') {
        const offset = this.memoryUsed + 1; // unaligned on purpose
        this.memoryUsed += size + 3;
        const region: MemoryRegion = { buffer: () => this.memory, byteOffset: offset, count: e.count, type: e.type };
        this.bytes.push(new Uint8Array(0));
        this.scalars.push({ value: 0 });
        this.registry.register(e.module, e.instance, e.name, region, { nvram: e.nvram });
      } else {
        const cell = { value: e.type === 'u64' || e.type === 'i64' ? 0n : 0 } as { value: number | bigint };
        this.bytes.push(new Uint8Array(0));
        this.scalars.push(cell);
        const accessor = {
          type: e.type,
          get: () => cell.value,
          set: (v: number | bigint) => {
            cell.value = v;
          },
        } as unknown as ScalarAccessor;
        this.registry.register(e.module, e.instance, e.name, accessor, { nvram: e.nvram });
      }
    }
  }

  /** Replaces the region buffer by a larger copy, as `WebAssembly.Memory.grow` does. */
  grow(): void {
    const next = new ArrayBuffer(this.memory.byteLength * 2);
    new Uint8Array(next).set(new Uint8Array(this.memory));
    this.memory = next;
  }

  set(contents: readonly (Uint8Array | number | bigint)[]): void {
    contents.forEach((c, i) => {
      if (c instanceof Uint8Array) {
        const spec = this.layout[i]!;
        if (spec.kind === 'region') {
          new Uint8Array(this.memory, this.regionOffset(i), c.length).set(c);
        } else this.bytes[i]!.set(c);
      } else this.scalars[i]!.value = c;
    });
  }

  private regionOffset(i: number): number {
    let o = 0;
    for (let k = 0; k < i; k++) {
      const e = this.layout[k]!;
      if (e.kind === 'region') o += e.count * SIZES[e.type] + 3;
    }
    return o + 1;
  }

  /** The current contents, in the form `set` takes (copies). */
  get(): (Uint8Array | number | bigint)[] {
    return this.layout.map((e, i) => {
      if (e.kind === 'scalar') return this.scalars[i]!.value;
      if (e.kind === 'region')
        return new Uint8Array(this.memory, this.regionOffset(i), e.count * SIZES[e.type]).slice();
      return this.bytes[i]!.slice();
    });
  }
}

/** Compares contents exactly: bytes for arrays, Object.is for scalars (so NaN and -0 count). */
export function sameContents(
  a: readonly (Uint8Array | number | bigint)[],
  b: readonly (Uint8Array | number | bigint)[],
): boolean {
  if (a.length !== b.length) return false;
  return a.every((x, i) => {
    const y = b[i]!;
    if (x instanceof Uint8Array && y instanceof Uint8Array)
      return x.length === y.length && x.every((v, j) => v === y[j]);
    return Object.is(x, y);
  });
}

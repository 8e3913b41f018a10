import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { describeSnapshot, SnapshotError, StateError, StateRegistry } from '../src/index.js';
import { contentsArb, type EntrySpec, layoutArb, Machine, sameContents } from './layouts.js';

const layoutAndTwoContents = layoutArb.chain((layout) =>
  fc.tuple(fc.constant(layout), contentsArb(layout), contentsArb(layout)),
);

function errorOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('snapshot round trip', () => {
  test.prop([layoutAndTwoContents], { numRuns: 150 })('load(save(x)) restores x exactly', ([layout, x, y]) => {
    const m = new Machine(layout);
    m.registry.freeze();
    m.set(x);
    const snap = m.registry.save();
    expect(snap.length).toBe(m.registry.snapshotBytes);
    m.set(y);
    m.registry.load(snap);
    expect(sameContents(m.get(), x)).toBe(true);
    // Saving again gives the same bytes.
    expect(m.registry.save()).toEqual(snap);
  });

  test.prop([layoutAndTwoContents], { numRuns: 60 })(
    'a region follows its buffer when it is replaced (memory.grow)',
    ([layout, x, y]) => {
      const m = new Machine(layout);
      m.registry.freeze();
      m.set(x);
      const snap = m.registry.save();
      m.grow();
      m.set(y);
      m.registry.load(snap);
      expect(sameContents(m.get(), x)).toBe(true);
    },
  );

  test.prop([layoutAndTwoContents, fc.nat(), fc.integer({ min: 1, max: 255 })], { numRuns: 300 })(
    'a snapshot with one header or directory byte changed is rejected and changes nothing',
    ([layout, x, y], at, delta) => {
      const m = new Machine(layout);
      m.registry.freeze();
      m.set(x);
      const snap = m.registry.save();
      const info = describeSnapshot(snap);
      const bad = snap.slice();
      const i = at % info.payloadOffset;
      bad[i] = (bad[i]! + delta) & 0xff;
      m.set(y);
      const err = errorOf(() => m.registry.load(bad));
      expect(err).toBeInstanceOf(SnapshotError);
      expect(sameContents(m.get(), y)).toBe(true);
      expect(errorOf(() => m.registry.loadLenient(bad))).toBeInstanceOf(SnapshotError);
      expect(sameContents(m.get(), y)).toBe(true);
    },
  );

  test.prop([layoutAndTwoContents, fc.integer({ min: -40, max: 40 }).filter((d) => d !== 0)], { numRuns: 100 })(
    'a truncated or extended snapshot is rejected and changes nothing',
    ([layout, x, y], d) => {
      const m = new Machine(layout);
      m.registry.freeze();
      m.set(x);
      const snap = m.registry.save();
      const bad =
        d < 0 ? snap.slice(0, Math.max(0, snap.length + d)) : Uint8Array.from([...snap, ...new Uint8Array(d)]);
      m.set(y);
      const err = errorOf(() => m.registry.load(bad));
      expect(err).toBeInstanceOf(SnapshotError);
      expect((err as SnapshotError).code).toBe(d < 0 ? 'truncated' : 'trailing-bytes');
      expect(sameContents(m.get(), y)).toBe(true);
    },
  );

  test.prop([layoutArb, fc.uint8Array({ maxLength: 300 })], { numRuns: 200 })(
    'any bytes: load throws only SnapshotError',
    (layout, bytes) => {
      const m = new Machine(layout);
      m.registry.freeze();
      const before = m.get();
      for (const fn of [
        () => m.registry.load(bytes),
        () => m.registry.loadLenient(bytes),
        () => m.registry.loadNvram(bytes),
      ]) {
        const err = errorOf(fn);
        if (err !== undefined) expect(err).toBeInstanceOf(SnapshotError);
      }
      // Only an exact snapshot of this layout could have loaded; random bytes never are one.
      expect(sameContents(m.get(), before)).toBe(true);
    },
  );
});

describe('strict load names the first problem', () => {
  const make = () => {
    const r = new StateRegistry();
    const ram = new Uint8Array(64).fill(7);
    r.register('main', 0, 'ram', ram);
    r.register('main', 0, 'pc', new Uint16Array([0x1234]));
    r.freeze();
    return { r, ram };
  };
  const cases: [string, (s: Uint8Array) => Uint8Array, string, number][] = [
    ['magic', (s) => s.fill(0x41, 0, 1), 'bad-magic', 0],
    ['version', (s) => s.fill(2, 4, 5), 'bad-version', 4],
    ['flags', (s) => s.fill(1, 6, 7), 'bad-flags', 6],
    ['entry count', (s) => s.fill(3, 8, 9), 'bad-entry-count', 8],
    ['directory size', (s) => s.fill(9, 12, 13), 'bad-directory', 12],
    ['layout hash', (s) => s.fill(0, 16, 17), 'bad-layout', 16],
    ['payload size', (s) => s.fill(0, 24, 25), 'bad-payload-size', 24],
    ['reserved', (s) => s.fill(1, 28, 29), 'bad-flags', 28],
    ['directory byte', (s) => s.fill(0x58, 34, 35), 'bad-directory', 34],
  ];
  for (const [what, corrupt, code, offset] of cases) {
    it(`${what} → ${code}`, () => {
      const { r, ram } = make();
      const s = corrupt(r.save());
      ram.fill(1);
      const err = errorOf(() => r.load(s)) as SnapshotError;
      expect(err).toBeInstanceOf(SnapshotError);
      expect(err.code).toBe(code);
      expect(err.offset).toBe(offset);
      expect(ram.every((b) => b === 1)).toBe(true);
    });
  }

  it('the directory error names the entry', () => {
    const { r } = make();
    const s = r.save();
    const info = describeSnapshot(s);
    // Change the last byte of the directory: the count of main[0].pc.
    s[info.payloadOffset - 1]! ^= 1;
    expect(() => r.load(s)).toThrow(/main\[0\]\.pc/);
  });
});

describe('registry rules', () => {
  it('a duplicate signature fails and names it', () => {
    const r = new StateRegistry();
    r.register('z80', 1, 'AF', new Uint16Array(1));
    r.register('z80', 0, 'AF', new Uint16Array(1));
    const err = errorOf(() => r.register('z80', 1, 'AF', new Uint8Array(1))) as StateError;
    expect(err).toBeInstanceOf(StateError);
    expect(err.code).toBe('duplicate-signature');
    expect(err.message).toContain('z80[1].AF');
  });

  it('registration, hooks and scopes are refused after freeze()', () => {
    const r = new StateRegistry();
    r.register('m', 0, 'a', new Uint8Array(1));
    r.freeze();
    for (const fn of [
      () => r.register('m', 0, 'b', new Uint8Array(1)),
      () => r.onPresave(() => {}),
      () => r.onPostload(() => {}),
      () => r.beginScope(),
    ]) {
      const err = errorOf(fn) as StateError;
      expect(err).toBeInstanceOf(StateError);
      expect(err.code).toBe('frozen');
    }
    expect(r.entries().map((e) => e.name)).toEqual(['a']);
  });

  it('saving or loading before freeze() fails', () => {
    const r = new StateRegistry();
    r.register('m', 0, 'a', new Uint8Array(1));
    expect((errorOf(() => r.save()) as StateError).code).toBe('not-frozen');
    expect((errorOf(() => r.load(new Uint8Array(40))) as StateError).code).toBe('not-frozen');
    expect((errorOf(() => r.checksum()) as StateError).code).toBe('not-frozen');
  });

  it('bad arguments are refused', () => {
    const r = new StateRegistry();
    const bad: [string, number, string, unknown][] = [
      ['', 0, 'a', new Uint8Array(1)],
      ['m', 0, '', new Uint8Array(1)],
      ['m', -1, 'a', new Uint8Array(1)],
      ['m', 1.5, 'a', new Uint8Array(1)],
      ['m', 0, 'a', new Uint8Array(0)],
      ['m', 0, 'a', new DataView(new ArrayBuffer(4))],
      ['m', 0, 'a', { type: 'u7', get: () => 0, set: () => {} }],
      ['m', 0, 'a', { type: 'constructor', get: () => 0, set: () => {} }],
      ['m', 0, 'a', { buffer: () => new ArrayBuffer(4), byteOffset: -1, count: 1 }],
      ['m', 0, 'a', 42],
      ['m', 0, 'a', null],
      ['m', 0, 'a', undefined],
      ['m', 0, 'a', { get: () => 0 }],
    ];
    for (const [mod, inst, name, value] of bad) {
      const err = errorOf(() => r.register(mod, inst, name, value as Uint8Array)) as StateError;
      expect(err).toBeInstanceOf(StateError);
      expect(err.code).toBe('bad-argument');
    }
    expect(r.entries()).toEqual([]);
  });

  it('a scope forgets its registrations and hooks; re-registering gives the same layout', () => {
    const r = new StateRegistry();
    const calls: string[] = [];
    const romBank = new Uint8Array([3]);
    r.register('driver', 0, 'rom_bank', romBank);
    r.onPostload(() => calls.push('outer'));
    let irqMask = new Uint16Array(16);
    const machineInit = () => {
      r.beginScope();
      irqMask = new Uint16Array(16);
      r.register('machine', 0, 'irq_mask', irqMask);
      r.onPostload(() => calls.push('inner'));
      r.freeze();
    };
    machineInit();
    const hash = r.layoutHash;
    irqMask[5] = 0xbeef;
    const snap = r.save();
    // Reset: MACHINE_STOP closes the scope, which forgets irq_mask and the inner hook.
    r.endScope();
    expect(r.frozen).toBe(false);
    expect(r.entries().map((e) => e.name)).toEqual(['rom_bank']);
    r.freeze();
    expect(r.layoutHash).not.toBe(hash);
    expect((errorOf(() => r.load(snap)) as SnapshotError).code).toBe('bad-entry-count');
    const report = r.loadLenient(snap);
    expect(report.extra).toEqual([{ module: 'machine', instance: 0, name: 'irq_mask' }]);
    expect(calls).toEqual(['outer']);
    // MACHINE_INIT runs again: registering the same signature is allowed and the layout is the same.
    expect((errorOf(() => r.endScope()) as StateError).code).toBe('no-scope');
  });

  it('after a reset, MACHINE_INIT registers again and old snapshots load', () => {
    const r = new StateRegistry();
    r.register('driver', 0, 'rom_bank', new Uint8Array([3]));
    let irqMask = new Uint16Array(16);
    const machineInit = () => {
      r.beginScope();
      irqMask = new Uint16Array(16);
      r.register('machine', 0, 'irq_mask', irqMask);
      r.freeze();
    };
    machineInit();
    const hash = r.layoutHash;
    irqMask[5] = 0xbeef;
    const snap = r.save();
    r.endScope();
    machineInit();
    expect(r.layoutHash).toBe(hash);
    expect(irqMask[5]).toBe(0);
    r.load(snap);
    expect(irqMask[5]).toBe(0xbeef);
  });

  it('nested scopes end innermost first', () => {
    const r = new StateRegistry();
    r.beginScope();
    r.register('a', 0, 'x', new Uint8Array(1));
    r.beginScope();
    r.register('b', 0, 'x', new Uint8Array(1));
    r.endScope();
    expect(r.entries().map((e) => e.module)).toEqual(['a']);
    r.register('b', 0, 'x', new Uint8Array(1));
    r.endScope();
    expect(r.entries()).toEqual([]);
  });

  it('hooks: all presave hooks in order before any byte is written; postload hooks in order after all are', () => {
    const r = new StateRegistry();
    const ram = new Uint8Array(64);
    let bank = 2;
    const bankReg = new Uint8Array(1);
    const log: string[] = [];
    r.register('m', 0, 'ram', ram);
    r.register('m', 0, 'bank', bankReg);
    r.onPresave(() => {
      log.push('pre1');
      bankReg[0] = bank;
    });
    r.onPresave(() => log.push('pre2'));
    r.onPostload(() => {
      // Every entry is already restored when the first postload hook runs.
      log.push(`post1 ram=${ram[0]} bank=${bankReg[0]}`);
      bank = bankReg[0]!;
    });
    r.onPostload(() => log.push('post2'));
    r.freeze();
    ram[0] = 9;
    const target = new Uint8Array(r.snapshotBytes);
    r.saveInto(target);
    expect(log).toEqual(['pre1', 'pre2']);
    expect(describeSnapshot(target).entries.map((e) => e.name)).toEqual(['ram', 'bank']);
    ram[0] = 0;
    bank = 5;
    bankReg[0] = 5;
    log.length = 0;
    r.load(target);
    expect(log).toEqual(['post1 ram=9 bank=2', 'post2']);
    expect(bank).toBe(2);
    // A rejected load runs no hook.
    log.length = 0;
    target[0] = 0;
    expect(() => r.load(target)).toThrow(SnapshotError);
    expect(log).toEqual([]);
  });

  it('a layout over 4 GiB is refused at freeze()', () => {
    const r = new StateRegistry();
    // A region is never touched before saving, so its size can be stated without allocating it.
    r.register('m', 0, 'huge', { buffer: () => new ArrayBuffer(0), byteOffset: 0, count: 0x2000_0000, type: 'u64' });
    expect((errorOf(() => r.freeze()) as StateError).code).toBe('too-large');
    expect(r.frozen).toBe(false);
  });

  it('saveInto refuses a small buffer and writes nothing', () => {
    const r = new StateRegistry();
    r.register('m', 0, 'a', new Uint8Array(10));
    r.freeze();
    const small = new Uint8Array(r.snapshotBytes - 1);
    expect((errorOf(() => r.saveInto(small)) as StateError).code).toBe('buffer-too-small');
    expect(small.every((b) => b === 0)).toBe(true);
  });

  it('a detached array or a region past its buffer is a size-changed error, and nothing is loaded', () => {
    const r = new StateRegistry();
    const a = new Uint8Array(8);
    let memory = new ArrayBuffer(64);
    r.register('m', 0, 'a', a);
    r.register('m', 0, 'mem', { buffer: () => memory, byteOffset: 32, count: 8, type: 'u32' });
    r.freeze();
    const snap = r.save();
    memory = new ArrayBuffer(40);
    a[0] = 5;
    expect((errorOf(() => r.load(snap)) as StateError).code).toBe('size-changed');
    expect(a[0]).toBe(5);
    expect((errorOf(() => r.save()) as StateError).code).toBe('size-changed');
  });
});

describe('lenient load', () => {
  it('matches by signature and reports missing, extra and mismatched entries', () => {
    const old = new StateRegistry();
    old.register('cpu', 0, 'pc', new Uint16Array([0x1234]));
    old.register('cpu', 0, 'sp', new Uint8Array([0xfd]));
    old.register('ppu', 0, 'oam', new Uint8Array(256).fill(9));
    old.register('apu', 0, 'gone', new Uint8Array(4));
    old.freeze();
    const snap = old.save();

    const now = new StateRegistry();
    const oam = new Uint8Array(256);
    const pc = new Uint16Array(1);
    const sp = new Uint16Array([7]);
    const added = new Uint8Array([1, 2]);
    now.register('ppu', 0, 'oam', oam);
    now.register('cpu', 0, 'pc', pc);
    now.register('cpu', 0, 'sp', sp); // u16 now: mismatched
    now.register('apu', 0, 'new', added);
    now.freeze();
    expect((errorOf(() => now.load(snap)) as SnapshotError).code).toBe('bad-directory');
    const report = now.loadLenient(snap);
    expect(report.loaded).toBe(2);
    expect(report.missing).toEqual([{ module: 'apu', instance: 0, name: 'new' }]);
    expect(report.extra).toEqual([{ module: 'apu', instance: 0, name: 'gone' }]);
    expect(report.mismatched).toEqual([{ module: 'cpu', instance: 0, name: 'sp' }]);
    expect(pc[0]).toBe(0x1234);
    expect(oam.every((b) => b === 9)).toBe(true);
    expect(sp[0]).toBe(7);
    expect([...added]).toEqual([1, 2]);
  });

  test.prop([layoutAndTwoContents], { numRuns: 60 })('on the same layout it restores everything', ([layout, x, y]) => {
    const m = new Machine(layout);
    m.registry.freeze();
    m.set(x);
    const snap = m.registry.save();
    m.set(y);
    const report = m.registry.loadLenient(snap);
    expect(report).toEqual({ loaded: layout.length, missing: [], extra: [], mismatched: [] });
    expect(sameContents(m.get(), x)).toBe(true);
  });
});

describe('NVRAM', () => {
  test.prop([layoutAndTwoContents], { numRuns: 80 })(
    'the blob holds only nvram entries and restores only them',
    ([layout, x, y]) => {
      const m = new Machine(layout);
      m.registry.freeze();
      m.set(x);
      const blob = m.registry.saveNvram();
      const info = describeSnapshot(blob);
      expect(info.nvram).toBe(true);
      expect(info.entries.map((e) => e.name)).toEqual(layout.filter((e) => e.nvram).map((e) => e.name));
      m.set(y);
      m.registry.loadNvram(blob);
      const expected = y.map((v, i) => (layout[i]!.nvram ? x[i]! : v));
      expect(sameContents(m.get(), expected)).toBe(true);
      // A blob is not a snapshot and a snapshot is not a blob.
      expect((errorOf(() => m.registry.load(blob)) as SnapshotError).code).toBe('bad-flags');
      expect((errorOf(() => m.registry.loadNvram(m.registry.save())) as SnapshotError).code).toBe('bad-flags');
    },
  );
});

describe('lenient load across layouts', () => {
  const key = (e: { module: string; instance: number; name: string }) => `${e.module}|${e.instance}|${e.name}`;
  const evolved = layoutArb.chain((a) =>
    fc
      .tuple(
        fc.constant(a),
        fc.array(fc.constantFrom('keep', 'drop', 'recount', 'retype'), { minLength: a.length, maxLength: a.length }),
        layoutArb,
        fc.boolean(),
      )
      .map(([a, fates, more, shuffle]) => {
        const b: EntrySpec[] = [];
        a.forEach((e, i) => {
          const fate = fates[i]!;
          if (fate === 'keep') b.push({ ...e });
          // A scalar always counts 1: changing its count means changing its type.
          if (fate === 'recount' && e.kind !== 'scalar') b.push({ ...e, count: e.count + 1 });
          if (fate === 'retype' || (fate === 'recount' && e.kind === 'scalar'))
            b.push({ ...e, type: e.type === 'u8' ? 'i16' : 'u8' });
        });
        const taken = new Set(a.map(key));
        for (const e of more) if (!taken.has(key(e))) b.push(e);
        if (shuffle) b.reverse();
        return { a, b };
      }),
  );

  test.prop([evolved.chain(({ a, b }) => fc.tuple(fc.constant(a), fc.constant(b), contentsArb(a), contentsArb(b)))], {
    numRuns: 100,
  })('restores the entries with the same signature, type and count and reports the rest', ([a, b, xa, yb]) => {
    const old = new Machine(a);
    old.registry.freeze();
    old.set(xa);
    const snap = old.registry.save();
    const now = new Machine(b);
    now.registry.freeze();
    now.set(yb);
    const report = now.registry.loadLenient(snap);
    const inA = new Map(a.map((e, i) => [key(e), i]));
    const inB = new Set(b.map(key));
    const count = (e: EntrySpec) => (e.kind === 'scalar' ? 1 : e.count);
    const same = (e: EntrySpec, f: EntrySpec) => e.type === f.type && count(e) === count(f);
    const sigs = (list: readonly { module: string; instance: number; name: string }[]) => list.map(key).sort();
    expect(sigs(report.missing)).toEqual(
      b
        .filter((e) => !inA.has(key(e)))
        .map(key)
        .sort(),
    );
    expect(sigs(report.extra)).toEqual(
      a
        .filter((e) => !inB.has(key(e)))
        .map(key)
        .sort(),
    );
    expect(sigs(report.mismatched)).toEqual(
      b
        .filter((e) => inA.has(key(e)) && !same(e, a[inA.get(key(e))!]!))
        .map(key)
        .sort(),
    );
    const expected = b.map((e, i) => {
      const j = inA.get(key(e));
      return j !== undefined && same(e, a[j]!) ? xa[j]! : yb[i]!;
    });
    expect(report.loaded).toBe(
      expected.filter((_, i) => inA.has(key(b[i]!)) && same(b[i]!, a[inA.get(key(b[i]!))!]!)).length,
    );
    expect(sameContents(now.get(), expected)).toBe(true);
  });
});

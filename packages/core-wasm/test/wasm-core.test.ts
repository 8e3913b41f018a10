import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { SnapshotError } from '@netplay/state';
import { describe, expect, it } from 'vitest';
import { bindAbi, Chip8Core, Chip8Platform, chip8WasmBytes, WasmCore, WasmCoreError } from '../src/index.js';
import { archiveRom } from './fixtures.js';

const PKG = new URL('../', import.meta.url);
const toyBytes = new Uint8Array(readFileSync(new URL('build/toy.wasm', PKG)));

async function toy(content = new Uint8Array([3])): Promise<WasmCore> {
  return WasmCore.instantiate(toyBytes, { content });
}

function play(core: WasmCore, inputs: ReadonlyArray<readonly [number, number]>): bigint[] {
  const sums: bigint[] = [];
  for (const [a, b] of inputs) {
    core.setInput(0, new Uint8Array([a]));
    core.setInput(1, new Uint8Array([b]));
    core.advance();
    sums.push(core.checksum());
  }
  return sums;
}

const inputs = fc.array(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })), {
  minLength: 1,
  maxLength: 40,
});

describe('WasmCore on a core without state regions (whole memory + mutable globals)', () => {
  it('registers the memory, the frame counter and every exported mutable global (not constants)', async () => {
    const core = await toy();
    expect(core.wholeMemory).toBe(true);
    expect(core.regions).toEqual([]);
    const names = core.registry.entries().map((e) => e.name);
    expect(names).toEqual(['frame', 'memory', 'global:acc', 'global:wide']);
    expect(core.stateBytes).toBeGreaterThan(core.memory.buffer.byteLength);
    expect([core.ports, core.inputBytes]).toEqual([2, 1]);
  });

  test.prop([inputs, fc.nat()], { numRuns: 30 })(
    'save, run on, load, run again: same checksums, globals (i64 too) and framebuffer',
    async (seq, at) => {
      const core = await toy();
      const k = at % seq.length;
      play(core, seq.slice(0, k));
      const state = core.save();
      const wide = (core.abi.mutableGlobals.find(([n]) => n === 'wide')?.[1].value ?? 0n) as bigint;
      const first = play(core, seq.slice(k));
      const fb = core.framebuffer().pixels.slice();
      core.load(state);
      expect(core.frame).toBe(k);
      expect(core.abi.mutableGlobals.find(([n]) => n === 'wide')?.[1].value).toBe(wide);
      expect(play(core, seq.slice(k))).toEqual(first);
      expect(core.framebuffer().pixels).toEqual(fb);
    },
  );

  test.prop([inputs], { numRuns: 20 })(
    'a state loads into a fresh instance, which continues identically',
    async (seq) => {
      const a = await toy();
      play(a, seq);
      const b = await toy();
      b.load(a.save());
      expect(b.checksum()).toBe(a.checksum());
      expect(play(b, seq)).toEqual(play(a, seq));
    },
  );

  it('a bad state throws the registry error and changes nothing', async () => {
    const core = await toy();
    play(core, [[1, 2]]);
    const state = core.save();
    play(core, [[3, 4]]);
    const before = core.checksum();
    expect(() => core.load(state.subarray(0, state.length - 1))).toThrow(SnapshotError);
    const corrupt = state.slice();
    corrupt[0] = (corrupt[0] ?? 0) ^ 0xff;
    expect(() => core.load(corrupt)).toThrow(SnapshotError);
    expect(core.checksum()).toBe(before);
    expect(core.frame).toBe(2);
  });

  it('validates ports, input sizes, buffers and content', async () => {
    const core = await toy();
    const err = (f: () => void) => {
      try {
        f();
      } catch (e) {
        return e instanceof WasmCoreError ? e.code : 'other';
      }
      return 'none';
    };
    expect(err(() => core.setInput(2, new Uint8Array(1)))).toBe('bad-input');
    expect(err(() => core.setInput(-1, new Uint8Array(1)))).toBe('bad-input');
    expect(err(() => core.setInput(0, new Uint8Array(2)))).toBe('bad-input');
    expect(err(() => core.saveInto(new Uint8Array(10)))).toBe('buffer-too-small');
    expect(err(() => core.loadContent(new Uint8Array(2000)))).toBe('content-rejected');
    expect(
      err(() => new WasmCore(new WebAssembly.Instance(new WebAssembly.Module(toyBytes)), { state: 'regions' })),
    ).toBe('missing-export');
  });

  it('can expose fewer ports than the core has', async () => {
    const two = Chip8Core.createSync(archiveRom('spaceracer'), { ports: 2 });
    expect(two.ports).toBe(2);
    expect(() => two.setInput(2, new Uint8Array(2))).toThrow(WasmCoreError);
    expect(() => Chip8Core.createSync(archiveRom('spaceracer'), { ports: 5 })).toThrow(WasmCoreError);
    expect((await toy()).ports).toBe(2);
  });

  it('reset returns to frame 0 and the power-on state', async () => {
    const core = await toy();
    const power = core.checksum();
    play(core, [
      [1, 1],
      [2, 2],
    ]);
    expect(core.checksum()).not.toBe(power);
    core.reset();
    expect(core.frame).toBe(0);
    expect(core.checksum()).toBe(power);
  });

  it('reads framebuffer and audio views', async () => {
    const core = await toy();
    play(core, [[0, 0]]);
    const fb = core.framebuffer();
    expect([fb.width, fb.height, fb.format, fb.pixels.length]).toEqual([8, 8, 0, 64]);
    expect(fb.pixels.reduce((s, p) => s + p, 0)).toBe(1);
    expect(core.audio().length).toBe(4);
    // Views are cached: reading them every frame allocates nothing.
    expect(core.framebuffer()).toBe(fb);
    expect(core.audio()).toBe(core.audio());
    expect(core.audioRate).toBe(240);
  });
});

describe('bindAbi', () => {
  const memory = new WebAssembly.Memory({ initial: 1 });
  const fns = Object.fromEntries(
    [
      'np_ports',
      'np_input_bytes',
      'np_content_ptr',
      'np_load',
      'np_reset',
      'np_set_input',
      'np_run_frame',
      'np_fb_ptr',
      'np_fb_width',
      'np_fb_height',
      'np_fb_format',
      'np_audio_ptr',
      'np_audio_len',
      'np_audio_rate',
    ].map((n) => [n, () => 0]),
  );
  const code = (exports: Record<string, unknown>) => {
    try {
      bindAbi(exports as WebAssembly.Exports);
      return 'ok';
    } catch (e) {
      return e instanceof WasmCoreError ? e.code : 'other';
    }
  };
  it('accepts a complete module and rejects missing memory, functions, versions and partial regions', () => {
    expect(code({ memory, ...fns, np_abi_version: () => 1 })).toBe('ok');
    expect(code({ ...fns, np_abi_version: () => 1 })).toBe('missing-export');
    expect(code({ memory, ...fns })).toBe('missing-export');
    expect(code({ memory, ...fns, np_run_frame: 5, np_abi_version: () => 1 })).toBe('missing-export');
    expect(code({ memory, ...fns, np_abi_version: () => 2 })).toBe('abi-version');
    expect(code({ memory, ...fns, np_abi_version: () => 1, np_state_regions: () => 0 })).toBe('missing-export');
  });
});

describe('the CHIP-8 core through WasmCore', () => {
  it('reports its state regions: cpu, display, and ram sized by platform', () => {
    const chip8 = Chip8Core.createSync(archiveRom('spaceracer'));
    expect(chip8.regions.map((r) => [r.name, r.len])).toEqual([
      ['cpu', 320],
      ['display', 8192],
      ['ram', 4096],
    ]);
    const xo = Chip8Core.createSync(archiveRom('wonkypong'));
    expect(xo.config.platform).toBe(Chip8Platform.XoChip);
    expect(xo.regions.find((r) => r.name === 'ram')?.len).toBe(65536);
    // A state of one platform does not load on another (different layout).
    expect(() => xo.load(chip8.save())).toThrow(SnapshotError);
  });

  test.prop([fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 1, maxLength: 60 }), fc.nat()], {
    numRuns: 15,
  })('the whole-memory fallback works for the CHIP-8 core too', (keys, at) => {
    const core = Chip8Core.createSync(archiveRom('tank'), { state: 'memory' });
    expect(core.wholeMemory).toBe(true);
    const k = at % keys.length;
    const run = (from: number) =>
      keys.slice(from).map((key) => {
        core.setInputValue(0, key);
        core.advance();
        return core.checksum();
      });
    for (const key of keys.slice(0, k)) {
      core.setInputValue(0, key);
      core.advance();
    }
    const state = core.save();
    const first = run(k);
    core.load(state);
    expect(run(k)).toEqual(first);
  });

  it('the embedded module is build/chip8.wasm, and a fresh compile gives the same bytes', () => {
    const built = new Uint8Array(readFileSync(new URL('build/chip8.wasm', PKG)));
    expect(chip8WasmBytes()).toEqual(built);
    const out = mkdtempSync(join(tmpdir(), 'core-wasm-'));
    execFileSync(process.execPath, [new URL('scripts/build-wasm.mjs', PKG).pathname, out, '--no-generate'], {
      stdio: 'ignore',
    });
    expect(new Uint8Array(readFileSync(join(out, 'chip8.wasm')))).toEqual(built);
  });
});

describe('@netplay/core-wasm/node', () => {
  it('loads a core from a file', async () => {
    const { loadWasmCoreFile } = await import('../src/node.js');
    const core = await loadWasmCoreFile(new URL('build/toy.wasm', PKG), { content: new Uint8Array([1]) });
    core.advance();
    expect(core.frame).toBe(1);
  });

  it('the main entry point imports no node: modules', () => {
    const src = new URL('../src/', import.meta.url);
    for (const file of [
      'index.ts',
      'abi.ts',
      'wasm-core.ts',
      'chip8.ts',
      'render.ts',
      'rom-setup.ts',
      'rom-database.ts',
      'base64.ts',
    ]) {
      expect(readFileSync(new URL(file, src), 'utf8'), file).not.toMatch(/from 'node:/);
    }
  });
});

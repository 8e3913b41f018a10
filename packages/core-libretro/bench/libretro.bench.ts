// Real libretro cores through koffi: frame rate, state size, save/load next to a TypedArray copy
// of the same bytes, one 8-frame rollback against the 16.7 ms budget, and the engine's overhead
// next to the core's own time (retro_run / retro_serialize called directly). Needs
// .ci/setup-libretro.sh (Debian libretro-nestopia, libretro-gambatte, libretro-mgba, efp).
import { existsSync } from 'node:fs';
import { BenchSuite } from '@netplay/bench-kit';
import { buildTestRoms } from '../scripts/build-test-roms.js';
import { type LibretroExports, NativeBuffer } from '../src/ffi.js';
import { DEBIAN_LIBRETRO_DIR, LibretroCore, type LibretroCoreOptions, resolveLibretroCore } from '../src/index.js';
import { EFP, requireFile, tinyGbaRom } from '../test/libretro/fixtures.js';

const budgetMs = 1000 / 60;

// Without the Debian cores there is nothing to measure: say so loudly (so that `npm run bench`
// still runs the other packages' benchmarks) instead of failing.
const needed = ['nestopia', 'gambatte', 'mgba'].map((n) => `${DEBIAN_LIBRETRO_DIR}/${n}_libretro.so`).concat(EFP);
const missing = needed.filter((p) => !existsSync(p));
if (missing.length > 0) {
  console.log(`\n*** core-libretro benchmark NOT RUN: missing ${missing.join(', ')} — run .ci/setup-libretro.sh ***\n`);
  process.exit(0);
}

function benchCore(label: string, options: LibretroCoreOptions, note: string): void {
  const suite = new BenchSuite(`core-libretro/${label}`);
  const core = LibretroCore.load(options);
  const lib = (core as unknown as { exports: LibretroExports }).exports;
  // Play into the game a little, with input changing, so frames and states are typical.
  for (let i = 0; i < 600; i++) {
    core.setInputMask(0, i % 90 < 10 ? 1 << 3 : (i * 37) & 0x0df1);
    core.advance();
  }
  const state = new Uint8Array(core.stateBytes);
  const n = core.saveInto(state);
  const saved = state.slice(0, n);
  suite.record({
    name: `${label} state size`,
    value: n,
    unit: 'bytes',
    note: `${core.info.libraryName} ${core.info.libraryVersion.trim()}; ${note}`,
  });

  // Baselines: one FFI call, the core's own frame, a copy of the state's bytes.
  suite.measure('FFI call (retro_api_version)', () => lib.retro_api_version());
  const raw = suite.measure(`${label} retro_run, called directly`, () => lib.retro_run(), {
    note: 'the core alone: input/video/audio callbacks included',
  });
  const frame = suite.measure(`${label} frame (LibretroCore.advance)`, () => core.advance(), {
    baseline: `${label} retro_run, called directly`,
    note: 'ratio < 1 = engine overhead',
  });
  suite.record({
    name: `${label} frames/s`,
    value: frame.value,
    unit: 'frames/s',
    note: `${(1000 / frame.value).toFixed(3)} ms per frame; engine overhead ${((1000 / frame.value - 1000 / raw.value) * 1000).toFixed(1)} µs`,
  });
  const src = saved.slice();
  const dst = new Uint8Array(n);
  suite.measure(`TypedArray.set of ${n} B`, () => dst.set(src));
  suite.measure(`${label} retro_serialize_size`, () => lib.retro_serialize_size(), {
    baseline: `TypedArray.set of ${n} B`,
  });
  const size = lib.retro_serialize_size();
  const scratch = new NativeBuffer(size);
  suite.measure(`${label} retro_serialize, called directly`, () => lib.retro_serialize(scratch.ptr, size), {
    baseline: `TypedArray.set of ${n} B`,
    note: 'the core alone',
  });
  const internals = core as unknown as { cacheValid: boolean };
  suite.measure(
    `${label} saveInto (fresh serialize)`,
    () => {
      internals.cacheValid = false; // as after an advance
      core.saveInto(state);
    },
    { baseline: `${label} retro_serialize, called directly`, note: 'serialize_size + serialize + header + copy' },
  );
  scratch.free();
  const load = suite.measure(`${label} load`, () => core.load(saved), {
    baseline: `TypedArray.set of ${n} B`,
    note: 'header check, backup copy, retro_unserialize',
  });
  suite.measure(`${label} checksum (hash64 of the state)`, () => core.checksum(), {
    baseline: `TypedArray.set of ${n} B`,
  });
  const rollback = suite.measure(
    `${label} 8-frame rollback (load + 8 × (advance + saveInto))`,
    () => {
      core.load(saved);
      for (let i = 0; i < 8; i++) {
        core.advance();
        core.saveInto(state);
      }
    },
    { baseline: `${label} frame (LibretroCore.advance)` },
  );
  const rollbackMs = 1000 / rollback.value;
  suite.record({
    name: `${label} 8-frame rollback, share of 16.7 ms`,
    value: (100 * rollbackMs) / budgetMs,
    unit: '%',
    note: `${rollbackMs.toFixed(3)} ms (load ${(1000 / load.value).toFixed(3)} ms)${label === 'nestopia' ? '; goal ≤ 20 %' : ''}`,
  });
  suite.record({
    name: `${label} asks GET_SAVESTATE_CONTEXT`,
    value: core.savestateContextAsked ? 1 : 0,
    unit: 'yes=1',
    note: core.savestateContextAsked
      ? 'answered rollback-netplay'
      : 'the core never asks: the savestate context has no effect on it',
  });
  core.close();
  suite.finish();
}

benchCore(
  'nestopia',
  { core: resolveLibretroCore('nestopia'), content: requireFile(EFP), ports: 2 },
  'efp.nes (Debian package efp)',
);
const onlyNes = process.argv.includes('--nes-only');
if (!onlyNes) {
  // Our own GB and GBA test ROMs (test-roms/), when Debian's assemblers are here; else stand-ins.
  let roms: { gb: string; gba: string } | undefined;
  try {
    roms = buildTestRoms();
  } catch (e) {
    console.log(`core-libretro bench: own test ROMs not built (${(e as Error).message}); using stand-ins`);
  }
  benchCore(
    'gambatte',
    roms
      ? { core: resolveLibretroCore('gambatte'), content: requireFile(roms.gb), ports: 1 }
      : { core: resolveLibretroCore('gambatte'), content: requireFile(EFP), contentName: 'efp.gb', ports: 1 },
    roms
      ? 'our GB test ROM (test-roms/gb: joypad mixed into RAM every VBlank)'
      : 'efp.nes taken as a plain Game Boy ROM (no GB assembler here): frame cost is the machine, not a game',
  );
  benchCore(
    'mgba',
    roms
      ? { core: resolveLibretroCore('mgba'), content: requireFile(roms.gba), ports: 1 }
      : { core: resolveLibretroCore('mgba'), content: tinyGbaRom(), contentName: 'tiny.gba', ports: 1 },
    roms
      ? 'our GBA test ROM (test-roms/gba: KEYINPUT mixed into RAM every VBlank)'
      : 'a 1 KiB GBA ROM looping at its entry point (no ARM assembler here): frame cost is the machine',
  );
}

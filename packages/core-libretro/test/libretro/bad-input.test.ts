// Bad cores, content, states and options against real cores: typed errors naming the file, and a
// core left unchanged by a refused state.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LibretroCore, LibretroError, STATE_HEADER_BYTES } from '../../src/index.js';
import { EFP, loadNestopia, MGBA, NESTOPIA, requireFile, scriptedRun, tinyGbaRom, tinyNesRom } from './fixtures.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'core-libretro-test-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function errorOf(fn: () => unknown): LibretroError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LibretroError);
    return e as LibretroError;
  }
  throw new Error('expected a LibretroError');
}

describe('bad cores and content', () => {
  it('content for another system: mGBA refuses efp.nes (content-rejected naming the ROM)', () => {
    // (Gambatte does not check: it accepts efp.nes as a Game Boy cartridge.)
    const e = errorOf(() => LibretroCore.load({ core: requireFile(MGBA), content: requireFile(EFP) }));
    expect(e.code).toBe('content-rejected');
    expect(e.file).toBe(EFP);
    expect(e.message).toContain('efp.nes');
  });

  it('garbage content: Nestopia refuses it', () => {
    const e = errorOf(() =>
      LibretroCore.load({ core: requireFile(NESTOPIA), content: new Uint8Array(100).fill(7), contentName: 'junk.nes' }),
    );
    expect(e.code).toBe('content-rejected');
    expect(e.file).toBe('junk.nes');
  });

  it('a shared library that is not a libretro core (zlib): not-libretro naming it', () => {
    const zlib = ['/lib/x86_64-linux-gnu/libz.so.1', '/usr/lib/x86_64-linux-gnu/libz.so.1'].find((p) => existsSync(p));
    if (zlib === undefined) throw new Error('libz.so.1 is missing (it comes with every Debian install)');
    const dir = tempDir();
    const fake = join(dir, 'zlib_libretro.so');
    copyFileSync(zlib, fake);
    const e = errorOf(() => LibretroCore.load({ core: fake, content: requireFile(EFP) }));
    expect(e.code).toBe('not-libretro');
    expect(e.file).toBe(fake);
    expect(e.message).toContain('retro_');
  });

  it('core options: unknown keys and undeclared values are bad-option; declared ones apply', () => {
    expect(errorOf(() => loadNestopia({ options: { nestopia_no_such_option: 'x' } })).code).toBe('bad-option');
    const probe = loadNestopia();
    const [key, variable] = [...probe.coreVariables.entries()].find(([, v]) => v.values.length > 1)!;
    probe.close();
    expect(errorOf(() => loadNestopia({ options: { [key]: 'not-a-value' } })).code).toBe('bad-option');
    const ok = loadNestopia({ options: { [key]: variable.values[1]! } });
    ok.close();
  });

  it('nvram larger than the game has: bad-option; efp has no save RAM and 2 KiB of system RAM', () => {
    const core = loadNestopia();
    try {
      expect(core.nvram().length).toBe(0);
      expect(core.systemRam().length).toBe(2048);
      const before = core.systemRam().slice();
      scriptedRun(core, 1, 120);
      expect(core.systemRam()).not.toEqual(before);
    } finally {
      core.close();
    }
    expect(errorOf(() => loadNestopia({ nvram: new Uint8Array(8) })).code).toBe('bad-option');
  });
});

describe('bad states', () => {
  it('truncated, not a state, other content, another core, refused by the core: typed errors, core unchanged', () => {
    const core = loadNestopia();
    const twin = loadNestopia({ startState: core.powerOnState() });
    const other = LibretroCore.load({ core: requireFile(NESTOPIA), content: tinyNesRom(), contentName: 'tiny.nes' });
    const gba = LibretroCore.load({ core: requireFile(MGBA), content: tinyGbaRom(), contentName: 'tiny.gba' });
    try {
      scriptedRun(core, 4, 300);
      scriptedRun(twin, 4, 300);
      const good = core.save();
      const sum = core.checksum();
      expect(errorOf(() => core.load(good.subarray(0, good.length - 1))).code).toBe('truncated-state');
      expect(errorOf(() => core.load(good.subarray(0, 10))).code).toBe('truncated-state');
      expect(errorOf(() => core.load(good.subarray(STATE_HEADER_BYTES))).code).toBe('not-a-state');
      const fromOther = errorOf(() => core.load(other.save()));
      expect(fromOther.code).toBe('other-content');
      expect(fromOther.file).toBe(EFP);
      expect(errorOf(() => core.load(gba.save())).code).toBe('foreign-state');
      const garbage = good.slice();
      garbage.fill(0xa5, STATE_HEADER_BYTES);
      expect(errorOf(() => core.load(garbage)).code).toBe('state-rejected');
      // Unchanged: same checksum, and it runs on exactly like its untouched twin.
      expect(core.checksum()).toBe(sum);
      expect(core.frame).toBe(300);
      expect(scriptedRun(core, 4, 300)).toEqual(scriptedRun(twin, 4, 300));
      expect(errorOf(() => core.saveInto(new Uint8Array(10))).code).toBe('buffer-too-small');
      expect(errorOf(() => core.setInput(2, new Uint8Array(2))).code).toBe('bad-input');
      expect(errorOf(() => core.setInput(0, new Uint8Array(3))).code).toBe('bad-input');
    } finally {
      for (const c of [core, twin, other, gba]) c.close();
    }
  });
});

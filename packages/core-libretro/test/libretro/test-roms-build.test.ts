// The test ROMs as built by scripts/build-test-roms.ts (vitest's globalSetup): headers a boot ROM
// or BIOS would accept, checked with the hardware's own rules (not the build script's functions),
// a clear error naming the Debian package when an assembler is missing, and not in the npm package.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { GB_LOGO } from '../../scripts/build-test-roms.js';
import { GB_TEST_ROM, GBA_TEST_ROM, romTarget } from './test-roms.js';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));
const buildScript = join(packageDir, 'scripts', 'build-test-roms.ts');
const tmp = mkdtempSync(join(tmpdir(), 'core-libretro-build-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the built test ROMs', () => {
  it('GB: the logo Gambatte carries, a header checksum the boot ROM accepts, the global checksum, MBC1+RAM+battery', () => {
    const rom = new Uint8Array(readFileSync(GB_TEST_ROM));
    expect(rom.length).toBe(32 * 1024);
    const gambatte = readFileSync(romTarget('gambatte-gb').core);
    expect(gambatte.indexOf(Buffer.from(rom.subarray(0x104, 0x134)))).toBeGreaterThan(0);
    expect(Buffer.from(rom.subarray(0x104, 0x134))).toEqual(Buffer.from(GB_LOGO));
    // The boot ROM adds 0x134..0x14D and 0x19: the low byte must be zero.
    let sum = 0x19;
    for (let i = 0x134; i <= 0x14d; i++) sum += rom[i]!;
    expect(sum & 0xff).toBe(0);
    let global = 0;
    for (let i = 0; i < rom.length; i++) global += rom[i]!;
    global -= rom[0x14e]! + rom[0x14f]!;
    expect((rom[0x14e]! << 8) | rom[0x14f]!).toBe(global & 0xffff);
    expect([rom[0x147], rom[0x148], rom[0x149]]).toEqual([0x03, 0x00, 0x02]); // MBC1+RAM+BATTERY, 32 KiB, 8 KiB
    expect(Buffer.from(rom.subarray(0x100, 0x104))).toEqual(Buffer.from([0x00, 0xc3, 0x50, 0x01])); // nop; jp 0x150
  });

  it('GBA: a branch at the entry point, the fixed byte 0x96, a complement byte the BIOS accepts, the logo', () => {
    const rom = new Uint8Array(readFileSync(GBA_TEST_ROM));
    expect(rom[3]).toBe(0xea); // ARM `b` (always)
    expect(rom[0xb2]).toBe(0x96);
    // The BIOS adds 0xA0..0xBD and 0x19: the low byte must be zero.
    let sum = 0x19;
    for (let i = 0xa0; i <= 0xbd; i++) sum += rom[i]!;
    expect(sum & 0xff).toBe(0);
    // The logo's first and last bytes (its 156 bytes are in the build script, from GBATEK).
    expect([rom[0x04], rom[0x05], rom[0x9e], rom[0x9f]]).toEqual([0x24, 0xff, 0xf8, 0x07]);
    expect(Buffer.from(rom).includes(Buffer.from('SRAM_V'))).toBe(true);
  });

  it('a missing assembler fails with the Debian package to install', () => {
    const run = (pathDir: string): string => {
      try {
        execFileSync(process.execPath, ['--import', 'tsx', buildScript], {
          cwd: packageDir,
          env: { ...process.env, PATH: pathDir },
          stdio: 'pipe',
        });
        return 'built';
      } catch (e) {
        return String((e as { stderr?: Buffer }).stderr ?? e);
      }
    };
    // Nothing but node on the PATH: sdasgb is the first tool the build needs.
    const nodeOnly = join(tmp, 'node-only');
    const withSdcc = join(tmp, 'with-sdcc');
    for (const d of [nodeOnly, withSdcc]) {
      mkdirSync(d);
      symlinkSync(process.execPath, join(d, 'node'));
    }
    for (const t of ['sdasgb', 'sdldgb', 'makebin']) symlinkSync(`/usr/bin/${t}`, join(withSdcc, t));
    expect(run(nodeOnly)).toContain('sdasgb not found: install the Debian package sdcc');
    // The GB toolchain present, the ARM one missing.
    expect(run(withSdcc)).toContain('arm-none-eabi-as not found: install the Debian package binutils-arm-none-eabi');
  });

  it('the npm package holds neither the ROMs, their sources nor the build script', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: packageDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    expect(files).toContain('README.md');
    expect(files.filter((f) => /test-roms|scripts\/|\.gba?$/.test(f))).toEqual([]);
    expect(dirname(GB_TEST_ROM)).toBe(join(packageDir, 'test-roms', 'out'));
  });
});

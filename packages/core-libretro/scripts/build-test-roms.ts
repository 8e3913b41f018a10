// Assembles the package's own Game Boy and GBA test ROMs (test-roms/gb, test-roms/gba) into the
// git-ignored test-roms/out/, and writes their headers: the Nintendo logo, the GB header and
// global checksums, the GBA complement check byte. Needs Debian's sdcc (sdasgb, sdldgb, makebin)
// and binutils-arm-none-eabi; a missing tool fails with the package to install.
//
// Run: node --import tsx scripts/build-test-roms.ts   (vitest.libretro.config.ts runs it as its
// globalSetup, so `npm run test:libretro` always tests ROMs built from the sources in the repo).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

/** Where the built ROMs go (git-ignored; not in the npm package). */
export const TEST_ROM_OUT = join(PACKAGE_DIR, 'test-roms', 'out');
/** The built Game Boy ROM (MBC1 + 8 KiB battery RAM, 32 KiB). */
export const GB_TEST_ROM = join(TEST_ROM_OUT, 'netplay-test.gb');
/** The built GBA ROM. */
export const GBA_TEST_ROM = join(TEST_ROM_OUT, 'netplay-test.gba');
/** The frame after which the quiet GBA ROM stores nothing more to its SRAM. */
export const QUIET_AFTER_FRAME = 200;
/**
 * The GBA ROM assembled with `--defsym QUIET_AFTER=`{@link QUIET_AFTER_FRAME}: the same game, but
 * no SRAM store after that frame (a game that saved and now only plays).
 */
export const GBA_QUIET_TEST_ROM = join(TEST_ROM_OUT, 'netplay-test-quiet.gba');

/**
 * The 48 bytes of the Nintendo logo at 0x104 of a Game Boy ROM. The boot ROM compares them; an
 * emulator that skips it (Gambatte, mGBA) may not. Checked against the copy inside Debian's
 * gambatte_libretro.so (test/libretro/test-roms.test.ts).
 */
export const GB_LOGO = Uint8Array.from(
  Buffer.from(
    'ceed6666cc0d000b03730083000c000d0008111f8889000edccc6ee6ddddd999bbbb67636e0eecccdddc999fbbb9333e',
    'hex',
  ),
);

/** The 156 bytes of the Nintendo logo at 0x04 of a GBA ROM (as in GBATEK and devkitPro's gbafix). */
export const GBA_LOGO = Uint8Array.from(
  Buffer.from(
    '24ffae51699aa2213d84820a84e409ad11248b98c0817f21a352be199309ce2010464a4af82731ec58c7e83382e3cebf' +
      '85f4df94ce4b09c194568ac01372a7fc9f844d73a3ca9a615897a327fc039876231dc7610304ae56bf38840040a70efd' +
      'ff52fe036f9530f197fbc08560d68025a963be03014e38e2f9a234ffbb3e0344780090cb88113a9465c07c6387f03caf' +
      'd625e48b380aac7221d4f807',
    'hex',
  ),
);

/** GB header checksum (0x14D): x = x - byte - 1 over 0x134..0x14C. */
export function gbHeaderChecksum(rom: Uint8Array): number {
  let x = 0;
  for (let i = 0x134; i <= 0x14c; i++) x = (x - rom[i]! - 1) & 0xff;
  return x;
}

/** GB global checksum (0x14E, big-endian): the sum of every byte but the two that hold it. */
export function gbGlobalChecksum(rom: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < rom.length; i++) if (i !== 0x14e && i !== 0x14f) sum = (sum + rom[i]!) & 0xffff;
  return sum;
}

/** Writes the logo, the header checksum and then the global checksum into a GB ROM, in place. */
export function fixGbHeader(rom: Uint8Array): Uint8Array {
  if (rom.length < 0x8000) throw new Error(`GB ROM of ${rom.length} B: at least 32 KiB expected`);
  rom.set(GB_LOGO, 0x104);
  rom[0x14d] = gbHeaderChecksum(rom);
  const global = gbGlobalChecksum(rom);
  rom[0x14e] = global >> 8;
  rom[0x14f] = global & 0xff;
  return rom;
}

/** GBA complement check (0xBD): -(sum of 0xA0..0xBC) - 0x19, low byte. */
export function gbaComplement(rom: Uint8Array): number {
  let sum = 0;
  for (let i = 0xa0; i <= 0xbc; i++) sum += rom[i]!;
  return -(sum + 0x19) & 0xff;
}

/** Writes the logo and the complement check byte into a GBA ROM, in place. */
export function fixGbaHeader(rom: Uint8Array): Uint8Array {
  if (rom.length < 0xc0) throw new Error(`GBA ROM of ${rom.length} B: the header alone is 192 B`);
  if (rom[0xb2] !== 0x96) throw new Error('GBA ROM: the fixed byte 0x96 is not at 0xB2 (header misassembled)');
  rom.set(GBA_LOGO, 0x04);
  rom[0xbd] = gbaComplement(rom);
  return rom;
}

/** Runs a build tool; a missing tool names the Debian package that has it. */
function tool(name: string, args: readonly string[], debianPackage: string, cwd: string): void {
  try {
    execFileSync(name, args, { cwd, stdio: 'pipe' });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer; stdout?: Buffer };
    if (err.code === 'ENOENT')
      throw new Error(
        `build-test-roms: ${name} not found: install the Debian package ${debianPackage} (.ci/setup-libretro.sh does)`,
      );
    throw new Error(
      `build-test-roms: ${name} ${args.join(' ')} failed:\n${err.stdout?.toString() ?? ''}${err.stderr?.toString() ?? ''}`,
    );
  }
}

/** Writes `bytes` to `path` through a temporary name, so a reader never sees half a ROM. */
function writeAtomic(path: string, bytes: Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, path);
}

/** Assembles the ROMs (GB, GBA and the quiet GBA variant) into {@link TEST_ROM_OUT}; returns their paths. */
export function buildTestRoms(): { gb: string; gba: string; gbaQuiet: string } {
  const work = mkdtempSync(join(tmpdir(), 'netplay-test-roms-'));
  try {
    const gbSource = join(PACKAGE_DIR, 'test-roms', 'gb', 'netplay-test.s');
    tool('sdasgb', ['-o', 'gb.rel', gbSource], 'sdcc', work);
    tool('sdldgb', ['-i', 'gb.ihx', 'gb.rel'], 'sdcc', work);
    tool('makebin', ['-s', '32768', 'gb.ihx', 'gb.bin'], 'sdcc', work);
    const gb = fixGbHeader(new Uint8Array(readFileSync(join(work, 'gb.bin'))));

    const gbaSource = join(PACKAGE_DIR, 'test-roms', 'gba', 'netplay-test.s');
    const assembleGba = (name: string, defsym: readonly string[]): Uint8Array => {
      tool(
        'arm-none-eabi-as',
        ['-mcpu=arm7tdmi', ...defsym, '-o', `${name}.o`, gbaSource],
        'binutils-arm-none-eabi',
        work,
      );
      tool(
        'arm-none-eabi-ld',
        ['-Ttext=0x08000000', '-e', '_start', '-o', `${name}.elf`, `${name}.o`],
        'binutils-arm-none-eabi',
        work,
      );
      tool('arm-none-eabi-objcopy', ['-O', 'binary', `${name}.elf`, `${name}.bin`], 'binutils-arm-none-eabi', work);
      return fixGbaHeader(new Uint8Array(readFileSync(join(work, `${name}.bin`))));
    };
    const gba = assembleGba('gba', []);
    const gbaQuiet = assembleGba('gba-quiet', ['--defsym', `QUIET_AFTER=${QUIET_AFTER_FRAME}`]);

    mkdirSync(TEST_ROM_OUT, { recursive: true });
    writeAtomic(GB_TEST_ROM, gb);
    writeAtomic(GBA_TEST_ROM, gba);
    writeAtomic(GBA_QUIET_TEST_ROM, gbaQuiet);
    return { gb: GB_TEST_ROM, gba: GBA_TEST_ROM, gbaQuiet: GBA_QUIET_TEST_ROM };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** vitest globalSetup: build before any real-core test file runs. */
export default function setup(): void {
  buildTestRoms();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { gb, gba, gbaQuiet } = buildTestRoms();
  process.stdout.write(`built ${gb}\nbuilt ${gba}\nbuilt ${gbaQuiet}\n`);
}

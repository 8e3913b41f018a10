import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  Chip8Core,
  Chip8Platform,
  Chip8Quirk,
  DEFAULT_SETUP,
  lookupRom,
  PLATFORM_QUIRKS,
  quirksFromDatabase,
  resolveRomSetup,
  romSha1,
  WasmCoreError,
} from '../src/index.js';
import { FIXTURES, fixture } from './fixtures.js';

const db = new URL('chip-8-database/', FIXTURES);
const programs = JSON.parse(readFileSync(new URL('programs.json', db), 'utf8')) as Array<{
  title: string;
  roms: Record<string, { platforms: string[]; tickrate?: number }>;
}>;
const hashes = JSON.parse(readFileSync(new URL('sha1-hashes.json', db), 'utf8')) as Record<string, number>;
const platforms = JSON.parse(readFileSync(new URL('platforms.json', db), 'utf8')) as Array<{
  id: string;
  defaultTickrate: number;
}>;

const fixtureRoms = ['chip8archive/roms', 'timendus-chip8-test-suite/bin'].flatMap((dir) =>
  readdirSync(new URL(`${dir}/`, FIXTURES))
    .filter((f) => f.endsWith('.ch8'))
    .map((f) => `${dir}/${f}`),
);

describe('ROM setup from the chip-8 database', () => {
  it('the bundled subset covers every fixture ROM, with the full database title, platform and tickrate', () => {
    expect(fixtureRoms.length).toBe(21);
    for (const path of fixtureRoms) {
      const bytes = fixture(path);
      const sha1 = createHash('sha1').update(bytes).digest('hex');
      expect(romSha1(bytes)).toBe(sha1);
      const program = programs[hashes[sha1] ?? -1];
      expect(program, path).toBeDefined();
      const entry = lookupRom(bytes);
      expect(entry?.title).toBe(program?.title);
      const rom = program?.roms[sha1];
      const setup = resolveRomSetup(bytes);
      expect(setup.databasePlatform).toBe(rom?.platforms[0]);
      const preset = platforms.find((p) => p.id === rom?.platforms[0]);
      expect(setup.config.tickrate).toBe(rom?.tickrate ?? preset?.defaultTickrate);
    }
  });

  it('maps database platforms and quirks', () => {
    expect(resolveRomSetup(fixture('chip8archive/roms/wonkypong.ch8')).config.platform).toBe(Chip8Platform.XoChip);
    expect(resolveRomSetup(fixture('chip8archive/roms/ultimatetictactoe.ch8')).config.platform).toBe(
      Chip8Platform.SuperChipModern,
    );
    const space = resolveRomSetup(fixture('chip8archive/roms/spaceracer.ch8'));
    expect(space.config.platform).toBe(Chip8Platform.ModernChip8);
    expect(space.layout).toBe('pad');
    // The database's VIP preset: vblank and logic on, wrap off (so clip), I incremented.
    expect(quirksFromDatabase({ vblank: true, logic: true })).toBe(PLATFORM_QUIRKS[Chip8Platform.Chip8]);
    expect(quirksFromDatabase({ wrap: true })).toBe(PLATFORM_QUIRKS[Chip8Platform.XoChip]);
    expect(quirksFromDatabase({ shift: true, memoryLeaveIUnchanged: true, jump: true })).toBe(
      PLATFORM_QUIRKS[Chip8Platform.SuperChipModern],
    );
    expect(quirksFromDatabase({ memoryIncrementByX: true }) & Chip8Quirk.MemoryIncrementByX).not.toBe(0);
  });

  test.prop([fc.uint8Array({ minLength: 1, maxLength: 64 })])('an unknown ROM gets the stated default', (bytes) => {
    fc.pre(lookupRom(bytes) === undefined);
    const setup = resolveRomSetup(bytes);
    expect(setup.entry).toBeUndefined();
    expect(setup.config.platform).toBe(DEFAULT_SETUP.platform);
    expect(setup.config.quirks).toBe(DEFAULT_SETUP.quirks);
    expect(setup.config.tickrate).toBe(DEFAULT_SETUP.tickrate);
    expect(setup.layout).toBe('keypad');
  });

  it('every setting can be overridden', () => {
    const bytes = fixture('chip8archive/roms/spaceracer.ch8');
    const setup = resolveRomSetup(bytes, {
      platform: Chip8Platform.SuperChipLegacy,
      tickrate: 77,
      seed: 9,
      layout: 'keypad',
    });
    expect(setup.config).toMatchObject({
      platform: Chip8Platform.SuperChipLegacy,
      quirks: PLATFORM_QUIRKS[Chip8Platform.SuperChipLegacy],
      tickrate: 77,
      seed: 9,
      keyMap: [],
    });
    expect(resolveRomSetup(bytes, { quirks: Chip8Quirk.Jump }).config.quirks).toBe(Chip8Quirk.Jump);
    expect(resolveRomSetup(bytes, { keyMap: [[1, 2]] }).config.keyMap).toEqual([[1, 2]]);
    expect(resolveRomSetup(bytes, { database: null }).entry).toBeUndefined();
    const core = Chip8Core.createSync(bytes, { tickrate: 5 });
    const at5 = core.save();
    core.configure({ tickrate: 6 });
    expect(core.config.tickrate).toBe(6);
    expect(core.frame).toBe(0);
    // The configuration is part of the savestate: loading the old state brings tickrate 5 back.
    core.load(at5);
    expect(core.config.tickrate).toBe(5);
    expect(core.config.keyMap[1]?.slice(0, 2)).toEqual([0xd, 0xe]);
  });

  it('rejects bad settings with WasmCoreError bad-option', () => {
    const bytes = fixture('chip8archive/roms/spaceracer.ch8');
    for (const bad of [
      { tickrate: 0 },
      { tickrate: 1.5 },
      { quirks: -1 },
      { seed: 2 ** 32 },
      { platform: 9 as 0 },
      { keyMap: [[16]] },
    ]) {
      expect(() => resolveRomSetup(bytes, bad)).toThrow(WasmCoreError);
    }
  });
});

// The CLI's libretro plumbing that needs no core: key and bot masks, the braille screen, errors.
// (Real-core runs: test/libretro, `npm run test:libretro`.)

import { fc, test } from '@fast-check/vitest';
import { LibretroError, RetroPad } from '@netplay/core-libretro';
import { PadButton } from '@netplay/core-wasm';
import { describe, expect, it } from 'vitest';
import { CliError, ExitCode } from '../src/exit-codes.js';
import { libretroFailure, openGame, RetroPadBot, retroPadMask } from '../src/game.js';
import { PadExtra } from '../src/keyboard.js';
import { LibretroScreen } from '../src/libretro-screen.js';

describe('libretro input', () => {
  it('maps the keyboard pad to the RetroPad: d-pad, A, B, Start (Enter), Select (Tab)', () => {
    expect(retroPadMask(1 << PadButton.Up)).toBe(RetroPad.UP);
    expect(retroPadMask((1 << PadButton.Left) | (1 << PadButton.A))).toBe(RetroPad.LEFT | RetroPad.A);
    expect(retroPadMask(1 << PadButton.B)).toBe(RetroPad.B);
    expect(retroPadMask(1 << PadExtra.Start)).toBe(RetroPad.START);
    expect(retroPadMask(1 << PadExtra.Select)).toBe(RetroPad.SELECT);
    expect(retroPadMask(0xffff) & (RetroPad.X | RetroPad.Y)).toBe(0);
  });

  test.prop([fc.integer({ min: 0, max: 2 ** 31 })], { numRuns: 20 })(
    'the bot never presses X/Y when they are unsafe (Nestopia), and presses something most frames',
    (seed) => {
      const bot = new RetroPadBot(seed, 0xffff & ~(RetroPad.X | RetroPad.Y));
      let pressed = 0;
      for (let f = 0; f < 600; f++) {
        const input = bot.next();
        const mask = input[0]! | (input[1]! << 8);
        expect(mask & (RetroPad.X | RetroPad.Y)).toBe(0);
        if (mask !== 0) pressed++;
      }
      expect(pressed).toBeGreaterThan(300);
    },
  );

  it('the same seed gives the same inputs', () => {
    const a = new RetroPadBot(5);
    const b = new RetroPadBot(5);
    for (let f = 0; f < 300; f++) expect(Array.from(a.next())).toEqual(Array.from(b.next()));
  });
});

describe('LibretroScreen', () => {
  it('draws nothing before the first frame, then braille: lit where the pixel is bright', () => {
    const screen = new LibretroScreen();
    expect(screen.text()).toBeUndefined();
    // 8x8 xrgb8888: white at (0,0) only.
    const data = new Uint8Array(8 * 8 * 4);
    data.set([255, 255, 255, 0], 0);
    screen.sink({ data, width: 8, height: 8, pitch: 32, format: 'xrgb8888' });
    expect(screen.text()).toBe(`${String.fromCharCode(0x2801)}${String.fromCharCode(0x2800)}`);
  });

  it('reads rgb565 and 0rgb1555, and keeps its own copy of the frame', () => {
    const screen = new LibretroScreen();
    const data = new Uint8Array(4 * 8 * 2);
    // (2, 6): rgb565 white = 0xffff → dot (1, 3) of the first cell = 0x80.
    const o = 6 * 8 + 2 * 2;
    data[o] = 0xff;
    data[o + 1] = 0xff;
    screen.sink({ data, width: 4, height: 8, pitch: 8, format: 'rgb565' });
    data.fill(0);
    expect(screen.text()).toBe(String.fromCharCode(0x2880));
    const dim = new Uint8Array(4 * 8 * 2);
    dim[0] = 0x21; // 0rgb1555: blue 1, green 1: dark
    screen.sink({ data: dim, width: 4, height: 8, pitch: 8, format: '0rgb1555' });
    expect(screen.text()).toBe(String.fromCharCode(0x2800));
  });
});

describe('errors', () => {
  it('a missing core, a non-core or a crash is BadCore; content problems are BadRom; others pass through', () => {
    const missing = libretroFailure(new LibretroError('missing-core', 'no core file at /x.so', '/x.so'));
    expect(missing).toBeInstanceOf(CliError);
    expect((missing as CliError).exitCode).toBe(ExitCode.BadCore);
    expect((missing as CliError).message).toMatch(/setup-libretro\.sh/);
    expect((libretroFailure(new LibretroError('not-libretro', 'x')) as CliError).exitCode).toBe(ExitCode.BadCore);
    expect((libretroFailure(new LibretroError('core-crashed', 'x')) as CliError).exitCode).toBe(ExitCode.BadCore);
    expect((libretroFailure(new LibretroError('content-rejected', 'x')) as CliError).exitCode).toBe(ExitCode.BadRom);
    const other = new Error('other');
    expect(libretroFailure(other)).toBe(other);
  });

  it('--core without --rom is a usage error; an unknown core name is BadCore before anything loads', async () => {
    await expect(openGame({ core: 'nestopia' }, 2)).rejects.toMatchObject({ exitCode: ExitCode.Usage });
    await expect(openGame({ core: 'no-such-core-here', rom: 'x.nes' }, 2)).rejects.toMatchObject({
      exitCode: ExitCode.BadCore,
    });
  });

  it('without --core it is the CHIP-8 game, as before', async () => {
    const game = await openGame({}, 2, new URL('../assets/spaceracer.ch8', import.meta.url));
    expect(game.kind).toBe('chip8');
    expect(game.content.coreId).toBe('chip8');
    expect(game.screen()).toMatch(/[▀▄█ ]/);
  });
});

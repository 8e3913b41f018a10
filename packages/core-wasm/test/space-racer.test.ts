import { describe, expect, it } from 'vitest';
import { Chip8Core, PadButton } from '../src/index.js';
import { archiveRom } from './fixtures.js';

const UP = 1 << PadButton.Up;
const DOWN = 1 << PadButton.Down;

function run(core: Chip8Core, frames: number, p1: number, p2: number): void {
  core.setInputValue(0, p1);
  core.setInputValue(1, p2);
  for (let i = 0; i < frames; i++) core.advance();
}

/** Title screen, two "press a key" screens (Fx0A: press and release), then the race. */
function startGame(): Chip8Core {
  const core = Chip8Core.createSync(archiveRom('spaceracer'));
  run(core, 400, 0, 0);
  for (const pause of [60, 100, 30]) {
    run(core, 5, UP, 0);
    run(core, 5, 0, 0);
    run(core, pause, 0, 0);
  }
  return core;
}

// The ships, from the ROM's game loop (0x942-0xA60): ship 1 is drawn at (v7, v8), ship 2 at (vA, vB),
// with the 3x3 sprite at 0x3E2, and drawn and erased within each loop iteration (so they flicker at
// frame boundaries). Key 4 sets the move to -1 (up), 7 to +1; keys D and E do the same for ship 2.
function ships(core: Chip8Core): { p1: [number, number]; p2: [number, number] } {
  return { p1: [core.v(7), core.v(8)], p2: [core.v(0xa), core.v(0xb)] };
}

/** The union of the screens after each instruction of `frames` frames' worth of instructions. */
function litDuring(core: Chip8Core, frames: number): Uint8Array {
  const fb0 = core.framebuffer();
  const acc = new Uint8Array(fb0.width * fb0.height);
  for (let i = 0; i < frames * core.config.tickrate; i++) {
    core.step(1);
    const px = core.framebuffer().pixels;
    for (let p = 0; p < acc.length; p++) acc[p] = (acc[p] ?? 0) | (px[p] ?? 0);
  }
  return acc;
}

function spriteAt(acc: Uint8Array, x: number, y: number): boolean {
  // The ship sprite: .#. / #.# / #.#
  const on = (dx: number, dy: number) => acc[(y + dy) * 64 + x + dx] !== 0;
  return on(1, 0) && on(0, 1) && on(2, 1) && on(0, 2) && on(2, 2);
}

describe('Space Racer, two players', () => {
  it('uses the built-in two-player key map (P1 4/7, P2 D/E) on the pad layout', () => {
    const core = Chip8Core.createSync(archiveRom('spaceracer'));
    expect(core.title).toBe('Space Racer');
    expect(core.config.keyMap[0]?.slice(0, 2)).toEqual([0x4, 0x7]);
    expect(core.config.keyMap[1]?.slice(0, 2)).toEqual([0xd, 0xe]);
    expect(core.config.tickrate).toBe(20);
  });

  it('scripted inputs move both ships, each by its own player', () => {
    const core = startGame();
    const start = ships(core);
    expect(start.p1[0]).toBeLessThan(start.p2[0]);

    // One pass of the game loop is ~175 instructions (about 9 frames at tickrate 20) and moves a
    // ship by one pixel, so keys are held for several loop passes.
    // P1 holds up (CHIP-8 key 4): only ship 1 climbs.
    run(core, 40, UP, 0);
    const a = ships(core);
    expect(a.p1[1]).toBeLessThan(start.p1[1]);
    expect(a.p2).toEqual(start.p2);

    // P2 holds up (key D): only ship 2 climbs.
    run(core, 40, 0, UP);
    const b = ships(core);
    expect(b.p1).toEqual(a.p1);
    expect(b.p2[1]).toBeLessThan(a.p2[1]);

    // Both hold up at once: both climb in the same frames.
    run(core, 30, UP, UP);
    const c = ships(core);
    expect(c.p1[1]).toBeLessThan(b.p1[1]);
    expect(c.p2[1]).toBeLessThan(b.p2[1]);

    // Both hold down (keys 7 and E): both come back down.
    run(core, 30, DOWN, DOWN);
    const d = ships(core);
    expect(d.p1[1]).toBeGreaterThan(c.p1[1]);
    expect(d.p2[1]).toBeGreaterThan(c.p2[1]);

    // And the screen shows them there: during one pass of the loop (12 frames' worth of instructions)
    // the ship sprite appears at both positions.
    core.setInputValue(0, 0);
    core.setInputValue(1, 0);
    const now = ships(core);
    const acc = litDuring(core, 12);
    expect(ships(core)).toEqual(now);
    expect(spriteAt(acc, now.p1[0], now.p1[1])).toBe(true);
    expect(spriteAt(acc, now.p2[0], now.p2[1])).toBe(true);
    expect(now.p1[1]).toBeLessThan(start.p1[1]);
    expect(now.p2[1]).toBeLessThan(start.p2[1]);
  });

  it('on the keypad layout, key 4 moves ship 1 whichever port presses it (the keypad is the OR of the ports)', () => {
    const core = Chip8Core.createSync(archiveRom('spaceracer'), { layout: 'keypad' });
    run(core, 400, 0, 0);
    for (const pause of [60, 100, 30]) {
      run(core, 5, 1 << 4, 0);
      run(core, 5, 0, 0);
      run(core, pause, 0, 0);
    }
    const before = ships(core);
    run(core, 40, 0, 1 << 4);
    const after = ships(core);
    expect(after.p1[1]).toBeLessThan(before.p1[1]);
    expect(after.p2).toEqual(before.p2);
  });
});

import { describe, expect, it } from 'vitest';
import { Chip8Core, Chip8Platform, Chip8Quirk } from '../src/index.js';

/** Assembles 16-bit words (and raw bytes) into a ROM. */
function rom(...words: number[]): Uint8Array {
  const out = new Uint8Array(words.length * 2);
  words.forEach((w, i) => {
    out[i * 2] = w >> 8;
    out[i * 2 + 1] = w & 0xff;
  });
  return out;
}

function xo(program: Uint8Array): Chip8Core {
  return Chip8Core.createSync(program, { platform: Chip8Platform.XoChip, database: null });
}

/** Counts sign changes of an audio frame. */
function crossings(samples: Int16Array): number {
  let n = 0;
  for (let i = 1; i < samples.length; i++) if ((samples[i - 1] ?? 0) < 0 !== (samples[i] ?? 0) < 0) n++;
  return n;
}

describe('XO-CHIP', () => {
  it('F000 nnnn loads a 16-bit I, and skips jump over all four bytes', () => {
    const core = xo(rom(0xf000, 0x1234, 0x6001, 0x3001, 0xf000, 0x5678, 0x6105, 0x1210));
    core.step(1);
    expect(core.i).toBe(0x1234);
    core.step(3);
    expect(core.i).toBe(0x1234); // the second F000 was skipped whole
    expect(core.v(1)).toBe(5);
  });

  it('has 64 KiB of memory: Fx55 at 0xFFF0', () => {
    const core = xo(rom(0xf000, 0xfff0, 0x6055, 0xf055, 0x1208));
    core.step(3);
    expect(core.peek(0xfff0)).toBe(0x55);
    const chip8 = Chip8Core.createSync(rom(0xa0f0, 0x6055, 0xf055, 0x1206), {
      platform: Chip8Platform.ModernChip8,
      database: null,
    });
    chip8.step(3);
    expect(chip8.peek(0x0f0)).toBe(0x55);
    expect(chip8.peek(0xf0f0)).toBe(0x55); // 4 KiB: addresses wrap
  });

  it('5xy2 / 5xy3 save and load a register range, in either order, without moving I', () => {
    // v1..v3 = 1,2,3; I = 0x300; save v1-v3; load them reversed into v3..v1 of cleared registers.
    const core = xo(rom(0x6101, 0x6202, 0x6303, 0xa300, 0x5132, 0x6100, 0x6200, 0x6300, 0x5313, 0x1212));
    core.step(9);
    expect([core.peek(0x300), core.peek(0x301), core.peek(0x302)]).toEqual([1, 2, 3]);
    expect(core.i).toBe(0x300);
    expect([core.v(3), core.v(2), core.v(1)]).toEqual([1, 2, 3]);
  });

  it('plane selection: Fn01 picks the planes a sprite and a clear touch', () => {
    // Sprite 0xFF at 0x20C (after the code); plane 2 only, draw 1 row at (0,0); then both planes.
    const program = rom(0xf201, 0xa20e, 0xd001, 0xf301, 0x6108, 0xd101, 0x120c, 0xff80);
    const core = xo(program);
    core.step(3);
    const fb = core.framebuffer();
    expect([...fb.pixels.subarray(0, 8)]).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
    core.step(3);
    // With planes 1+2, plane 0 takes byte 0xFF and plane 1 the next byte 0x80.
    const row = [...core.framebuffer().pixels.subarray(8, 16)];
    expect(row).toEqual([3, 1, 1, 1, 1, 1, 1, 1]);
    // 00E0 with plane 2 selected clears only plane 2.
    const clear = xo(rom(0xf301, 0xa20c, 0xd001, 0xf201, 0x00e0, 0x120a, 0xff80));
    clear.step(5);
    expect([...clear.framebuffer().pixels.subarray(0, 8)]).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it('00DN scrolls up; 00CN down; in hires by pixels', () => {
    // hires; draw one pixel at (0,10); scroll up 3 -> row 7; scroll down 5 -> row 12.
    const core = xo(rom(0x00ff, 0xa20e, 0x600a, 0xd101, 0x00d3, 0x00c5, 0x120c, 0x8000));
    core.step(3);
    core.step(1);
    const at = () => core.framebuffer().pixels.findIndex((p) => p !== 0);
    expect(at()).toBe(10 * 128);
    core.step(1);
    expect(at()).toBe(7 * 128);
    core.step(1);
    expect(at()).toBe(12 * 128);
  });

  it('audio: the pattern buffer plays at 4000 * 2^((pitch - 64) / 48) bits/s while the sound timer runs', () => {
    // Pattern of 0xF0 bytes (4 on, 4 off): a square wave at bitrate / 8 Hz.
    const patternAt = 0x220;
    const code = [0xa000 | patternAt, 0xf002, 0x6000, 0xf03a, 0x6078, 0xf018, 0x120c];
    const make = (pitch: number) => {
      const words = [...code];
      words[2] = 0x6000 | pitch;
      const bytes = new Uint8Array(patternAt - 0x200 + 16);
      bytes.set(rom(...words));
      bytes.fill(0xf0, patternAt - 0x200);
      return xo(bytes);
    };
    for (const pitch of [64, 112, 16]) {
      const core = make(pitch);
      core.advance();
      const hz = (4000 * 2 ** ((pitch - 64) / 48)) / 8;
      const expectedCrossings = (2 * hz) / 60;
      expect(Math.abs(crossings(core.audio()) - expectedCrossings)).toBeLessThanOrEqual(1.5);
      expect(core.soundTimer).toBe(0x78 - 1);
    }
    // Silence once the timer is zero.
    const silent = xo(rom(0x1200));
    silent.advance();
    expect(silent.audio().every((s) => s === 0)).toBe(true);
  });

  it('the CHIP-8 buzzer sounds while the sound timer runs', () => {
    const core = Chip8Core.createSync(rom(0x6002, 0xf018, 0x1204), { platform: Chip8Platform.Chip8, database: null });
    core.advance();
    expect(crossings(core.audio())).toBeGreaterThan(4);
    core.advance();
    core.advance();
    expect(core.soundTimer).toBe(0);
    expect(core.audio().every((s) => s === 0)).toBe(true);
  });
});

describe('quirk flags (each one alone)', () => {
  const run = (program: number[], quirks: number, steps: number, platform: number = Chip8Platform.ModernChip8) => {
    const core = Chip8Core.createSync(rom(...program), { platform: platform as 0, quirks, database: null });
    core.step(steps);
    return core;
  };
  it('Logic: 8xy1 resets vF', () => {
    const p = [0x6f05, 0x6001, 0x8011, 0x1206];
    expect(run(p, 0, 3).v(15)).toBe(5);
    expect(run(p, Chip8Quirk.Logic, 3).v(15)).toBe(0);
  });
  it('Shift: 8xy6 shifts vX in place', () => {
    const p = [0x6004, 0x6110, 0x8016, 0x1206];
    expect(run(p, 0, 3).v(0)).toBe(8);
    expect(run(p, Chip8Quirk.Shift, 3).v(0)).toBe(2);
  });
  it('Jump: Bxnn adds vX', () => {
    const p = [0x6004, 0x6302, 0xb300];
    expect(run(p, 0, 3).pc).toBe(0x304);
    expect(run(p, Chip8Quirk.Jump, 3).pc).toBe(0x302);
  });
  it('Memory: Fx55 moves I by x+1, by x, or not at all', () => {
    const p = [0xa300, 0xf255, 0x1204];
    expect(run(p, Chip8Quirk.MemoryIncrement, 2).i).toBe(0x303);
    expect(run(p, Chip8Quirk.MemoryIncrementByX, 2).i).toBe(0x302);
    expect(run(p, 0, 2).i).toBe(0x300);
  });
  it('VfOrder: with x = F the result overwrites the flag', () => {
    const p = [0x6fff, 0x6102, 0x8f14, 0x1206];
    expect(run(p, 0, 3).v(15)).toBe(1); // flag last
    expect(run(p, Chip8Quirk.VfOrder, 3).v(15)).toBe(1); // 0xff + 2 = 0x101 -> result 1 as well
    const q = [0x6f10, 0x6101, 0x8f14, 0x1206];
    expect(run(q, 0, 3).v(15)).toBe(0);
    expect(run(q, Chip8Quirk.VfOrder, 3).v(15)).toBe(0x11);
  });
  it('Fx1eFlag: vF = 1 when I + vX passes 0xFFF', () => {
    const p = [0xaffe, 0x6005, 0xf01e, 0x1206];
    expect(run(p, 0, 3).v(15)).toBe(0);
    expect(run(p, Chip8Quirk.Fx1eFlag, 3).v(15)).toBe(1);
  });
  it('Clip: a sprite at the right edge clips or wraps', () => {
    const p = [0xa20a, 0x603c, 0xd011, 0x1206, 0x0000, 0xff00];
    const lit = (c: Chip8Core) => [...c.framebuffer().pixels.subarray(0, 64)].map((x) => (x ? 1 : 0)).join('');
    expect(lit(run(p, Chip8Quirk.Clip, 3))).toBe(`${'0'.repeat(60)}1111`);
    expect(lit(run(p, 0, 3))).toBe(`1111${'0'.repeat(56)}1111`);
  });
  it('CollisionRows: hires vF counts collided rows and rows clipped at the bottom (legacy SUPER-CHIP)', () => {
    const words = [0x00ff, 0xa220, 0x6000, 0x6100, 0xd013, 0xd013, 0x8ef0, 0x613e, 0x6008, 0xd014, 0x1214];
    const program = new Uint8Array(0x24);
    program.set(rom(...words));
    program.fill(0xff, 0x20);
    const legacy = Chip8Core.createSync(program, { platform: Chip8Platform.SuperChipLegacy, database: null });
    legacy.step(10);
    expect([legacy.v(0xe), legacy.v(0xf)]).toEqual([3, 2]);
    const modern = Chip8Core.createSync(program, { platform: Chip8Platform.SuperChipModern, database: null });
    modern.step(10);
    expect([modern.v(0xe), modern.v(0xf)]).toEqual([1, 0]);
  });
  it('LoresDxy0Narrow: Dxy0 in lores draws 8x16 on legacy SUPER-CHIP, 16x16 elsewhere', () => {
    const program = new Uint8Array(0x40);
    program.set(rom(0xa220, 0x6000, 0x6100, 0xd010, 0x1208));
    program.fill(0xff, 0x20);
    const litInRow0 = (platform: Chip8Platform) => {
      const core = Chip8Core.createSync(program, { platform, database: null });
      core.step(4);
      return core
        .framebuffer()
        .pixels.subarray(0, 64)
        .filter((p) => p !== 0).length;
    };
    expect(litInRow0(Chip8Platform.SuperChipLegacy)).toBe(8);
    expect(litInRow0(Chip8Platform.SuperChipModern)).toBe(16);
  });
  it('ModeKeepsScreen: legacy 00FF keeps the lores pixels (as 2x2 blocks); modern clears', () => {
    const program = rom(0xa208, 0xd001, 0x00ff, 0x1206, 0x8000);
    const after = (platform: Chip8Platform) => {
      const core = Chip8Core.createSync(program, { platform, database: null });
      core.step(3);
      const fb = core.framebuffer();
      return [fb.width, fb.pixels[0], fb.pixels[1], fb.pixels[128], fb.pixels[129], fb.pixels[2]];
    };
    expect(after(Chip8Platform.SuperChipLegacy)).toEqual([128, 1, 1, 1, 1, 0]);
    expect(after(Chip8Platform.SuperChipModern)).toEqual([128, 0, 0, 0, 0, 0]);
  });
  it('DisplayWait: Dxyn ends the frame', () => {
    const p = [0xa20a, 0xd001, 0x7101, 0x1202, 0x0000, 0x8000];
    const core = Chip8Core.createSync(rom(...p), {
      quirks: Chip8Quirk.DisplayWaitLores,
      tickrate: 100,
      database: null,
    });
    core.advance();
    expect(core.v(1)).toBe(0); // stopped right after the first draw
    core.advance();
    expect(core.v(1)).toBe(1);
  });
});

describe('Timendus 7-beep', () => {
  it('beeps: the sound timer runs and the audio is not silent in some frames, silent in others', async () => {
    const { timendus } = await import('./fixtures.js');
    const core = Chip8Core.createSync(timendus('7-beep'), { platform: Chip8Platform.Chip8, tickrate: 100 });
    let loud = 0;
    let quiet = 0;
    for (let f = 0; f < 300; f++) {
      core.advance();
      if (core.audio().some((s) => s !== 0)) loud++;
      else quiet++;
    }
    expect(loud).toBeGreaterThan(10);
    expect(quiet).toBeGreaterThan(10);
  });
});

/** The real Nestopia core for the emulating interop tests (`.ci/setup-libretro.sh` installs it). */
import { existsSync } from 'node:fs';
import { LibretroCore } from '@netplay/core-libretro';
import type { RetroArchCore } from '../src/index.js';
import { CORE, efpRom } from './harness.js';

/** Seconds of play in the long interop runs (issue 14 asks 60; shortened for CI time, see the README). */
export const SECONDS = Number(process.env.NETPLAY_INTEROP_SECONDS ?? 25);

/** A fresh Nestopia instance with efp, 2 ports. Fails with a message naming the setup scripts. */
export function loadNestopia(): LibretroCore {
  if (!existsSync(CORE)) {
    throw new Error(`no Nestopia core at ${CORE}: run .ci/setup-libretro.sh (and .ci/setup-retroarch.sh)`);
  }
  return LibretroCore.load({ core: CORE, content: efpRom(), ports: 2 });
}

/** Scripted input: a new RetroPad word every 6 frames (deterministic from `seed`), never X/Y (Nestopia's turbo). */
export function scriptedInput(seed: number): (frame: number) => number {
  const buttons = [0, 1 << 0, 1 << 8, 1 << 4, 1 << 5, 1 << 6, 1 << 7, (1 << 0) | (1 << 7), (1 << 8) | (1 << 6)];
  return (frame) => {
    const block = Math.floor(frame / 6);
    let x = Math.imul(block ^ seed, 0x9e3779b1) >>> 0;
    x ^= x >>> 15;
    return buttons[x % buttons.length]!;
  };
}

/** Input with Nestopia's turbo buttons (RetroPad Y and X: turbo B and A) mixed in, new every 6 frames. */
export function turboInput(seed: number): (frame: number) => number {
  const buttons = [0, 1 << 1, 1 << 9, (1 << 1) | (1 << 9), 1 << 0, 1 << 8, (1 << 9) | (1 << 7)];
  return (frame) => {
    let x = Math.imul(Math.floor(frame / 6) ^ seed, 0x9e3779b1) >>> 0;
    x ^= x >>> 15;
    return buttons[x % buttons.length]!;
  };
}

/** RetroPad A, as a RetroArch joypad bit. */
export const PAD_A = 1 << 8;

/**
 * `core` as a {@link RetroArchCore} that, to break the game on purpose, holds A on port 0 for 30
 * frames from `desync.at` (set it during the run; `Infinity`: never): input that only this core sees.
 */
export function desyncingCore(core: LibretroCore, desync: { at: number }): RetroArchCore {
  return {
    get info() {
      return core.info;
    },
    get contentCrc32() {
      return core.contentCrc32;
    },
    get frame() {
      return core.frame;
    },
    get ports() {
      return core.ports;
    },
    get rawStateBytes() {
      return core.rawStateBytes;
    },
    setInputMask: (port, mask) =>
      core.setInputMask(
        port,
        port === 0 && core.frame >= desync.at && core.frame < desync.at + 30 ? mask | PAD_A : mask,
      ),
    advance: () => core.advance(),
    saveRawInto: (t) => core.saveRawInto(t),
    loadRaw: (st, f) => core.loadRaw(st, f),
  };
}

// Shared fixtures of the CLI's real-core tests: Debian's Nestopia and the free efp ROM.
import { existsSync } from 'node:fs';
import { DEBIAN_LIBRETRO_DIR, LibretroCore, RetroPad } from '@netplay/core-libretro';

export const NESTOPIA = `${DEBIAN_LIBRETRO_DIR}/nestopia_libretro.so`;
export const EFP = '/usr/share/nes/efp.nes';

/** Fails (never skips) when a file the real-core tests need is missing. */
export function requireFile(path: string): string {
  if (!existsSync(path))
    throw new Error(`${path} is missing: run .ci/setup-libretro.sh (Debian packages libretro-nestopia, efp)`);
  return path;
}

/** Nestopia on efp.nes with `ports` pads, optionally from a shared start state. */
export function loadNestopia(ports: number, startState?: Uint8Array): LibretroCore {
  return LibretroCore.load({
    core: requireFile(NESTOPIA),
    content: requireFile(EFP),
    ports,
    ...(startState !== undefined ? { startState } : {}),
  });
}

/** The NES pad's buttons: B, Select, Start, the d-pad, A. Never X/Y (Nestopia's turbo, outside the savestate). */
const NES_BUTTONS =
  RetroPad.B |
  RetroPad.SELECT |
  RetroPad.START |
  RetroPad.UP |
  RetroPad.DOWN |
  RetroPad.LEFT |
  RetroPad.RIGHT |
  RetroPad.A;

/**
 * The generated input: a pure function of (seed, player, index), never 0 (so a 0 on the wire means
 * "no input yet"), held for blocks of 5 indices. Index = the frame (rollback) or the tick (lockstep).
 */
export function generatedMask(seed: number, player: number, index: number): number {
  let x = (seed ^ Math.imul(Math.floor(index / 5) + 1, 0x9e3779b1) ^ Math.imul(player + 1, 0x85ebca6b)) >>> 0;
  x ^= x << 13;
  x >>>= 0;
  x ^= x >>> 17;
  x ^= x << 5;
  x >>>= 0;
  const mask = x & NES_BUTTONS;
  return mask === 0 ? RetroPad.B : mask;
}

/** `mask` as a 2-byte RetroPad input (little-endian). */
export function pad(mask: number, target = new Uint8Array(2)): Uint8Array {
  target[0] = mask & 0xff;
  target[1] = mask >>> 8;
  return target;
}

/** The real Nestopia core for the emulating interop tests (`.ci/setup-libretro.sh` installs it). */
import { existsSync } from 'node:fs';
import { LibretroCore } from '@netplay/core-libretro';
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

import { readFileSync } from 'node:fs';
import { fc, test } from '@fast-check/vitest';
import { Chip8Core } from '@netplay/core-wasm';
import { describe, expect } from 'vitest';
import { expectDeterministic, network } from './harness.js';
import { buildSession, type Mode, peerName, randomInputs } from './sessions.js';

// Space Racer (P1 keys 4/7, P2 D/E: bit 0 up, bit 1 down of each port's mask), read in place.
const ROM = new Uint8Array(
  readFileSync(new URL('../../../../shared/fixtures/chip8/chip8archive/roms/spaceracer.ch8', import.meta.url)),
);
const F = 1000 / 60;

describe('CHIP-8 Space Racer under lockstep', () => {
  for (const mode of ['client-server', 'mesh', 'frame-advance'] as Mode[]) {
    test.prop(
      {
        seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        link: fc.record({
          latencyMs: fc.integer({ min: 0, max: 60 }),
          jitterMs: fc.integer({ min: 0, max: 20 }),
          loss: fc.double({ min: 0, max: 0.1, noNaN: true }),
          reorder: fc.double({ min: 0, max: 0.2, noNaN: true }),
        }),
      },
      { numRuns: 3, endOnFailure: true },
    )(`${mode}: both players' peers end with the offline replay's state hash`, ({ seed, link }) => {
      const net = network({ seed, link });
      const s = buildSession(mode, net, 2, () => Chip8Core.createSync(ROM), { frameMs: F, seed });
      const until = s.t0 + 240 * F;
      for (const [i, p] of s.peers.entries()) randomInputs(net, p.runner, 2, seed + i, F, s.t0, until, 20, 0x03);
      net.clock.advanceTo(until + 3000);
      expect(s.peers.map((p) => p.name)).toEqual([peerName(0), peerName(1)]);
      expectDeterministic(s.peers, () => Chip8Core.createSync(ROM), 120);
      // The ships moved: the inputs reached the game (the state differs from a no-input run).
      const idle = Chip8Core.createSync(ROM);
      for (let k = 0; k < s.peers[0]!.runner.log.length; k++) idle.advance();
      expect(s.peers[0]!.core.checksum()).not.toBe(idle.checksum());
    });
  }
});

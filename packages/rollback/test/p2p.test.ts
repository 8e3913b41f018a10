import { test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { spaceRacer } from './helpers.js';
import { inputPattern, Mesh } from './mesh.js';
import { expectInSync, runScenario, scenarioArb } from './scenario.js';

describe('P2PSession determinism theorem', () => {
  it('two peers stay in sync frame by frame on a clean link, with rollbacks', () => {
    const mesh = new Mesh({
      players: 2,
      seed: 1,
      makeCore: () => new TestCore({ players: 2 }),
      inputOf: inputPattern(7),
      link: { latencyMs: 30 },
    });
    mesh.runUntilConfirmed(200, 2000);
    expectInSync(mesh, 200);
    for (const rig of mesh.rigs) expect(rig.session.stats.rollbacks).toBeGreaterThan(0);
  });

  test.prop([scenarioArb(2, 8)], { numRuns: 60 })(
    'every peer state at every confirmed frame equals the offline replay (JS test core, 2-8 players)',
    (s) => {
      const mesh = runScenario(s, () => new TestCore({ players: s.players }), 150);
      expectInSync(mesh, 150);
    },
  );

  test.prop([scenarioArb(2, 4)], { numRuns: 5 })(
    'every peer state at every confirmed frame equals the offline replay (CHIP-8 Space Racer, 2-4 players)',
    (s) => {
      const mesh = runScenario(s, () => spaceRacer(), 200);
      expectInSync(mesh, 200);
    },
  );

  it('16 players run 1000 frames in sync on the simulated network', () => {
    const mesh = new Mesh({
      players: 16,
      seed: 16,
      makeCore: () => new TestCore({ players: 16 }),
      inputOf: inputPattern(16),
      link: { latencyMs: 20, jitterMs: 10, loss: 0.02 },
    });
    mesh.runUntilConfirmed(1000, 10_000);
    expectInSync(mesh, 1000);
  });
});

import { fc } from '@fast-check/vitest';
import type { Core } from '@netplay/state';
import type { LinkConditions } from '@netplay/transport';
import { expect } from 'vitest';
import { inputPattern, Mesh, peerName } from './mesh.js';

/** A network schedule: starting conditions of every directed link, then changes at given frames. */
export const linkArb = fc.record({
  latencyMs: fc.integer({ min: 0, max: 100 }),
  jitterMs: fc.integer({ min: 0, max: 40 }),
  loss: fc.double({ min: 0, max: 0.2, noNaN: true }),
  duplicate: fc.double({ min: 0, max: 0.2, noNaN: true }),
  reorder: fc.double({ min: 0, max: 0.3, noNaN: true }),
  reorderDelayMs: fc.integer({ min: 1, max: 60 }),
});
export const changeArb = fc.record({
  atTick: fc.integer({ min: 0, max: 200 }),
  from: fc.nat(),
  to: fc.nat(),
  link: linkArb,
});
export const scenarioArb = (minPlayers: number, maxPlayers: number) =>
  fc.record({
    players: fc.integer({ min: minPlayers, max: maxPlayers }),
    seed: fc.integer({ min: 1, max: 0x7fffffff }),
    inputSeed: fc.integer(),
    link: linkArb,
    changes: fc.array(changeArb, { maxLength: 4 }),
    delay: fc.integer({ min: 0, max: 3 }),
    maxPrediction: fc.integer({ min: 2, max: 10 }),
    leave: fc.option(fc.record({ player: fc.nat(), atTick: fc.integer({ min: 10, max: 120 }) }), { nil: undefined }),
  });

export type Scenario = {
  players: number;
  seed: number;
  inputSeed: number;
  link: Partial<LinkConditions>;
  changes: Array<{ atTick: number; from: number; to: number; link: Partial<LinkConditions> }>;
  delay: number;
  maxPrediction: number;
  leave?: { player: number; atTick: number } | undefined;
};

/** Runs a scenario until every peer has `frames` final frames; returns the mesh. */
export function runScenario(s: Scenario, makeCore: () => Core, frames: number, setup?: (mesh: Mesh) => void): Mesh {
  const mesh = new Mesh({
    players: s.players,
    seed: s.seed,
    makeCore,
    inputOf: inputPattern(s.inputSeed),
    link: s.link,
    session: { inputDelay: s.delay, maxPrediction: s.maxPrediction, checksumInterval: 30, disconnectMs: 1500 },
    timeouts: { interruptMs: 500, disconnectMs: 1500, connectMs: 5000 },
  });
  setup?.(mesh);
  let tick = 0;
  const changes = [...s.changes].sort((a, b) => a.atTick - b.atTick);
  while (tick < frames * 40 && mesh.rigs.some((r) => !r.gone && r.checked < frames)) {
    for (const c of changes) {
      if (c.atTick !== tick) continue;
      const from = c.from % s.players;
      const to = c.to % s.players;
      if (from !== to) mesh.net.setLink(peerName(from), peerName(to), c.link);
    }
    // A player (the host too: the others elect a new one) drops out: every remaining peer must
    // still match the replay.
    if (s.leave !== undefined && s.players > 2 && tick === s.leave.atTick) mesh.disconnect(s.leave.player % s.players);
    mesh.tick();
    tick++;
  }
  return mesh;
}

export function expectInSync(mesh: Mesh, frames: number): void {
  expect(mesh.mismatches).toEqual([]);
  for (const rig of mesh.rigs) {
    if (rig.gone) continue;
    expect(rig.checked).toBeGreaterThanOrEqual(frames);
    expect(rig.missing).toBe(0);
    expect(rig.events.filter((e) => e.type === 'desync-detected')).toEqual([]);
    expect(rig.events.filter((e) => e.type === 'protocol-error')).toEqual([]);
  }
}

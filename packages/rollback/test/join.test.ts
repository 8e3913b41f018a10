import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { decodeWelcome, encodeWelcome, type PlayerAdmission } from '../src/index.js';
import { JoinMesh, type JoinMesh as Mesh } from './join-mesh.js';
import { inputPattern } from './mesh.js';

/** A generated event: at `atTick`, something happens to `slot` (taken mod the players). */
type Step =
  | { kind: 'drop'; atTick: number; slot: number; how: 'close' | 'kill' }
  | { kind: 'rejoin'; atTick: number; slot: number }
  | { kind: 'join'; atTick: number; slot: number }
  | { kind: 'spectate'; atTick: number };

interface Plan {
  seed: number;
  inputSeed: number;
  players: number;
  initial: number;
  latencyMs: number;
  jitterMs: number;
  loss: number;
  delay: number;
  maxPrediction: number;
  steps: Step[];
}

const dropArb = fc.record({
  kind: fc.constant('drop' as const),
  atTick: fc.integer({ min: 20, max: 500 }),
  slot: fc.nat(),
  how: fc.constantFrom('close' as const, 'kill' as const),
});
/** Mostly: a player drops and comes back (same id) or a newcomer asks for its slot a little later. */
const stepsArb: fc.Arbitrary<Step[]> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record({ drop: dropArb, after: fc.integer({ min: 1, max: 150 }), same: fc.boolean() })
      .map(({ drop, after, same }): Step[] => [
        drop,
        { kind: same ? 'rejoin' : 'join', atTick: drop.atTick + after, slot: drop.slot },
      ]),
  },
  { weight: 1, arbitrary: dropArb.map((d): Step[] => [d]) },
  {
    weight: 2,
    arbitrary: fc
      .record({ kind: fc.constant('join' as const), atTick: fc.integer({ min: 20, max: 600 }), slot: fc.nat() })
      .map((j): Step[] => [j]),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ kind: fc.constant('spectate' as const), atTick: fc.integer({ min: 10, max: 600 }) })
      .map((j): Step[] => [j]),
  },
);

const planArb: fc.Arbitrary<Plan> = fc
  .record({
    seed: fc.integer({ min: 1, max: 0x7fffffff }),
    inputSeed: fc.integer(),
    players: fc.integer({ min: 2, max: 8 }),
    initialCut: fc.nat(),
    latencyMs: fc.integer({ min: 0, max: 60 }),
    jitterMs: fc.integer({ min: 0, max: 20 }),
    loss: fc.double({ min: 0, max: 0.05, noNaN: true }),
    delay: fc.integer({ min: 0, max: 2 }),
    maxPrediction: fc.integer({ min: 4, max: 10 }),
    steps: fc.array(stepsArb, { minLength: 1, maxLength: 4 }).map((x) => x.flat()),
  })
  .map(({ initialCut, ...p }) => ({ ...p, initial: 2 + (initialCut % (p.players - 1)) }));

/** Ticks after the last step, so that every decision becomes final everywhere. */
const TAIL_TICKS = 400;

/**
 * Runs a plan: drops, same-id rejoins (retried every tick until the host admits: the leave must be
 * decided and final first), new players in free slots and spectators.
 */
function run(plan: Plan, tamper?: (a: PlayerAdmission) => PlayerAdmission): JoinMesh {
  const inputs = inputPattern(plan.inputSeed);
  const mesh = new JoinMesh({
    seed: plan.seed,
    players: plan.players,
    initial: plan.initial,
    link: { latencyMs: plan.latencyMs, jitterMs: plan.jitterMs, loss: plan.loss },
    delay: plan.delay,
    maxPrediction: plan.maxPrediction,
    inputOf: (key, frame) => inputs(key, frame) | 1,
    ...(tamper !== undefined ? { tamper } : {}),
  });
  const steps = [...plan.steps].sort((a, b) => a.atTick - b.atTick);
  /** Admissions waiting for the host: id → slot. */
  const pending: Array<{ id: string; slot: number }> = [];
  let newIds = 0;
  const last = steps.length > 0 ? steps[steps.length - 1]!.atTick : 0;
  for (let tick = 0; tick < last + TAIL_TICKS; tick++) {
    for (const s of steps) {
      if (s.atTick !== tick) continue;
      if (s.kind === 'spectate') mesh.addSpectator(`s${tick}`);
      else if (s.kind === 'drop') mesh.drop(s.slot % 7 === 6 ? 0 : 1 + (s.slot % (plan.players - 1)), s.how);
      else {
        const slot = 1 + (s.slot % (plan.players - 1));
        if (pending.some((p) => p.slot === slot)) continue;
        // A rejoin takes back the slot under the id it had; a newcomer a fresh id.
        const id = s.kind === 'rejoin' ? `p${slot}` : `n${newIds++}`;
        pending.push({ id, slot });
      }
    }
    for (let i = 0; i < pending.length; i++) {
      const p = pending[i]!;
      // The slot is played (its player has not left yet): the request waits.
      if (mesh.inSlot(p.slot) !== undefined) continue;
      if (mesh.admit(p.id, p.slot, 10)) pending.splice(i--, 1);
    }
    mesh.tick();
  }
  return mesh;
}

/** The invariants of the brief (issue 15), checked against an offline replay of the generated inputs. */
function check(mesh: Mesh): { finals: number; entries: number } {
  let maxFrame = 0;
  for (const r of mesh.rigs) for (const f of r.finals.keys()) maxFrame = Math.max(maxFrame, f);
  for (const s of mesh.spectators) for (const f of s.finals.keys()) maxFrame = Math.max(maxFrame, f);
  const replay = mesh.replay(maxFrame + 1);
  let finals = 0;
  let entries = 0;
  for (const r of mesh.rigs) {
    // Every final frame of every incarnation (departed ones included) is the replay's.
    for (const [f, crc] of r.finals) {
      if (crc !== replay[f]) expect.fail(`${r.id}#${r.key} (slot ${r.slot}) final frame ${f} differs from the replay`);
      finals++;
    }
    if (r.admission !== undefined && r.finals.size > 0) {
      // A joiner's state at its state frame and at its entry frame is the host's (the replay's).
      expect(r.finals.get(r.admission.frame), `${r.id}#${r.key} state frame`).toBe(replay[r.admission.frame]);
      if (r.finals.has(r.admission.entryFrame)) entries++;
    }
    expect(r.missing, `${r.id}#${r.key} missing final states`).toBe(0);
    // The finality rule may end a peer (two of three players killed at once leave the host without
    // quorum): once, and its finals stay where they were.
    expect(r.ends.length, `${r.id} ended more than once`).toBeLessThanOrEqual(1);
    if (r.ends.length === 1) expect(r.session.confirmedFrame).toBe(r.ends[0]!.frame);
    if (!r.gone) expect(r.errors.map((e) => e.message)).toEqual([]);
  }
  for (const s of mesh.spectators)
    for (const [f, crc] of s.finals) if (crc !== replay[f]) expect.fail(`spectator ${s.name} frame ${f} differs`);
  // Every live peer took frames as final near the end (nobody froze).
  const hostFinal = mesh.host.session.confirmedFrame;
  if (mesh.host.ends.length === 0)
    for (const r of mesh.live())
      if (r.ends.length === 0) expect(r.session.confirmedFrame, `${r.id} final`).toBeGreaterThan(hostFinal - 120);
  return { finals, entries };
}

describe('players entering a running rollback game (issue 15)', () => {
  it('WELCOME round-trips and refuses malformed bytes', () => {
    const w = {
      player: 2,
      frame: 100,
      entryFrame: 120,
      decisions: 7,
      slots: [{ kind: 'plays' }, { kind: 'gone', frame: 90 }, { kind: 'enters', frame: 120 }] as const,
    };
    expect(decodeWelcome(encodeWelcome(w))).toEqual({ ...w, slots: [...w.slots] });
    const bad = encodeWelcome(w);
    bad[12 + 5 * 2] = 0; // the joiner's own slot does not enter
    expect(() => decodeWelcome(bad)).toThrow(/own slot/);
    expect(() => decodeWelcome(bad.subarray(0, 20))).toThrow(/WELCOME/);
  });

  it('a player who left comes back into its slot under its id, and a newcomer takes a free slot', () => {
    const mesh = run({
      seed: 7,
      inputSeed: 3,
      players: 4,
      initial: 3,
      latencyMs: 30,
      jitterMs: 10,
      loss: 0.02,
      delay: 1,
      maxPrediction: 8,
      steps: [
        { kind: 'drop', atTick: 100, slot: 1, how: 'close' },
        { kind: 'rejoin', atTick: 150, slot: 1 },
        { kind: 'join', atTick: 200, slot: 2 },
        { kind: 'spectate', atTick: 260 },
        { kind: 'drop', atTick: 300, slot: 1, how: 'kill' },
        { kind: 'rejoin', atTick: 320, slot: 1 },
      ],
    });
    const { finals, entries } = check(mesh);
    expect(mesh.rigs.map((r) => `${r.id}:${r.slot}`)).toEqual(['p0:0', 'p1:1', 'p2:2', 'p2:2', 'n0:3', 'p2:2']);
    expect(entries).toBe(3);
    expect(finals).toBeGreaterThan(2000);
  });

  it('after the host is killed, its successor admits the players that come back', () => {
    const mesh = run({
      ...{ seed: 11, inputSeed: 4, players: 4, initial: 3, latencyMs: 25, jitterMs: 8, loss: 0.02 },
      delay: 1,
      maxPrediction: 8,
      steps: [
        { kind: 'join', atTick: 40, slot: 2 }, // slot 3, never filled: n0
        { kind: 'drop', atTick: 150, slot: 6, how: 'kill' }, // the host
        { kind: 'drop', atTick: 300, slot: 1, how: 'close' }, // p2
        { kind: 'rejoin', atTick: 320, slot: 1 },
      ],
    });
    const { entries } = check(mesh);
    expect(mesh.currentHost()?.id).toBe('p1');
    expect(mesh.rigs.map((r) => `${r.id}:${r.slot}`)).toEqual(['p0:0', 'p1:1', 'p2:2', 'n0:3', 'p2:2']);
    expect(entries).toBe(2);
  });

  it('red on purpose: a joiner entering one frame before the frame every other peer was told fails the check', () => {
    // The welcome says F − 1 to the joiner only: its input of that frame is real here, neutral elsewhere.
    const early = (a: PlayerAdmission): PlayerAdmission => {
      const w = decodeWelcome(a.welcome);
      const slots = w.slots.map((s, p) => (p === w.player ? { kind: 'enters' as const, frame: w.entryFrame - 1 } : s));
      return { ...a, welcome: encodeWelcome({ ...w, entryFrame: w.entryFrame - 1, slots }) };
    };
    const plan: Plan = {
      ...{ seed: 3, inputSeed: 5, players: 3, initial: 2, latencyMs: 20, jitterMs: 5, loss: 0.01 },
      ...{ delay: 1, maxPrediction: 8, steps: [{ kind: 'join', atTick: 60, slot: 1 }] },
    };
    expect(check(run(plan)).entries).toBe(1);
    expect(() => check(run(plan, early))).toThrow(/differs from the replay/);
  });

  test.prop([planArb], { numRuns: Number(process.env.JOIN_RUNS ?? 12) })(
    'drops, same-id rejoins, new players and spectators: finals agree with the replay of the generated inputs',
    (plan) => {
      check(run(plan));
    },
  );
});

/**
 * Generated faults for the partition and stall properties (issue 13): pauses (modelled as every
 * link of a peer cut, both ways, for the pause; its timers keep running, so on waking it sees the
 * time that passed, as a paused process does once its clock jumps) and partitions (a subset cut
 * off from the rest), each from 0 to 10 s, healed or not; plus the checks of FINALITY.md.
 */
import { fc } from '@fast-check/vitest';
import type { SimulatedNetwork } from '@netplay/transport';
import { expect } from 'vitest';

export interface Fault {
  readonly kind: 'pause' | 'partition';
  /** Peers cut off (indices; a pause uses the first). */
  readonly members: number[];
  /** Start, ms after frame 0. */
  readonly atMs: number;
  readonly durationMs: number;
  /** Healed at the end (or cut for good). */
  readonly heal: boolean;
}

export function faultArb(n: number): fc.Arbitrary<Fault> {
  return fc.record({
    kind: fc.constantFrom('pause' as const, 'partition' as const),
    members: fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { minLength: 1, maxLength: Math.max(1, n - 1) }),
    atMs: fc.integer({ min: 0, max: 6000 }),
    durationMs: fc.integer({ min: 0, max: 10_000 }),
    heal: fc.boolean(),
  });
}

/** Schedules `faults` on `net` (peer i is `names[i]`); overlapping cuts of a pair are counted, a pair comes back up when its last cut heals. */
export function applyFaults(
  net: SimulatedNetwork,
  names: readonly string[],
  t0: number,
  faults: readonly Fault[],
): void {
  const cuts = new Map<string, number>();
  const key = (a: number, b: number) => `${Math.min(a, b)}:${Math.max(a, b)}`;
  const pairs = (f: Fault): [number, number][] => {
    const inside = new Set(f.kind === 'pause' ? [f.members[0]!] : f.members);
    const out: [number, number][] = [];
    for (const a of inside) for (let b = 0; b < names.length; b++) if (!inside.has(b)) out.push([a, b]);
    return out;
  };
  for (const f of faults) {
    net.clock.setTimer(t0 + f.atMs - net.now(), () => {
      for (const [a, b] of pairs(f)) {
        const k = key(a, b);
        cuts.set(k, (cuts.get(k) ?? 0) + 1);
        net.setLinkBoth(names[a]!, names[b]!, { up: false });
      }
    });
    if (!f.heal) continue;
    net.clock.setTimer(t0 + f.atMs + f.durationMs - net.now(), () => {
      for (const [a, b] of pairs(f)) {
        const k = key(a, b);
        const c = (cuts.get(k) ?? 1) - 1;
        cuts.set(k, c);
        if (c === 0) net.setLinkBoth(names[a]!, names[b]!, { up: true });
      }
    });
  }
}

/** What the checks need of a peer. */
export interface Observed {
  readonly name: string;
  /** Checksum after each frame (index = frame, from frame `first`). */
  readonly sums: readonly bigint[];
  /** Time each frame ran. */
  readonly times: readonly number[];
  /** The last frame it marks final. */
  readonly finalFrame: number;
  /** Why it ended, or undefined if it still runs. */
  readonly endReason: string | undefined;
  /** When it ended (the `ended` event), if it did. */
  readonly endedAt: number | undefined;
  /** Whether it is honest (the stall property's adversary is not). */
  readonly honest: boolean;
}

/**
 * FINALITY.md's invariant: for every pair of peers and every frame both marked final, the states
 * are equal; no honest peer is frozen longer than `maxFrozenMs` without ending (from `fromMs`, the
 * time frame 0 is due, until `endMs` or its end).
 */
export function expectFinality(peers: readonly Observed[], fromMs: number, endMs: number, maxFrozenMs: number): void {
  for (let a = 0; a < peers.length; a++)
    for (let b = a + 1; b < peers.length; b++) {
      const pa = peers[a]!;
      const pb = peers[b]!;
      const upTo = Math.min(pa.finalFrame, pb.finalFrame, pa.sums.length - 1, pb.sums.length - 1);
      for (let f = 0; f <= upTo; f++)
        if (pa.sums[f] !== pb.sums[f])
          expect.fail(`${pa.name} and ${pb.name} both final at frame ${f} with different states`);
    }
  for (const p of peers) {
    if (!p.honest) continue;
    const stop = p.endedAt ?? endMs;
    let last = fromMs;
    for (const t of p.times) {
      if (t > stop) break;
      if (t - last > maxFrozenMs) expect.fail(`${p.name} frozen ${t - last} ms (from ${last}) without ending`);
      last = t;
    }
    if (stop - last > maxFrozenMs)
      expect.fail(
        `${p.name} frozen ${stop - last} ms (from ${last}) ${p.endReason ? `before ending ${p.endReason}` : 'and still running'}`,
      );
  }
}

/** Records the checksum and the time of every frame the core runs. */
export function observeCore(
  core: { advance(): void; checksum(): bigint },
  now: () => number,
): { sums: bigint[]; times: number[] } {
  const sums: bigint[] = [];
  const times: number[] = [];
  const advance = core.advance.bind(core);
  core.advance = () => {
    advance();
    sums.push(core.checksum());
    times.push(now());
  };
  return { sums, times };
}

import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { clientFinals, compareFinals, FRAME_MS, hostFinals } from './harness.js';
import { type Incarnation, rejoinWorld } from './rejoin-harness.js';

type World = ReturnType<typeof rejoinWorld>;

function tick(w: World, incs: Incarnation[], n: number, finals: Array<{ record(): void }> = []): void {
  for (let i = 0; i < n; i++) {
    w.host.tick(new Uint8Array([0xee, i & 0xff]));
    for (const inc of incs)
      if (inc.alive && inc.client.state !== 'closed') inc.client.tick(new Uint8Array([1, (i * 7) & 0xff]));
    w.net.advance(FRAME_MS);
    for (const f of finals) f.record();
  }
}

describe('rollback rejoin and mid-game join (issue 15)', () => {
  it('a player who left comes back into its slot with its nick; the finals of all three agree', () => {
    const w = rejoinWorld(3, 'rollback', 3, { latencyMs: 15, jitterMs: 3, loss: 0.01 });
    const joined: Array<{ nick: string; slot: number | undefined; rejoined?: boolean }> = [];
    w.host.on('peer-joined', (e) => joined.push(e));
    const ann = w.connect('ann');
    const ben = w.connect('ben');
    const finals = [hostFinals(w.host), clientFinals(ann.client), clientFinals(ben.client)];
    for (let i = 0; i < 400 && (ann.client.state !== 'playing' || ben.client.state !== 'playing'); i++)
      tick(w, [ann, ben], 1, finals);
    tick(w, [ann, ben], 60, finals);
    const slot = ben.client.info?.slot;
    ben.client.close();
    tick(w, [ann], 30, finals);
    const back = w.connect('ben');
    finals.push(clientFinals(back.client));
    for (let i = 0; i < 400 && back.client.state === 'handshaking'; i++) tick(w, [ann, back], 1, finals);
    expect(back.client.state).toBe('playing');
    expect(back.client.info?.nick).toBe('ben');
    expect(back.client.info?.slot).toBe(slot);
    expect(joined.at(-1)).toEqual({ nick: 'ben', slot, rejoined: true });
    tick(w, [ann, back], 300, finals);
    for (let i = 0; i < finals.length; i++)
      for (let j = i + 1; j < finals.length; j++) expect(compareFinals(finals[i]!, finals[j]!).differing).toBe(0);
    expect(compareFinals(finals[0]!, finals[3]!).compared).toBeGreaterThan(150);
    expect(compareFinals(finals[1]!, finals[3]!).compared).toBeGreaterThan(150);
  });
});

const NICKS = ['ann', 'ben', 'cat', 'dan', 'eve', 'fox', 'gus', 'hal', 'ivy'];
type Kind = 'close' | 'silence' | 'kill' | 'rejoin' | 'join' | 'spectate';
const stepArb = fc.record({
  wait: fc.integer({ min: 5, max: 150 }),
  kind: fc.constantFrom<Kind>('close', 'silence', 'kill', 'rejoin', 'rejoin', 'join', 'spectate'),
  pick: fc.nat(),
});

/**
 * Rollback games of 2–8 players while generated steps drop players (close; silence: the link cut,
 * the process runs on; kill: cut and gone), bring them back with the same nick from the same
 * address, add newcomers and spectators.
 */
function play(
  seed: number,
  players: number,
  latencyMs: number,
  steps: Array<{ wait: number; kind: Kind; pick: number }>,
) {
  const w = rejoinWorld(seed, 'rollback', players, { latencyMs, jitterMs: 5, loss: 0.01 });
  const finals = new Map<Incarnation | 'host', ReturnType<typeof clientFinals>>([['host', hostFinals(w.host)]]);
  const people = new Map<string, { incs: Incarnation[]; dropped: boolean }>();
  let ended: { frame: number; message: string } | undefined;
  w.host.on('ended', ({ frame, error }) => {
    ended = { frame, message: error.message };
  });
  const all = () => [...people.values()].flatMap((p) => p.incs);
  const enter = (nick: string, spectate = false) => {
    const p = people.get(nick) ?? { incs: [], dropped: false };
    people.set(nick, p);
    const inc = w.connect(nick, { spectate });
    p.incs.push(inc);
    p.dropped = false;
    finals.set(inc, clientFinals(inc.client));
  };
  const run = (n: number) => tick(w, all(), n, [...finals.values()]);
  for (let i = 1; i < players; i++) enter(NICKS[i - 1]!);
  w.net.runUntil(() => all().every((inc) => inc.client.state !== 'handshaking'), 20_000);
  run(60);
  for (const s of steps) {
    const live = [...people].filter(([, p]) => !p.dropped && p.incs.at(-1)?.client.state === 'playing');
    const dropped = [...people].filter(([, p]) => p.dropped);
    if (s.kind === 'close' || s.kind === 'silence' || s.kind === 'kill') {
      const entry = live[s.pick % Math.max(1, live.length)];
      if (entry !== undefined) {
        const [, p] = entry;
        const inc = p.incs.at(-1)!;
        p.dropped = true;
        if (s.kind === 'close') inc.client.close();
        else {
          w.net.cutBoth(inc.endpoint, 'host');
          if (s.kind === 'kill') inc.alive = false;
        }
      }
    } else if (s.kind === 'rejoin') {
      const entry = dropped[s.pick % Math.max(1, dropped.length)];
      if (entry !== undefined) enter(entry[0]);
    } else if (s.kind === 'join') {
      const nick = NICKS.find((n) => !people.has(n));
      if (nick !== undefined) enter(nick);
    } else enter(`watch${s.pick % 3}`, true);
    run(s.wait);
  }
  run(400);
  return { w, people, finals, ended };
}

describe('rollback rejoin property (issue 15)', () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 2 ** 30 }),
      fc.integer({ min: 2, max: 8 }),
      fc.integer({ min: 0, max: 30 }),
      fc.array(stepArb, { minLength: 2, maxLength: 8 }),
    ],
    { numRuns: Number(process.env.REJOIN_RUNS ?? 6) },
  )(
    'drops, same-nick rejoins, new joins and spectators: every pair agrees on every common final frame',
    (seed, players, latencyMs, steps) => {
      const { w, people, finals, ended } = play(seed, players, latencyMs, steps);
      const list = [...finals];
      // Every pair of peers agrees on every frame both hold as final (departed incarnations included).
      for (let i = 0; i < list.length; i++)
        for (let j = i + 1; j < list.length; j++) {
          const c = compareFinals(list[i]![1], list[j]![1]);
          expect(c.differing, `${name(list[i]![0])} vs ${name(list[j]![0])}`).toBe(0);
        }
      const host = finals.get('host')!;
      for (const [nick, p] of people)
        for (const [k, inc] of p.incs.entries()) {
          const info = inc.client.info;
          // Refused only for lack of room, with the exact reason (or closed by the host's end).
          if (info === undefined && inc.client.state === 'closed' && ended === undefined)
            expect(inc.client.error?.message).toMatch(/^server full: all \d+ player slots are taken$/);
          // A player that entered mid-game: its first final state is the host's.
          const mine = finals.get(inc)!;
          if (info?.slot !== undefined && info.frame > 0 && mine.hashes.size > 0) {
            const first = Math.min(...mine.hashes.keys());
            if (host.hashes.has(first))
              expect(mine.hashes.get(first), `${nick}#${k} entry`).toBe(host.hashes.get(first));
          }
          // A same-nick rejoin gets its old slot unless someone else holds it.
          const before = p.incs
            .slice(0, k)
            .map((o) => o.client.info?.slot)
            .filter((s) => s !== undefined)
            .at(-1);
          if (info?.slot !== undefined && before !== undefined && info.nick === nick && info.slot !== before) {
            const others = [...people].filter(([n]) => n !== nick).flatMap(([, q]) => q.incs);
            expect(others.some((o) => o.client.info?.slot === before)).toBe(true);
          }
        }
      // The host told everyone the game ended: every client it closed names the same frame.
      if (ended !== undefined)
        for (const inc of [...people.values()].flatMap((p) => p.incs))
          if (inc.alive && inc.client.error?.code === ended.message.split(':')[0])
            expect(inc.client.error?.message).toBe(ended.message);
      expect(w.host.frame).toBeGreaterThan(30);
    },
  );
});

function name(k: Incarnation | 'host'): string {
  return k === 'host' ? 'host' : k.endpoint;
}

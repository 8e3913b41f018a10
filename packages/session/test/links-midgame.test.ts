import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { FRAME_MS } from './harness.js';
import { type MeshEnv, meshSession, pairwiseDiffering, play, type Watched, watchClient } from './mesh-harness.js';

/**
 * A player enters the running game: `newcomer` (a new nick into the slot `leaver` freed) or a
 * rejoin (`leaver`'s nick again, from a new endpoint). Returns it once it plays.
 */
function enter(env: MeshEnv, players: number, leaver: Watched, rejoin: boolean, endpoint: string): Watched {
  const w = watchClient(env, endpoint, new TestCore({ players, seed: 7 }), true, rejoin ? leaver.name : endpoint);
  env.watched.push(w);
  return w;
}

/** Runs the game (host and every client ticking) until `w` plays, at most `ms`. */
function playUntilPlaying(env: MeshEnv, w: Watched, ms: number, seed: number, hostAlive: () => boolean): void {
  for (let t = 0; t < ms && w.client.state !== 'playing'; t += 100) play(env, 100, seed + t, hostAlive);
}

/**
 * The hand-over invariants (handover.test.ts): at most one peer ever takes the host's role, every
 * peer still playing follows it and got past the loss, and every pair of peers (the old host, the
 * players that left and every incarnation included) agrees on every frame both hold as final.
 */
function checkFollowed(env: MeshEnv, playing: readonly Watched[], framesAtLoss: number): void {
  const tookOver = new Set(env.watched.filter((w) => w.hosts.at(-1) === w.name && w.client.state === 'playing'));
  expect(tookOver.size, `hosts: ${[...tookOver].map((w) => w.name)}`).toBe(1);
  const elected = [...tookOver][0]?.name;
  for (const w of playing) {
    expect(w.client.state, `${w.name}: ${w.ended?.message}`).toBe('playing');
    expect(w.hosts.at(-1), `${w.name} follows the new host`).toBe(elected);
    expect(w.client.rollback?.confirmedFrame ?? 0, w.name).toBeGreaterThan(framesAtLoss + 100);
  }
  for (const p of pairwiseDiffering(env)) expect(p.differing, `${p.a} vs ${p.b}`).toBe(0);
}

describe('direct links for a player entering the running game', () => {
  it('a newcomer in a freed slot links directly (0 bytes through the relay), then follows the new host when the host leaves', () => {
    const env = meshSession(41, 4, { latencyMs: 10, jitterMs: 2, loss: 0 });
    const [, , p3] = env.watched as [Watched, Watched, Watched];
    play(env, 1500, 1, () => true);
    p3.client.close();
    play(env, 1000, 2, () => true);
    // (p1 and p2 tell the leaver they dropped it through the relay: its links are gone.)
    const relayedBefore = env.relayed.bytes;
    const n = enter(env, 4, p3, false, 'n4');
    playUntilPlaying(env, n, 8000, 3, () => true);
    expect(n.client.state).toBe('playing');
    play(env, 2000, 4, () => true);
    // Its messages to and from p1 and p2 went over its links; the host relayed nothing since it came.
    expect(n.accepted.bytes).toBeGreaterThan(1000);
    expect(env.relayed.bytes - relayedBefore).toBe(0);
    const framesAtLoss = env.host.frame;
    let alive = true;
    alive = false;
    env.host.close();
    play(env, 6000, 5, () => alive);
    const [p1, p2] = env.watched as [Watched, Watched];
    expect(n.hostLeft).toBe(true);
    checkFollowed(env, [p1, p2, n], framesAtLoss);
    // The newcomer's finals span its entry to past the hand-over, and the others hold them too.
    const withN = pairwiseDiffering(env).filter((p) => p.b === n.name && (p.a === p1.name || p.a === p2.name));
    expect(withN.length).toBe(2);
    for (const p of withN) expect(p.compared, `${p.a} vs ${p.b}`).toBeGreaterThan(300);
  });

  it('a player who left and rejoins with its nick links again; when the host is cut off, every player follows one new host', () => {
    const env = meshSession(42, 4, { latencyMs: 12, jitterMs: 3, loss: 0.01 });
    const [p1, p2] = env.watched as [Watched, Watched, Watched];
    play(env, 1500, 1, () => true);
    p2.client.close();
    play(env, 800, 2, () => true);
    const relayedBefore = env.relayed.bytes;
    const back = enter(env, 4, p2, true, 'p2b');
    playUntilPlaying(env, back, 8000, 3, () => true);
    expect(back.client.state).toBe('playing');
    expect(back.client.info?.slot).toBe(2);
    play(env, 2000, 4, () => true);
    expect(back.accepted.bytes).toBeGreaterThan(1000);
    expect(env.relayed.bytes - relayedBefore).toBe(0);
    const framesAtLoss = env.host.frame;
    let alive = true;
    alive = false;
    for (const w of env.watched) env.net.cutBoth('host', w.client === back.client ? 'p2b' : w.name);
    play(env, 10_000, 5, () => alive);
    checkFollowed(env, [p1, env.watched[2]!, back], framesAtLoss);
  });
});

describe('direct links mid-game: fallback to the relay', () => {
  it('a newcomer without links enters, its pairs relayed; when the host goes it ends host-lost and the linked players follow the new host', () => {
    const env = meshSession(43, 4, { latencyMs: 10, jitterMs: 2, loss: 0 });
    const [p1, p2, p3] = env.watched as [Watched, Watched, Watched];
    play(env, 1500, 1, () => true);
    p3.client.close();
    play(env, 800, 2, () => true);
    const relayedBefore = env.relayed.bytes;
    const n = watchClient(env, 'n4', new TestCore({ players: 4, seed: 7 }), false);
    env.watched.push(n);
    playUntilPlaying(env, n, 8000, 3, () => true);
    expect(n.client.state).toBe('playing');
    play(env, 2000, 4, () => true);
    expect(env.relayed.bytes - relayedBefore).toBeGreaterThan(1000);
    const framesAtLoss = env.host.frame;
    let alive = true;
    alive = false;
    env.host.close();
    play(env, 8000, 5, () => alive);
    expect(n.ended?.code).toBe('host-lost');
    checkFollowed(env, [p1, p2], framesAtLoss);
  });

  it('a player in the game without links: the newcomer links with the others, that pair keeps the relay', () => {
    const env = meshSession(44, 5, { latencyMs: 10, jitterMs: 2, loss: 0 }, { noLinks: new Set(['p1']) });
    const [p1, , , p4] = env.watched as [Watched, Watched, Watched, Watched];
    play(env, 1500, 1, () => true);
    p4.client.close();
    play(env, 800, 2, () => true);
    const n = enter(env, 5, p4, false, 'n5');
    playUntilPlaying(env, n, 8000, 3, () => true);
    expect(n.client.state).toBe('playing');
    const relayedBefore = env.relayed.bytes;
    const acceptedBefore = n.accepted.bytes;
    play(env, 2000, 4, () => true);
    // p2 and p3 dialed it; p1 (no links) talks to it through the host.
    expect(n.accepted.bytes - acceptedBefore).toBeGreaterThan(1000);
    expect(env.relayed.bytes - relayedBefore).toBeGreaterThan(0);
    const framesAtLoss = env.host.frame;
    let alive = true;
    alive = false;
    env.host.close();
    play(env, 8000, 5, () => alive);
    expect(p1.ended?.code).toBe('host-lost');
    checkFollowed(env, [env.watched[1]!, env.watched[2]!, n], framesAtLoss);
  });
});

describe('direct links mid-game, generated', () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 2 ** 30 }),
      fc.integer({ min: 4, max: 6 }),
      fc.integer({ min: 0, max: 30 }),
      fc.double({ min: 0, max: 0.02, noNaN: true }),
      fc.integer({ min: 20, max: 150 }),
      fc.boolean(),
      fc.constantFrom<'cut' | 'close'>('cut', 'close'),
      fc.constantFrom<'close' | 'kill'>('close', 'kill'),
    ],
    { numRuns: Number(process.env.HANDOVER_RUNS ?? 4) },
  )(
    'a player leaves (closes, or is killed) at a generated frame, a newcomer or the same nick enters, links directly; the host goes: every player left follows one new host, resets with it at one frame, and all finals agree',
    (seed, players, latencyMs, loss, leaveFrame, rejoin, fate, leave) => {
      const env = meshSession(seed, players, { latencyMs, jitterMs: 3, loss });
      expect(env.watched.every((w) => w.client.state === 'playing')).toBe(true);
      play(env, leaveFrame * FRAME_MS, seed, () => true);
      const leaver = env.watched[(seed >>> 3) % env.watched.length]!;
      // Killed: every path of its cut (its links too), then its process is gone; the others notice by timeouts.
      if (leave === 'kill')
        for (const o of ['host', ...env.watched.map((w) => w.name)]) env.net.cutBoth(leaver.name, o);
      leaver.client.close();
      // A newcomer comes once the host noticed (a killed player: its 2 s transport timeout), else `server full`.
      play(env, leave === 'kill' ? 3000 : 600, seed + 1, () => true);
      const endpoint = rejoin ? `${leaver.name}b` : 'n';
      const relayedBefore = env.relayed.bytes;
      const n = enter(env, players, leaver, rejoin, endpoint);
      playUntilPlaying(env, n, 10_000, seed + 2, () => true);
      expect(n.client.state, n.ended?.message).toBe('playing');
      play(env, 1500, seed + 3, () => true);
      expect(n.accepted.bytes).toBeGreaterThan(0);
      expect(env.relayed.bytes - relayedBefore).toBe(0);
      const framesAtLoss = env.host.frame;
      let alive = true;
      alive = false;
      if (fate === 'close') env.host.close();
      else for (const w of env.watched) if (w !== leaver) env.net.cutBoth('host', w === n ? endpoint : w.name);
      play(env, 8000, seed + 4, () => alive);
      const playing = env.watched.filter((w) => w !== leaver);
      // The new host resets: every player left, the newcomer included, resets at one frame.
      const resets = new Map(playing.map((w) => [w, [] as number[]]));
      for (const w of playing) w.client.on('reset', ({ frame }) => resets.get(w)?.push(frame));
      const elected = playing.find((w) => w.hosts.at(-1) === w.name);
      elected?.client.reset();
      play(env, 4000, seed + 5, () => alive);
      const frames = [...resets.values()].map((f) => f.join(','));
      expect(frames[0], JSON.stringify(frames)).toMatch(/^\d+$/);
      expect(new Set(frames).size, JSON.stringify(frames)).toBe(1);
      checkFollowed(env, playing, framesAtLoss);
    },
  );
});

import { fc, test } from '@fast-check/vitest';
import { Prng } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import type { SessionError, SessionMode } from '../src/index.js';
import { FRAME_MS, setup } from './harness.js';
import { type Incarnation, rejoinWorld, stateHash } from './rejoin-harness.js';

const HOST_TAG = 0xee;
/** What spectators hand their client's `tick`: a tag no player has, so any trace of it in the game shows. */
const SPECTATOR_INPUT = Uint8Array.of(0x77, 0x77);
const NICKS = ['ann', 'ben', 'cat', 'dan', 'eve', 'fox', 'gus', 'hal', 'ivy', 'jon'];
const MAX_SPECTATORS = 3;

/** A person's inputs: byte 0 its tag (so a port's input names its player), byte 1 generated. */
function inputsOf(tag: number, seed: number): () => Uint8Array {
  const rng = new Prng(seed);
  const buf = new Uint8Array([tag, 0]);
  return () => {
    if (rng.int(0, 4) === 0) buf[1] = rng.int(0, 256);
    return buf;
  };
}

type Kind = 'close' | 'silence' | 'kill' | 'rejoin' | 'join' | 'spectate' | 'unwatch';
const step = fc.record({
  wait: fc.integer({ min: 5, max: 120 }),
  kind: fc.constantFrom<Kind>('close', 'silence', 'kill', 'rejoin', 'join', 'spectate', 'spectate', 'unwatch'),
  pick: fc.nat(),
});
type Step = { wait: number; kind: Kind; pick: number };

interface Person {
  readonly nick: string;
  readonly tag: number;
  readonly input: () => Uint8Array;
  incs: Incarnation[];
  dropped: boolean;
  slots: number[];
}

/**
 * A lockstep-cs game with `players` slots while the steps drop players (close; silence: the link
 * cut, the process running on; kill: cut and gone), bring them back under their nick from their
 * address, join new players, and let spectators join (at any time, whatever happened before) and
 * leave (closed or killed).
 */
function play(mode: LockstepMode, seed: number, players: number, latencyMs: number, steps: Step[]) {
  const w = rejoinWorld(seed, mode, players, { latencyMs, jitterMs: 5, loss: 0.01 }, { maxSpectators: MAX_SPECTATORS });
  const people: Person[] = [];
  const watchers: Incarnation[] = [];
  const hostInput = inputsOf(HOST_TAG, seed ^ 0x55);
  const person = (nick: string): Person => {
    let p = people.find((q) => q.nick === nick);
    if (p === undefined) {
      const tag = people.length + 1;
      p = { nick, tag, input: inputsOf(tag, seed + tag), incs: [], dropped: false, slots: [] };
      people.push(p);
    }
    return p;
  };
  const enter = (p: Person): void => {
    const inc = w.connect(p.nick);
    p.incs.push(inc);
    inc.client.on('joined', (info) => {
      if (info.slot !== undefined) p.slots.push(info.slot);
    });
  };
  const tick = (n: number) => {
    for (let i = 0; i < n; i++) {
      w.host.tick(hostInput());
      for (const p of people)
        for (const inc of p.incs) if (inc.alive && inc.client.state !== 'closed') inc.client.tick(p.input());
      for (const s of watchers) if (s.alive && s.client.state !== 'closed') s.client.tick(SPECTATOR_INPUT);
      w.net.advance(FRAME_MS);
    }
  };
  // lockstep-cs starts with the first player; the P2P modes once every slot is filled.
  const initial = mode === 'lockstep-cs' ? 1 + (seed % (players - 1)) : players - 1;
  for (let i = 0; i < initial; i++) enter(person(NICKS[i]!));
  w.net.runUntil(() => people.every((p) => p.incs[0]!.client.state !== 'handshaking'), 20_000);
  tick(60);
  const playing = () => people.filter((p) => !p.dropped && p.incs.at(-1)?.client.state === 'playing');
  for (const s of steps) {
    if (s.kind === 'close' || s.kind === 'silence' || s.kind === 'kill') {
      const ps = playing();
      const p = ps[s.pick % Math.max(1, ps.length)];
      if (p !== undefined) {
        const inc = p.incs.at(-1)!;
        p.dropped = true;
        if (s.kind === 'close') inc.client.close();
        else {
          w.net.cutBoth(inc.endpoint, 'host');
          if (s.kind === 'kill') inc.alive = false;
        }
      }
    } else if (s.kind === 'rejoin') {
      const ds = people.filter((p) => p.dropped);
      const p = ds[s.pick % Math.max(1, ds.length)];
      if (p !== undefined) {
        p.dropped = false;
        enter(p);
      }
    } else if (s.kind === 'join') {
      const nick = NICKS[people.length];
      if (nick !== undefined) enter(person(nick));
    } else if (s.kind === 'spectate') {
      // A new watcher, or one named like a player who left.
      const ds = people.filter((p) => p.dropped);
      const nick = ds.length > 0 && s.pick % 3 === 0 ? ds[s.pick % ds.length]!.nick : `watch${watchers.length}`;
      watchers.push(w.connect(nick, { spectate: true }));
    } else {
      const live = watchers.filter((x) => x.alive && x.client.state === 'spectating');
      const x = live[s.pick % Math.max(1, live.length)];
      if (x !== undefined) {
        if (s.pick % 2 === 0) x.client.close();
        else {
          w.net.cutBoth(x.endpoint, 'host');
          x.alive = false;
        }
      }
    }
    tick(s.wait);
  }
  // The P2P modes wait on a silenced player until the disconnect time (2 s here): play on longer.
  tick(mode === 'lockstep-cs' ? 240 : 480);
  return { w, people, watchers };
}

type LockstepMode = Extract<SessionMode, 'lockstep-cs' | 'lockstep-p2p' | 'frame-advance'>;

describe.each(['lockstep-cs', 'lockstep-p2p', 'frame-advance'] as const)('%s spectators', (mode) => {
  test.prop(
    [
      fc.integer({ min: 1, max: 2 ** 30 }),
      fc.integer({ min: 2, max: mode === 'lockstep-cs' ? 8 : 6 }),
      fc.integer({ min: 0, max: 40 }),
      fc.array(step, { minLength: 2, maxLength: 10 }),
    ],
    {
      numRuns: Number(process.env.SPECTATE_RUNS ?? (mode === 'lockstep-cs' ? 6 : 4)),
      // frame-advance: a player entering the slot of one who just left missed the events another
      // member had broadcast for its first frames before its admission (entry frame 66 differed);
      // fixed by the host's BroadcastHistory replay. lockstep-p2p: a newcomer whose acceptance came
      // late (a lost reliable copy) aligned its schedule on it and trailed the host by 82 frames
      // for good ("dan:1 final: expected 599 to be greater than 651"); fixed by aligning a late
      // joiner's schedule on the host's progress.
      examples: [
        [
          1,
          4,
          4,
          [
            { wait: 46, kind: 'kill', pick: 0 },
            { wait: 86, kind: 'close', pick: 0 },
            { wait: 10, kind: 'spectate', pick: 0 },
            { wait: 5, kind: 'join', pick: 0 },
            { wait: 5, kind: 'close', pick: 0 },
          ],
        ],
        [
          1,
          3,
          0,
          [
            { wait: 5, kind: 'close', pick: 0 },
            { wait: 5, kind: 'join', pick: 0 },
            { wait: 5, kind: 'close', pick: 0 },
            { wait: 5, kind: 'close', pick: 0 },
          ],
        ],
        [
          1,
          3,
          0,
          [
            { wait: 5, kind: 'silence', pick: 0 },
            { wait: 5, kind: 'close', pick: 0 },
            { wait: 5, kind: 'rejoin', pick: 0 },
          ],
        ],
      ],
    },
  )(
    'after drops, rejoins, joins and spectators coming and going, every peer agrees with the host and the replay',
    (seed, players, latencyMs, steps) => {
      const { w, people, watchers } = play(mode, seed, players, latencyMs, steps as Step[]);
      const frames = [...w.hostSums.keys()];
      expect(frames.length).toBeGreaterThan(200);
      // Offline replay of the host's frames from power-on; every port's input is one the test
      // generated for a player that held that slot (its tag), or neutral: never a spectator's.
      const replay = w.core();
      const slotsOf = new Map<number, Set<number>>([[0, new Set([HOST_TAG])]]);
      for (const p of people) for (const s of p.slots) slotsOf.set(s, (slotsOf.get(s) ?? new Set()).add(p.tag));
      for (let f = 0; f <= Math.max(...frames); f++) {
        const inputs = w.hostInputs.get(f);
        expect(inputs, `frame ${f} ran on the host`).toBeDefined();
        for (let port = 0; port < players; port++) {
          const bytes = inputs!.subarray(port * 2, port * 2 + 2);
          if (bytes[0] !== 0 || bytes[1] !== 0)
            expect(slotsOf.get(port)?.has(bytes[0]!), `frame ${f} port ${port}`).toBe(true);
          replay.setInput(port, bytes);
        }
        replay.advance();
        expect(stateHash(replay), `replay of frame ${f}`).toBe(w.hostSums.get(f));
      }
      // Every (re)joined player and every spectator: its entry frame's state is the host's (the
      // page delta it got), and every frame up to its last `final` equals the host's.
      let compared = 0;
      let spectated = 0;
      const incs = [...people.flatMap((p) => p.incs), ...watchers];
      for (const inc of incs) {
        const ran = [...inc.sums.keys()];
        if (inc.client.info === undefined && inc.client.state === 'closed')
          expect(inc.client.error?.message).toMatch(
            inc.spectate
              ? new RegExp(`^server full: ${MAX_SPECTATORS} spectators already watch$`)
              : /^server full: all \d+ player slots are taken$/,
          );
        if (ran.length === 0) continue;
        const entry = Math.min(...ran);
        expect(inc.sums.get(entry), `${inc.endpoint} entry frame ${entry}`).toBe(w.hostSums.get(entry));
        for (const [f, h] of inc.sums) {
          if (f > inc.final) continue;
          compared++;
          if (inc.spectate) spectated++;
          expect(h, `${inc.endpoint} frame ${f}`).toBe(w.hostSums.get(f));
        }
      }
      expect(compared).toBeGreaterThan(30);
      // Whoever still plays or watches at the end keeps up with the host.
      const last = Math.max(...frames);
      for (const inc of incs)
        if (inc.alive && (inc.client.state === 'playing' || inc.client.state === 'spectating')) {
          expect(inc.sums.size, `${inc.endpoint} frames`).toBeGreaterThan(100);
          expect(inc.final, `${inc.endpoint} final`).toBeGreaterThan(last - 30);
        }
      if (watchers.some((x) => x.client.state === 'spectating')) expect(spectated).toBeGreaterThan(0);
      // Every player the test did not drop and the host admitted (not refused) still plays: a
      // (re)joined player the schedulers never let in, or stalled, would be removed.
      for (const p of people) {
        const inc = p.incs.at(-1)!;
        if (p.dropped || inc.client.error?.code === 'server-full') continue;
        expect(inc.client.state, `${inc.endpoint}: ${inc.client.error?.message}`).toBe('playing');
      }
    },
  );

  it('a spectator whose reports stop reaching the host is dropped with the reason; the game goes on', () => {
    // Transports patient (30 s): only the host's bound on a watcher's backlog can drop it.
    const env = setup(
      11,
      { mode, players: 2 },
      { latencyMs: 10, jitterMs: 0, loss: 0 },
      {
        disconnectMs: 30_000,
      },
    );
    const a = env.join('a', {}, { disconnectMs: 30_000 });
    env.net.runUntil(() => a.state !== 'handshaking', 10_000);
    const s = env.join('s', { spectate: true }, { disconnectMs: 30_000 });
    const left: { nick: string; reason: string }[] = [];
    env.host.on('peer-left', (e) => left.push(e));
    for (let i = 0; i < 60; i++) {
      env.host.tick(Uint8Array.of(1, 2));
      a.tick(Uint8Array.of(3, 4));
      env.net.advance(FRAME_MS);
    }
    expect(s.state).toBe('spectating');
    const before = env.host.frame;
    // Everything the spectator sends is lost from now on; it still receives the game.
    env.net.setLink('s', 'host', { loss: 1 });
    for (let i = 0; i < 500; i++) {
      env.host.tick(Uint8Array.of(1, 2));
      a.tick(Uint8Array.of(3, 4));
      s.tick();
      env.net.advance(FRAME_MS);
    }
    expect(left.map((e) => e.nick)).toEqual(['s']);
    expect(left[0]!.reason).toMatch(/^removed: removed at frame \d+: this spectator fell too far behind/);
    expect(s.state).toBe('closed');
    expect(s.error?.code).toBe('removed');
    expect(a.state).toBe('playing');
    expect(env.host.frame).toBeGreaterThan(before + 450);
  });

  it('a spectator admitted before the game starts is synced when it starts and watches from its start', () => {
    const env = setup(13, { mode, players: 2 });
    const hostSums = new Map<number, bigint>();
    env.host.on('frame', ({ frame }) => hostSums.set(frame, env.host.core.checksum()));
    const s = env.join('s', { spectate: true });
    env.net.runUntil(() => s.state !== 'handshaking', 10_000);
    expect(s.state).toBe('spectating');
    expect(env.host.started).toBe(false);
    const seen = new Map<number, bigint>();
    s.on('frame', ({ frame }) => seen.set(frame, s.core.checksum()));
    const a = env.join('a');
    for (let i = 0; i < 200; i++) {
      env.host.tick(Uint8Array.of(i & 0xff, 1));
      a.tick(Uint8Array.of(2, i & 0x7f));
      s.tick();
      env.net.advance(FRAME_MS);
    }
    expect(env.host.started).toBe(true);
    // lockstep-cs: the server runs frame 0 as it starts (with the first player), so a watcher added
    // then enters at frame 1; the P2P hosts stream from frame 0.
    expect(Math.min(...seen.keys())).toBe(mode === 'lockstep-cs' ? 1 : 0);
    expect(seen.size).toBeGreaterThan(100);
    for (const [f, h] of seen) expect(h, `frame ${f}`).toBe(hostSums.get(f));
  });

  it('caps spectators at maxSpectators with the exact reason', () => {
    const env = setup(12, { mode, players: 2, maxSpectators: 1 });
    const a = env.join('a');
    env.net.runUntil(() => a.state !== 'handshaking', 10_000);
    const s1 = env.join('s1', { spectate: true });
    const s2 = env.join('s2', { spectate: true });
    env.net.runUntil(() => s1.state !== 'handshaking' && s2.state !== 'handshaking', 10_000);
    expect(s1.state).toBe('spectating');
    expect((s2.error as SessionError | undefined)?.message).toBe('server full: 1 spectators already watch');
  });
});

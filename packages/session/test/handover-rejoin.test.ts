import { fc, test } from '@fast-check/vitest';
import { DecodeError } from '@netplay/protocol';
import { TestCore } from '@netplay/state/testing';
import type { Connection } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import {
  decodeRejoin,
  encodeChatSend,
  encodeHello,
  encodeInfo,
  encodeLinkAddress,
  encodeLinkSlots,
  encodeRejoin,
  NetplayClient,
  type NetplayClientOptions,
  type RejoinTarget,
  SESSION_CHANNELS,
  type SessionError,
} from '../src/index.js';
import { CONTENT, clientFinals, FRAME_MS, hostFinals, inputSource, setup } from './harness.js';
import { LINK_TIMEOUTS, pairwiseDiffering, type Watched } from './mesh-harness.js';

const PLAYERS = 4;

/**
 * A rollback game of 4 players with direct links (as mesh-harness's `meshSession`, plus a
 * password): the host listens on `host`, each client `p1…p3` listens on its own name.
 */
function game(
  seed: number,
  password?: string,
  shape: {
    players: number;
    link: { latencyMs: number; jitterMs: number; loss: number };
    /** The link listeners' transport budgets off (so only the session's budget can stop a flooder). */
    transportBudgetsOff?: boolean;
  } = {
    players: PLAYERS,
    link: { latencyMs: 10, jitterMs: 2, loss: 0.01 },
  },
) {
  const players = shape.players;
  const env = setup(
    seed,
    {
      players,
      core: new TestCore({ players, seed: 7 }),
      links: true,
      ...(password ? { password } : {}),
    },
    shape.link,
    { disconnectMs: 2000 },
  );
  const watched: Watched[] = [];
  /** Clients the test killed: not ticked any more (their finals still count). */
  const dead = new Set<NetplayClient>();
  const join = (endpoint: string, nick: string, to: string, extra: Partial<NetplayClientOptions> = {}): Watched => {
    const core = new TestCore({ players, seed: 7 });
    const links = {
      listen: () => ({
        listener: env.net.listen(endpoint, {
          channels: SESSION_CHANNELS,
          timeouts: LINK_TIMEOUTS,
          ...(shape.transportBudgetsOff === true ? { rateLimits: false as const } : {}),
        }),
        address: endpoint,
      }),
      connect: (address: string) =>
        env.net.connect(endpoint, address, { channels: SESSION_CHANNELS, timeouts: LINK_TIMEOUTS }),
    };
    const conn = env.net.connect(endpoint, to, { channels: SESSION_CHANNELS, timeouts: LINK_TIMEOUTS });
    const client = new NetplayClient(conn, {
      core,
      content: CONTENT,
      clock: env.net.clock,
      nick,
      fps: 1000 / FRAME_MS,
      links,
      ...(password ? { password } : {}),
      ...extra,
    });
    const w: Watched = {
      name: nick,
      client,
      finals: clientFinals(client),
      hosts: [],
      hostLeft: false,
      ended: undefined,
      endFrame: undefined,
      accepted: { bytes: 0 },
      core,
    };
    client.on('host-changed', ({ nick: n }) => w.hosts.push(n));
    client.on('host-left', () => {
      w.hostLeft = true;
    });
    client.on('closed', ({ error }) => {
      w.ended = error;
      w.endFrame = client.rollback?.currentFrame;
    });
    return w;
  };
  for (let i = 1; i < players; i++) watched.push(join(`p${i}`, `p${i}`, 'host'));
  env.net.runUntil(() => watched.every((w) => w.client.state !== 'handshaking'), 20_000);
  let hostAlive = true;
  const hostFinal = hostFinals(env.host);
  const inputs = new Map<Watched, () => Uint8Array>();
  const hostInput = inputSource(seed * 7);
  /** Ticks the host (until it left) and every playing client (each with its own generated inputs). */
  const play = (ms: number): void => {
    for (let t = 0; t < ms; t += FRAME_MS) {
      if (hostAlive) env.host.tick(hostInput());
      for (const w of watched) {
        if (w.client.state !== 'playing' || dead.has(w.client)) continue;
        let src = inputs.get(w);
        if (src === undefined) {
          src = inputSource(seed * 31 + inputs.size);
          inputs.set(w, src);
        }
        w.client.tick(src());
      }
      env.net.advance(FRAME_MS);
      if (hostAlive) hostFinal.record();
      for (const w of watched) if (w.client.state === 'playing' && !dead.has(w.client)) w.finals.record();
    }
  };
  const hostLeaves = (): void => {
    hostAlive = false;
    env.host.close();
  };
  return { ...env, players, watched, dead, join, play, hostLeaves, hostFinal };
}

type Game = ReturnType<typeof game>;

/** Plays until every client follows one new host; returns it and the others. */
function handOver(g: Game): { elected: Watched; others: Watched[] } {
  g.play(1500);
  g.hostLeaves();
  for (let t = 0; t < 6000; t += 200) {
    g.play(200);
    const hosts = new Set(g.watched.map((w) => w.hosts.at(-1)));
    if (hosts.size === 1 && !hosts.has(undefined)) break;
  }
  const elected = g.watched.find((w) => w.hosts.at(-1) === w.name);
  expect(elected, 'a new host').toBeDefined();
  for (const w of g.watched) expect(w.hosts.at(-1), w.name).toBe(elected?.name);
  return { elected: elected!, others: g.watched.filter((w) => w !== elected) };
}

/** Every pair of peers (old host, every incarnation) agrees on every frame both hold as final. */
function allAgree(g: Game): Array<{ a: string; b: string; compared: number }> {
  const named = g.watched.map((w, i) => ({ ...w, name: `${w.name}#${i}` }));
  const pairs = pairwiseDiffering({ hostFinal: g.hostFinal, watched: named } as never);
  for (const p of pairs) expect(p.differing, `${p.a} vs ${p.b}`).toBe(0);
  return pairs;
}

/** Drops `w` (closing its session, or killed: every path of its endpoint cut and no more ticks). */
function drop(g: Game, w: Watched, how: 'close' | 'kill'): void {
  if (how === 'close') {
    w.client.close();
    return;
  }
  g.dead.add(w.client);
  const endpoints = ['host', ...Array.from({ length: g.players - 1 }, (_, i) => `p${i + 1}`)];
  for (const o of endpoints) if (o !== w.name) g.net.cutBoth(w.name, o);
}

/** Plays until `w` is past its handshake (or `ms` passed). */
function playUntilIn(g: Game, w: Watched, ms: number): void {
  for (let t = 0; t < ms && w.client.state === 'handshaking'; t += 100) g.play(100);
}

function refusal(g: Game, w: Watched): SessionError | undefined {
  playUntilIn(g, w, 6000);
  return w.ended;
}

describe('after a host hand-over, a player who drops comes back to the new host (issue 15)', () => {
  for (const how of ['close', 'kill'] as const)
    it(`a player ${how === 'close' ? 'who closes' : 'killed'} after the hand-over rejoins the new host in its slot; every final agrees`, () => {
      const g = game(how === 'close' ? 501 : 502);
      const { elected, others } = handOver(g);
      const leaver = others[others.length - 1]!;
      const target = leaver.client.rejoinTarget;
      expect(target?.host).toBe(elected.name);
      expect(target?.address).toBe(elected.name); // its listener's endpoint, from the original host's LINKS
      expect(elected.client.rejoinTarget).toBeUndefined();
      const slot = leaver.client.info?.slot;
      g.play(500);
      drop(g, leaver, how);
      g.play(how === 'kill' ? 2500 : 800);
      const back = g.join(`${leaver.name}b`, leaver.name, target!.address, { rejoin: target as RejoinTarget });
      g.watched.push(back);
      playUntilIn(g, back, 8000);
      expect(back.client.state, back.ended?.message).toBe('playing');
      expect(back.client.info?.slot).toBe(slot);
      expect(back.client.info?.hostNick).toBe(elected.name);
      const entered = back.client.rollback?.currentFrame ?? 0;
      g.play(3000);
      for (const w of [elected, ...others.filter((o) => o !== leaver), back]) {
        expect(w.client.state, `${w.name}: ${w.ended?.message}`).toBe('playing');
        expect(w.client.rollback?.confirmedFrame ?? 0, w.name).toBeGreaterThan(entered + 100);
      }
      // The returning player is followed by everyone: its finals are shared with every survivor.
      const pairs = allAgree(g);
      const withBack = pairs.filter((p) => p.b.startsWith(`${leaver.name}#${g.watched.length - 1}`));
      expect(withBack.length).toBe(g.watched.length);
      for (const p of withBack)
        if (!p.a.startsWith('host') && !p.a.startsWith(`${leaver.name}#`))
          expect(p.compared, `${p.a} vs ${p.b}`).toBeGreaterThan(100);
      // It can come back again with what it holds now.
      expect(back.client.rejoinTarget?.host).toBe(elected.name);
    });

  it("a player killed after the hand-over reconnects at once (before the new host noticed): it waits for its old incarnation's removal, enters, and chats through the new host", () => {
    const g = game(506);
    const { elected, others } = handOver(g);
    const leaver = others[0]!;
    const target = leaver.client.rejoinTarget!;
    g.play(300);
    drop(g, leaver, 'kill');
    g.play(200);
    const back = g.join(`${leaver.name}b`, leaver.name, target.address, { rejoin: target });
    g.watched.push(back);
    playUntilIn(g, back, 8000);
    expect(back.client.state, back.ended?.message).toBe('playing');
    expect(back.client.info?.slot).toBe(target.slot);
    const lines = g.watched.map(() => [] as string[]);
    for (const [i, w] of g.watched.entries())
      w.client.on('chat', (e) => lines[i]?.push(`${e.seq}:${e.nick}:${e.text}`));
    back.client.chat('back again');
    g.play(500);
    elected.client.chat('welcome');
    g.play(2500);
    const playing = g.watched.filter((w) => w.client.state === 'playing' && !g.dead.has(w.client));
    expect(playing.length).toBe(g.players - 1);
    const first = lines[g.watched.indexOf(elected)]!;
    expect(first.map((l) => l.replace(/^\d+:/, ''))).toEqual([`${leaver.name}:back again`, `${elected.name}:welcome`]);
    for (const w of playing) expect(lines[g.watched.indexOf(w)], w.name).toEqual(first);
    allAgree(g);
  });

  it('a stranger is refused: no token, a wrong token, or a player nick with a wrong token', () => {
    const g = game(503);
    const { elected, others } = handOver(g);
    const leaver = others[0]!;
    const target = leaver.client.rejoinTarget!;
    drop(g, leaver, 'close');
    g.play(300);
    const noToken = g.join('eve1', 'eve', target.address);
    expect(refusal(g, noToken)?.code).toBe('server-full');
    expect(noToken.ended?.message).toBe(
      `${elected.name} took over as the host and takes back only players who left the game (eve sent no rejoin token)`,
    );
    const wrong = { ...target, token: new Uint8Array(8).fill(7) };
    const asLeaver = g.join('eve2', leaver.name, target.address, { rejoin: wrong });
    expect(refusal(g, asLeaver)?.code).toBe('bad-password');
    expect(asLeaver.ended?.message).toBe(
      `wrong rejoin token: ${leaver.name} did not hold slot ${target.slot} with this host`,
    );
    // The right token under another nick is no slot of that nick either.
    const otherNick = g.join('eve3', 'eve', target.address, { rejoin: target });
    expect(refusal(g, otherNick)?.code).toBe('bad-password');
    // The player itself still gets in, and the game went on.
    const back = g.join('back', leaver.name, target.address, { rejoin: target });
    g.watched.push(back);
    playUntilIn(g, back, 8000);
    expect(back.client.state, back.ended?.message).toBe('playing');
    g.play(1500);
    allAgree(g);
  });

  it('a wrong password is refused as such, even with the right token', () => {
    const g = game(504, 'pw');
    const { others } = handOver(g);
    const leaver = others[0]!;
    const target = leaver.client.rejoinTarget!;
    drop(g, leaver, 'close');
    g.play(300);
    const bad = g.join('p9', leaver.name, target.address, { rejoin: target, password: 'nope' });
    expect(refusal(g, bad)?.code).toBe('bad-password');
    expect(bad.ended?.message).toBe('wrong password');
    const back = g.join('back', leaver.name, target.address, { rejoin: target });
    g.watched.push(back);
    playUntilIn(g, back, 8000);
    expect(back.client.state, back.ended?.message).toBe('playing');
    g.play(1500);
    allAgree(g);
  });
});

/** The reason `c` closed with (undefined while open). */
function closeOf(c: Connection): { reason: string | undefined } {
  const box: { reason: string | undefined } = { reason: undefined };
  c.on('close', ({ reason }) => {
    box.reason = reason;
  });
  return box;
}

describe('property: coming back after a hand-over', () => {
  test.prop(
    [
      fc.integer(),
      fc.integer({ min: 4, max: 5 }),
      fc.integer({ min: 0, max: 20 }),
      fc.double({ min: 0, max: 0.01, noNaN: true }),
      fc.constantFrom('close' as const, 'kill' as const),
      fc.nat(),
    ],
    { numRuns: Number(process.env.HANDOVER_RUNS ?? 3) },
  )(
    '4–5 players, the host closes, a generated player drops (closed or killed) and comes back: in its slot, every final agrees',
    (seed, players, latencyMs, loss, how, pick) => {
      const g = game(seed, undefined, { players, link: { latencyMs, jitterMs: Math.floor(latencyMs / 5), loss } });
      const { elected, others } = handOver(g);
      const leaver = others[pick % others.length]!;
      const target = leaver.client.rejoinTarget;
      expect(target?.host).toBe(elected.name);
      const slot = leaver.client.info?.slot;
      g.play(300);
      drop(g, leaver, how);
      g.play(how === 'kill' ? 2500 : 500);
      const back = g.join(`${leaver.name}b`, leaver.name, target!.address, { rejoin: target as RejoinTarget });
      g.watched.push(back);
      playUntilIn(g, back, 8000);
      expect(back.client.state, back.ended?.message).toBe('playing');
      expect(back.client.info?.slot).toBe(slot);
      const entered = back.client.rollback?.currentFrame ?? 0;
      g.play(2500);
      for (const w of [elected, ...others.filter((o) => o !== leaver), back]) {
        expect(w.client.state, `${w.name}: ${w.ended?.message}`).toBe('playing');
        expect(w.client.rollback?.confirmedFrame ?? 0, w.name).toBeGreaterThan(entered + 60);
      }
      allAgree(g);
    },
  );
});

describe("the new host's door: unauthenticated connections are bounded", () => {
  it('before the hand-over a listener refuses every connection; after it, 4 per address and 16 in all are held, each at most 5 s; a spectator is refused', () => {
    const g = game(505);
    g.play(600);
    const early = g.net.connect('x0', 'p1', { channels: SESSION_CHANNELS, timeouts: { disconnectMs: 60_000 } });
    const earlyBox = closeOf(early);
    g.play(200);
    expect(earlyBox.reason).toBe('closed: not taking links');
    const { elected } = handOver(g);
    const from = (addr: string) => {
      const c = g.net.connect(addr, elected.name, { channels: SESSION_CHANNELS, timeouts: { disconnectMs: 60_000 } });
      return { c, box: closeOf(c) };
    };
    const same = Array.from({ length: 5 }, () => from('crowd'));
    g.play(200);
    expect(same.filter((x) => x.box.reason?.startsWith('server-full: server busy')).length).toBe(1);
    const many = Array.from({ length: 14 }, (_, i) => from(`m${i}`));
    g.play(200);
    // 4 from `crowd` + 14 others: past 16 the oldest of the fullest address (crowd) is evicted.
    const all = [...same, ...many];
    const open = all.filter((x) => x.box.reason === undefined);
    expect(open.length).toBe(16);
    expect(all.filter((x) => x.box.reason?.startsWith('timeout: handshake not done in time')).length).toBe(2);
    g.play(5000);
    for (const x of open) expect(x.box.reason).toBe('timeout: handshake not done within 5000 ms');
    const spectator = g.join('s1', 'watcher', elected.name, { spectate: true });
    expect(refusal(g, spectator)?.code).toBe('unsupported-mode');
    // The players played on meanwhile.
    for (const w of g.watched) expect(w.client.state, `${w.name}: ${w.ended?.message}`).toBe('playing');
    g.play(1000);
    allAgree(g);
  });
});

describe("the new host's door: a flooding connection", () => {
  it('is cut with flood by the session budget (transport budgets off) while the game goes on', () => {
    const g = game(507, undefined, {
      players: 4,
      link: { latencyMs: 10, jitterMs: 2, loss: 0.01 },
      transportBudgetsOff: true,
    });
    const { elected } = handOver(g);
    const c = g.net.connect('flooder', elected.name, {
      channels: SESSION_CHANNELS,
      timeouts: { disconnectMs: 60_000 },
      rateLimits: false,
    });
    const box = closeOf(c);
    g.play(100);
    c.send('np-session', encodeHello({ spectate: false, nick: 'eve' }));
    const line = encodeChatSend({ text: 'x'.repeat(200) });
    for (let i = 0; i < 20_000 && c.state === 'open'; i++) {
      c.send('np-session', line);
      if (i % 1000 === 999) g.net.advance(1);
    }
    g.play(300);
    expect(box.reason).toMatch(/^flood: sent over 4000 messages\/s/);
    g.play(1000);
    for (const w of g.watched) expect(w.client.state, `${w.name}: ${w.ended?.message}`).toBe('playing');
    allAgree(g);
  });
});

describe("the new host's door: hostile connections", () => {
  const action = fc.oneof(
    fc.record({
      kind: fc.constant('bytes' as const),
      channel: fc.constantFrom(...SESSION_CHANNELS.map((c) => c.name)),
      data: fc.uint8Array({ maxLength: 40 }),
    }),
    fc.record({ kind: fc.constant('hello' as const), nick: fc.string({ maxLength: 40 }), spectate: fc.boolean() }),
    fc.record({ kind: fc.constant('info' as const), proof: fc.uint8Array({ minLength: 0, maxLength: 32 }) }),
    fc.record({
      kind: fc.constant('rejoin' as const),
      slot: fc.integer({ min: 0, max: 255 }),
      token: fc.uint8Array({ minLength: 8, maxLength: 8 }),
    }),
    fc.record({ kind: fc.constant('address' as const), address: fc.string({ maxLength: 20 }) }),
    fc.record({ kind: fc.constant('ready' as const), slots: fc.array(fc.nat({ max: 255 }), { maxLength: 4 }) }),
  );
  test.prop(
    [fc.integer(), fc.array(fc.array(action, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 })],
    {
      numRuns: Number(process.env.HANDOVER_RUNS ?? 6),
    },
  )('any mix of garbage and handshake messages from several connections never breaks the new host', (seed, conns) => {
    const g = game(seed, undefined, { players: 4, link: { latencyMs: 5, jitterMs: 1, loss: 0 } });
    const { elected } = handOver(g);
    conns.forEach((actions, k) => {
      const c = g.net.connect(`evil${k}`, elected.name, {
        channels: SESSION_CHANNELS,
        timeouts: { disconnectMs: 60_000 },
      });
      g.play(50);
      for (const a of actions) {
        if (c.state !== 'open') break;
        if (a.kind === 'bytes') c.send(a.channel, a.data);
        else if (a.kind === 'hello') c.send('np-session', encodeHello({ spectate: a.spectate, nick: a.nick }));
        else if (a.kind === 'info')
          c.send(
            'np-session',
            encodeInfo({ passwordHash: a.proof.length === 32 ? a.proof : new Uint8Array(0), ...CONTENT }),
          );
        else if (a.kind === 'rejoin') c.send('np-session', encodeRejoin({ slot: a.slot, token: a.token }));
        else if (a.kind === 'address') c.send('np-session', encodeLinkAddress({ address: a.address, dials: true }));
        else c.send('np-session', encodeLinkSlots({ type: 18, round: 128, slots: a.slots }));
        g.play(20);
      }
    });
    g.play(6000);
    // Nothing it sent got it a slot, and nobody else noticed.
    for (const w of g.watched) expect(w.client.state, `${w.name}: ${w.ended?.message}`).toBe('playing');
    expect(elected.client.rollback?.activePlayers().length).toBe(3); // the old host left
    allAgree(g);
  });
});

describe('REJOIN codec', () => {
  test.prop([fc.integer({ min: 0, max: 255 }), fc.uint8Array({ minLength: 8, maxLength: 8 })])(
    'round-trips',
    (slot, token) => {
      const m = decodeRejoin(encodeRejoin({ slot, token }));
      expect(m.slot).toBe(slot);
      expect([...m.token]).toEqual([...token]);
    },
  );
  test.prop([fc.uint8Array({ maxLength: 20 })], { numRuns: 2000 })('any bytes decode or throw DecodeError', (b) => {
    try {
      decodeRejoin(b);
    } catch (e) {
      expect(e).toBeInstanceOf(DecodeError);
    }
  });
  it('every truncation throws; a token of another size is a RangeError', () => {
    const b = encodeRejoin({ slot: 2, token: new Uint8Array(8).fill(1) });
    for (let n = 0; n < b.length; n++) expect(() => decodeRejoin(b.subarray(0, n))).toThrow(DecodeError);
    expect(() => encodeRejoin({ slot: 2, token: new Uint8Array(7) })).toThrow(RangeError);
  });
});

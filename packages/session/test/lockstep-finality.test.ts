import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { NetplayClient, type NetplayHost, SESSION_CHANNELS, type SessionMode } from '../src/index.js';
import { LockstepFinality } from '../src/lockstep-finality.js';
import { BROADCAST_SLOT } from '../src/routed-connection.js';
import { CONTENT, FRAME_MS, inputSource, setup } from './harness.js';

/**
 * The finality rule of the lockstep modes at the session layer (issue 13): the scheduler's
 * events end the session with `removed` / `host-lost` / `partitioned`, a peer the host's
 * scheduler removes is disconnected, and `final` events say which frames are final.
 */
type Env = ReturnType<typeof setup>;
const SEED = 7;

/** The checksum after each frame and the last `final` frame of one peer. */
interface Track {
  readonly sums: Map<number, bigint>;
  final: number;
}

function track(peer: NetplayHost | NetplayClient): Track {
  const t: Track = { sums: new Map(), final: -1 };
  (peer as NetplayClient).on('frame', ({ frame }) => t.sums.set(frame, peer.core.checksum()));
  (peer as NetplayClient).on('final', ({ frame }) => {
    expect(frame).toBeGreaterThan(t.final);
    t.final = frame;
  });
  return t;
}

function run(env: Env, peers: NetplayClient[], ms: number, seed: number): void {
  const hi = inputSource(seed);
  const ci = peers.map((_, i) => inputSource(seed + 1 + i));
  for (let t = 0; t < ms; t += FRAME_MS) {
    env.host.tick(hi());
    peers.forEach((c, i) => {
      if (c.state !== 'closed') c.tick(ci[i]?.());
    });
    env.net.advance(FRAME_MS);
  }
}

/** Frames final on both, compared; returns how many. */
function agreeOnFinals(a: Track, b: Track): number {
  let n = 0;
  for (let f = 0; f <= Math.min(a.final, b.final); f++) {
    const x = a.sums.get(f);
    const y = b.sums.get(f);
    if (x === undefined || y === undefined) continue;
    n++;
    expect(y, `frame ${f}`).toBe(x);
  }
  return n;
}

/** Makes `client` withhold its inputs (pings, acks and the transport's heartbeats still flow). */
function withholdInputs(client: NetplayClient, mode: SessionMode): void {
  const conn = (client as unknown as { conn: { send(channel: string, data: Uint8Array): void } }).conn;
  const send = conn.send.bind(conn);
  conn.send = (channel, data) => {
    // P2P: inputs are the broadcasts (slot 255); client-server: the `input` channel.
    const input = mode === 'lockstep-cs' ? channel === 'input' : data[0] === BROADCAST_SLOT;
    if (!input) send(channel, data);
  };
}

describe.each(['lockstep-p2p', 'frame-advance', 'lockstep-cs'] as const)(
  '%s: finality at the session layer',
  (mode) => {
    it('a player whose inputs stop is removed by the host scheduler: it ends removed, the host disconnects it, the others play on', () => {
      const players = 3;
      const env = setup(
        21,
        { mode, players, core: new TestCore({ players, seed: SEED }) },
        { latencyMs: 15, jitterMs: 3, loss: 0 },
      );
      const host = track(env.host);
      const clients = [1, 2].map((i) =>
        env.join(`p${i}`, { core: new TestCore({ players, seed: SEED }), randomU32: () => 0x77 + i }),
      );
      const [ta, tb] = clients.map(track) as [Track, Track];
      env.net.runUntil(() => clients.every((c) => c.state !== 'handshaking'), 20_000);
      const [a, b] = clients as [NetplayClient, NetplayClient];
      expect(clients.map((c) => c.state)).toEqual(['playing', 'playing']);
      const left: { nick: string; reason: string }[] = [];
      env.host.on('peer-left', ({ nick, reason }) => left.push({ nick, reason }));
      const refused: string[] = [];
      env.host.on('peer-refused', ({ nick }) => refused.push(nick ?? '?'));
      run(env, clients, 1500, 3);
      withholdInputs(b, mode);
      const stalledAt = env.host.frame;
      run(env, clients, 9000, 4);
      // b ended removed (its scheduler's LEAVE / 0x52, or the host's REFUSE: the same code).
      expect(b.state).toBe('closed');
      expect(b.error?.code).toBe('removed');
      expect(left.map((l) => l.nick)).toEqual(['p2']);
      // The host's own removal disconnected it (not its own end, which would say "ended for this peer").
      expect(left[0]!.reason).toMatch(/^removed: removed at frame \d+: the host removed this peer/);
      expect(refused).toEqual([]);
      // The others play on, and everything final on two peers agrees.
      expect(a.state).toBe('playing');
      expect(env.host.frame).toBeGreaterThan(stalledAt + 200);
      expect(agreeOnFinals(host, ta)).toBeGreaterThan(stalledAt + 100);
      expect(agreeOnFinals(host, tb)).toBeGreaterThan(0);
      expect(env.host.finalFrame).toBe(host.final);
      expect(a.finalFrame).toBe(ta.final);
    });
  },
);

describe.each(['lockstep-p2p', 'frame-advance', 'lockstep-cs'] as const)('%s: a client that loses the host', (mode) => {
  it('ends host-lost by its scheduler (not by its transport), its finals at frames the host ran and agreeing', () => {
    const players = 2;
    const env = setup(
      22,
      { mode, players, core: new TestCore({ players, seed: SEED }) },
      { latencyMs: 15, jitterMs: 3, loss: 0 },
    );
    const host = track(env.host);
    // A patient transport on the client's side: the scheduler's end comes first.
    const conn = env.net.connect('p1', 'host', { channels: SESSION_CHANNELS, timeouts: { disconnectMs: 60_000 } });
    const a = new NetplayClient(conn, {
      core: new TestCore({ players, seed: SEED }),
      content: CONTENT,
      clock: env.net.clock,
      nick: 'p1',
      fps: 1000 / FRAME_MS,
      randomU32: () => 0x99,
    });
    const ta = track(a);
    env.net.runUntil(() => a.state !== 'handshaking', 20_000);
    expect(a.state).toBe('playing');
    run(env, [a], 2000, 5);
    env.net.cutBoth('p1', 'host');
    const cutAt = env.net.now();
    run(env, [a], 8000, 6);
    expect(a.state).toBe('closed');
    expect(a.error?.code).toBe('host-lost');
    expect(a.error?.message).toMatch(/^the game ended for this peer at frame \d+: the host was lost/);
    expect(env.net.now() - cutAt).toBeGreaterThan(5000);
    // Its finals are frames the host ran, with the same states; the host played on alone.
    expect(ta.final).toBeGreaterThan(60);
    expect(agreeOnFinals(host, ta)).toBe([...ta.sums.keys()].filter((f) => f <= ta.final).length);
    expect(env.host.frame).toBeGreaterThan(ta.final + 300);
  });
});

describe.each(['lockstep-p2p', 'frame-advance', 'lockstep-cs'] as const)('%s: a host that loses quorum', (mode) => {
  it('a host cut off from both clients of three ends partitioned (ended event, every client dropped); the clients end host-lost', () => {
    const players = 3;
    const patient = { disconnectMs: 60_000 };
    const env = setup(
      23,
      { mode, players, core: new TestCore({ players, seed: SEED }) },
      { latencyMs: 15, jitterMs: 3, loss: 0 },
      patient,
    );
    const host = track(env.host);
    const ended: { frame: number; code: string; message: string }[] = [];
    env.host.on('ended', ({ frame, error }) => ended.push({ frame, code: error.code, message: error.message }));
    const clients = [1, 2].map((i) => {
      const conn = env.net.connect(`p${i}`, 'host', { channels: SESSION_CHANNELS, timeouts: patient });
      return new NetplayClient(conn, {
        core: new TestCore({ players, seed: SEED }),
        content: CONTENT,
        clock: env.net.clock,
        nick: `p${i}`,
        fps: 1000 / FRAME_MS,
        randomU32: () => 0x55 + i,
      });
    });
    const tracks = clients.map(track);
    env.net.runUntil(() => clients.every((c) => c.state !== 'handshaking'), 20_000);
    expect(clients.map((c) => c.state)).toEqual(['playing', 'playing']);
    run(env, clients, 2000, 8);
    env.net.cutBoth('p1', 'host');
    env.net.cutBoth('p2', 'host');
    run(env, clients, 9000, 9);
    expect(ended.map((e) => e.code)).toEqual(['partitioned']);
    expect(ended[0]!.message).toMatch(/^the game ended for the host at frame \d+: too few players/);
    expect(ended[0]!.frame).toBe(host.final);
    expect(env.host.peerList()).toEqual([]);
    // The host's clients were closed (those it could still reach would read `partitioned`); cut
    // off, each ended by its own scheduler, `host-lost`, with finals the host has too.
    for (const [i, c] of clients.entries()) {
      expect(c.state).toBe('closed');
      expect(c.error?.code).toBe('host-lost');
      expect(agreeOnFinals(host, tracks[i]!)).toBeGreaterThan(60);
      expect(tracks[i]!.final).toBeLessThanOrEqual(host.final);
    }
  });
});

describe('LockstepFinality', () => {
  it('reports growing finals, every removal, and the end once; nothing after the end', () => {
    const events: import('@netplay/lockstep').LockstepEvent[] = [];
    const sch = { events, finalFrame: -1 } as unknown as ConstructorParameters<typeof LockstepFinality>[0] & {
      finalFrame: number;
    };
    const seen: string[] = [];
    const fin = new LockstepFinality(sch, {
      final: (f) => seen.push(`final ${f}`),
      removed: (p, f) => seen.push(`removed ${p} at ${f}`),
      ended: (r, f) => seen.push(`ended ${r} at ${f}`),
    });
    fin.check();
    sch.finalFrame = 10;
    fin.check();
    fin.check();
    events.push({ type: 'interrupted', peer: 2, at: 1 }, { type: 'removed', peer: 2, frame: 12, at: 2 });
    sch.finalFrame = 14;
    fin.check();
    events.push({ type: 'ended', reason: 'partitioned', finalFrame: 14, at: 3 });
    fin.check();
    sch.finalFrame = 20;
    events.push({ type: 'removed', peer: 1, frame: 30, at: 4 });
    fin.check();
    expect(seen).toEqual(['final 10', 'final 14', 'removed 2 at 12', 'ended partitioned at 14']);
    expect(fin.finalFrame).toBe(14);
    expect(events).toEqual([{ type: 'removed', peer: 1, frame: 30, at: 4 }]);
  });
});

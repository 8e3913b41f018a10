import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_SERVER_CHANNELS,
  ClientServerClient,
  ClientServerServer,
  type LockstepEvent,
  LockstepRunner,
} from '../src/index.js';
import { applyFaults, expectFinality, faultArb, type Observed, observeCore } from './faults.js';
import { link, network } from './harness.js';
import { filterSends, makeScript, playScript } from './oracle.js';

const F = 20;
/** Liveness defaults (DEFAULT_TIMEOUTS of @netplay/transport) and the slack a frozen peer may take past them. */
const DISCONNECT_MS = 5000;
const SLACK_MS = 1000 + 2 * F;

type Behaviour = 'honest' | 'withhold' | 'truncate' | 'replay';

interface Peer {
  name: string;
  scheduler: ClientServerServer | ClientServerClient;
  runner: LockstepRunner<TestCore>;
  obs: { sums: bigint[]; times: number[] };
  endedAt: number | undefined;
  honest: boolean;
}

/** A client-server session of `n` players (peer 0 the server); `behaviour(i)` turns client i into a stalling adversary from `stallAtMs` on. */
function session(seed: number, n: number, behaviour: (i: number) => Behaviour = () => 'honest', stallAtMs = 0) {
  const net = network({ seed, link: { latencyMs: 15, jitterMs: 5 } });
  const names = Array.from({ length: n }, (_, i) => `p${i}`);
  const conns = names.slice(1).map((nm) => link(net, nm, 'p0', CLIENT_SERVER_CHANNELS));
  net.clock.advanceTo(1000);
  const t0 = net.now() + 500;
  const peers: Peer[] = [];
  const server = new ClientServerServer({ id: 0, ports: n, inputBytes: 1, frameMs: F, startMs: t0, magic: seed });
  const add = (i: number, scheduler: ClientServerServer | ClientServerClient) => {
    const core = new TestCore({ players: n, inputBytes: 1 });
    const obs = observeCore(core, () => net.now());
    const runner = new LockstepRunner({ clock: net.clock, scheduler, core });
    const p: Peer = { name: names[i]!, scheduler, runner, obs, endedAt: undefined, honest: behaviour(i) === 'honest' };
    peers.push(p);
    return p;
  };
  add(0, server);
  for (let i = 1; i < n; i++) {
    const c = new ClientServerClient({ id: i, server: 0, ports: n, inputBytes: 1, frameMs: F });
    const p = add(i, c);
    const { ab, ba } = conns[i - 1]!;
    const b = behaviour(i);
    if (b !== 'honest') {
      // The adversary keeps its traffic flowing (chat, and inputs that carry nothing new).
      let first: Uint8Array | undefined;
      filterSends(ab, (channel, data) => {
        if (channel !== 'input' || net.now() < t0 + stallAtMs) {
          if (channel === 'input' && !first) first = data.slice();
          return data;
        }
        if (b === 'withhold') return undefined;
        if (b === 'truncate') return data.subarray(0, 4);
        return first ?? data.subarray(0, 4);
      });
      const chat = () => {
        c.say('still here');
        p.runner.pump();
        net.clock.setTimer(100, chat);
      };
      net.clock.setTimer(t0 + stallAtMs - net.now(), chat);
    }
    p.runner.addPeer(0, ab);
    peers[0]!.runner.addPeer(i, ba);
    server.addClient(i, i);
  }
  peers[0]!.runner.pump();
  return { net, names, peers, server, t0 };
}

function observed(peers: readonly Peer[]): Observed[] {
  return peers.map((p) => {
    const ended = (p.scheduler.events as LockstepEvent[]).find((e) => e.type === 'ended');
    return {
      name: p.name,
      sums: p.obs.sums,
      times: p.obs.times,
      finalFrame: p.scheduler.finalFrame,
      endReason: p.scheduler.endReason,
      endedAt: ended?.at,
      honest: p.honest,
    };
  });
}

describe('client-server liveness and finality (issue 13)', () => {
  it('a client that keeps chatting but whose input counter stops is interrupted, then removed and told so', () => {
    const s = session(3, 3, (i) => (i === 2 ? 'replay' : 'honest'), 2000);
    for (const p of s.peers) playScript(s.net, p.runner, makeScript(p.name.length + 7, 1, F, s.t0, s.t0 + 12_000));
    s.net.clock.advanceTo(s.t0 + 12_000);
    const ev = s.server.events;
    const interrupted = ev.find((e) => e.type === 'interrupted' && e.peer === 2);
    const removed = ev.find((e) => e.type === 'removed' && e.peer === 2);
    expect(interrupted?.at).toBeGreaterThanOrEqual(s.t0 + 2000 + 750 - F);
    expect(interrupted?.at).toBeLessThanOrEqual(s.t0 + 2000 + 750 + 2 * F);
    expect(removed?.at).toBeGreaterThanOrEqual(s.t0 + 2000 + DISCONNECT_MS - F);
    expect(removed?.at).toBeLessThanOrEqual(s.t0 + 2000 + DISCONNECT_MS + 2 * F);
    // The adversary learns it was removed; the honest client and the server play on.
    expect(s.peers[2]!.scheduler.endReason).toBe('removed');
    expect(s.server.endReason).toBeUndefined();
    expect(s.peers[1]!.scheduler.endReason).toBeUndefined();
    expectFinality(observed(s.peers), s.t0, s.net.now(), DISCONNECT_MS + SLACK_MS);
  });

  it('a server cut off from both of its clients stops at once and ends partitioned; the clients end host-lost', () => {
    const s = session(4, 3);
    s.net.clock.advanceTo(s.t0 + 2000);
    s.net.partition(['p0'], ['p1', 'p2']);
    s.net.clock.advanceTo(s.t0 + 10_000);
    expect(s.server.endReason).toBe('partitioned');
    expect(s.peers[1]!.scheduler.endReason).toBe('host-lost');
    expect(s.peers[2]!.scheduler.endReason).toBe('host-lost');
    // Without quorum the server ran no frame the clients could not have: it stopped within the interrupt time.
    const serverLast = s.peers[0]!.obs.times.at(-1)!;
    expect(serverLast).toBeLessThanOrEqual(s.t0 + 2000 + 750 + 2 * F);
    expectFinality(observed(s.peers), s.t0, s.net.now(), DISCONNECT_MS + SLACK_MS);
  });

  it('two players: the server alone keeps quorum, removes the cut-off client and plays on', () => {
    const s = session(5, 2);
    s.net.clock.advanceTo(s.t0 + 1000);
    s.net.partition(['p0'], ['p1']);
    s.net.clock.advanceTo(s.t0 + 9000);
    expect(s.server.events.some((e) => e.type === 'removed' && e.peer === 1)).toBe(true);
    expect(s.server.endReason).toBeUndefined();
    expect(s.peers[1]!.scheduler.endReason).toBe('host-lost');
    expectFinality(observed(s.peers), s.t0, s.net.now(), DISCONNECT_MS + SLACK_MS);
  });

  test.prop(
    {
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      n: fc.integer({ min: 2, max: 8 }),
      faults: fc.array(faultArb(8), { minLength: 1, maxLength: 3 }),
    },
    { numRuns: 12, endOnFailure: true },
  )(
    'partition property: pauses and partitions never split final frames nor freeze a peer past the disconnect time',
    ({ seed, n, faults }) => {
      const s = session(seed, n);
      const fs = faults
        .map((f) => ({ ...f, members: f.members.filter((m) => m < n) }))
        .filter((f) => f.members.length > 0 && f.members.length < n);
      applyFaults(s.net, s.names, s.t0, fs);
      for (const [i, p] of s.peers.entries())
        playScript(s.net, p.runner, makeScript(seed + i, 1, F, s.t0, s.t0 + 20_000));
      s.net.clock.advanceTo(s.t0 + 20_000);
      expectFinality(observed(s.peers), s.t0, s.net.now(), DISCONNECT_MS + SLACK_MS);
    },
  );

  test.prop(
    {
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      n: fc.integer({ min: 2, max: 5 }),
      behaviour: fc.constantFrom<Behaviour>('withhold', 'truncate', 'replay'),
      stallAtMs: fc.integer({ min: 0, max: 3000 }),
    },
    { numRuns: 12, endOnFailure: true },
  )(
    'stall property: a client that keeps talking but withholds, truncates or replays inputs is removed; nobody freezes',
    ({ seed, n, behaviour, stallAtMs }) => {
      const bad = n - 1;
      const s = session(seed, n, (i) => (i === bad ? behaviour : 'honest'), stallAtMs);
      for (const [i, p] of s.peers.entries())
        playScript(s.net, p.runner, makeScript(seed + i, 1, F, s.t0, s.t0 + 12_000));
      s.net.clock.advanceTo(s.t0 + 12_000);
      const removed = s.server.events.find((e) => e.type === 'removed' && e.peer === bad);
      expect(removed?.at).toBeLessThanOrEqual(s.t0 + stallAtMs + DISCONNECT_MS + SLACK_MS);
      for (const p of s.peers) if (p.honest) expect(p.scheduler.endReason, p.name).toBeUndefined();
      expectFinality(observed(s.peers), s.t0, s.net.now(), DISCONNECT_MS + SLACK_MS);
    },
  );
});

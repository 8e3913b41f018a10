import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { ManualClock } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import {
  CONTROL_CHANNEL,
  CoreDriver,
  INPUT_CHANNEL,
  InputStatus,
  P2PSession,
  type P2PSessionOptions,
  RollbackError,
  type SessionRequest,
} from '../src/index.js';
import { inputPattern, Mesh, peerName } from './mesh.js';

/** Two sessions wired by hand: messages wait in outboxes until delivered. */
function pairOfSessions(options: Partial<P2PSessionOptions> = {}) {
  const clock = new ManualClock();
  const outbox: Record<string, Array<[string, string, Uint8Array]>> = { a: [], b: [] };
  const make = (me: 'a' | 'b', player: number, other: string) =>
    new P2PSession({
      players: 2,
      inputBytes: 1,
      localPlayer: player,
      remotes: [{ peer: other, player: 1 - player }],
      isHost: me === 'a',
      hostPeer: 'a',
      clock,
      send: (peer, channel, data) => outbox[me]!.push([peer, channel, data.slice()]),
      ...options,
    });
  const a = make('a', 0, 'b');
  const b = make('b', 1, 'a');
  const deliver = (from: 'a' | 'b') => {
    const to = from === 'a' ? b : a;
    for (const [, channel, data] of outbox[from]!.splice(0)) to.receive(from, channel, data);
  };
  return { clock, a, b, deliver, outbox };
}

function describeRequests(reqs: readonly SessionRequest[]): string[] {
  return reqs.map((r) =>
    r.kind === 'advance' ? `advance ${r.frame}${r.resimulating ? ' (resim)' : ''}` : `${r.kind} ${r.frame}`,
  );
}

describe('P2PSession inputs and rollback', () => {
  it('predicts up to the prediction window, stalls, then rolls back to the first mispredicted frame', () => {
    const { a, b, deliver, clock } = pairOfSessions({ maxPrediction: 8 });
    a.poll();
    b.poll();
    deliver('a');
    deliver('b');
    expect(a.isRunning && b.isRunning).toBe(true);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      a.addLocalInput(new Uint8Array([1]));
      for (const r of a.advanceFrame()) if (r.kind === 'advance') statuses.push(r.status[0]!, r.status[1]!);
    }
    expect(a.currentFrame).toBe(8);
    expect(a.stats.stalls).toBe(4);
    // Player 0 (local) confirmed, player 1 predicted, for each of the 8 frames.
    expect(statuses).toEqual(Array.from({ length: 8 }, () => [InputStatus.Confirmed, InputStatus.Predicted]).flat());
    // B plays frames 0..2: frame 0 matches the prediction (nothing pressed), frame 1 does not.
    // (Each input differs from the one before, so each goes out at once: wire v2 holds back
    // unchanged inputs until the heartbeat.)
    for (const v of [0, 5, 6]) {
      b.addLocalInput(new Uint8Array([v]));
      b.advanceFrame();
    }
    deliver('b');
    a.addLocalInput(new Uint8Array([1]));
    const reqs = describeRequests(a.advanceFrame());
    expect(reqs.slice(0, 3)).toEqual(['load 1', 'advance 1 (resim)', 'save 2']);
    expect(reqs.filter((r) => r.endsWith('(resim)')).length).toBe(7);
    expect(reqs.slice(-2)).toEqual(['advance 8', 'save 9']);
    // Frames 0-2 have every input at a, but b has not yet reported holding a's inputs: not final.
    expect(a.stats).toMatchObject({ rollbacks: 1, lastRollbackDepth: 7, currentFrame: 9, confirmedFrame: 0 });
    expect(a.unreadFrame).toBe(3);
    // A's and then b's next messages are heartbeats (nothing changed): a's carries its inputs b
    // lacks, b's reports holding them.
    clock.advance(200);
    a.poll();
    deliver('a');
    b.poll();
    deliver('b');
    a.poll();
    expect(a.confirmedFrame).toBe(3);
    expect(a.peerStats()[0]).toMatchObject({ rollbacks: 1, maxRollbackDepth: 7 });
  });

  it('delays local input by inputDelay frames and accepts a new delay mid-session', () => {
    const { a, b, deliver } = pairOfSessions({ inputDelay: 2, maxPrediction: 30 });
    a.poll();
    b.poll();
    deliver('a');
    deliver('b');
    const local: number[] = [];
    for (let f = 0; f < 8; f++) {
      if (f === 4) a.inputDelay = 1;
      a.addLocalInput(new Uint8Array([10 + f]));
      for (const r of a.advanceFrame()) if (r.kind === 'advance') local.push(r.inputs[0]!);
    }
    // Frames 0-1 are empty; inputs 10..13 land on frames 2..5. With delay 1, input 14 (added at
    // frame 4) would land on frame 5, which is taken: it is dropped; 15 lands on 6, 16 on 7.
    expect(local).toEqual([0, 0, 10, 11, 12, 13, 15, 16]);
  });

  it('drives a core through the requests with CoreDriver and refuses a missing local input', () => {
    const { a, b, deliver } = pairOfSessions();
    a.poll();
    b.poll();
    deliver('a');
    deliver('b');
    const core = new TestCore({ players: 2, inputBytes: 1 });
    const driver = new CoreDriver(core, a.ringFrames);
    a.addLocalInput(new Uint8Array([3]));
    driver.run(a.advanceFrame(), a);
    expect(core.frame).toBe(1);
    expect(driver.ring.frames()).toEqual([0, 1]);
    expect(() => a.advanceFrame()).toThrow(RollbackError);
    expect(() => a.addLocalInput(new Uint8Array(2))).toThrow(RollbackError);
  });

  it('starts without a stall or an error when the only silent peer times out while synchronizing', () => {
    const { a, clock } = pairOfSessions({ disconnectMs: 1000, isHost: true });
    const events: string[] = [];
    a.on('disconnected', ({ peer }) => events.push(`disconnected ${peer}`));
    a.on('running', ({ frame }) => events.push(`running ${frame}`));
    a.on('player-left', ({ player, frame }) => events.push(`left ${player} ${frame}`));
    a.advanceFrame();
    clock.advance(1500);
    expect(a.advanceFrame()).toEqual([]);
    expect(events).toEqual(['disconnected b', 'left 1 0', 'running 0']);
    a.addLocalInput(new Uint8Array([1]));
    expect(describeRequests(a.advanceFrame())).toEqual(['save 0', 'advance 0', 'save 1']);
  });

  it('refuses bad options', () => {
    const clock = new ManualClock();
    const base = {
      players: 2,
      inputBytes: 1,
      localPlayer: 0,
      remotes: [{ peer: 'x', player: 1 }],
      clock,
      send: () => {},
    };
    expect(() => new P2PSession({ ...base, players: 17 })).toThrow(RollbackError);
    expect(() => new P2PSession({ ...base, localPlayer: 2 })).toThrow(RollbackError);
    expect(() => new P2PSession({ ...base, remotes: [{ peer: 'x', player: 0 }] })).toThrow(RollbackError);
    expect(() => new P2PSession({ ...base, maxPrediction: -1 })).toThrow(RollbackError);
    expect(() => new P2PSession({ ...base, inputDelay: 99 })).toThrow(RollbackError);
  });

  test.prop([
    fc.constantFrom(INPUT_CHANNEL, CONTROL_CHANNEL),
    fc.uint8Array({ maxLength: 300 }),
    fc.constantFrom('a', 'b', 'zz'),
  ])('any bytes from any peer are dropped or reported, never thrown', (channel, bytes, from) => {
    const { a, b } = pairOfSessions();
    const errors: unknown[] = [];
    a.on('protocol-error', ({ error }) => errors.push(error));
    b.on('protocol-error', ({ error }) => errors.push(error));
    a.receive(from === 'a' ? 'b' : from, channel, bytes);
    b.receive(from, channel, bytes);
    a.addLocalInput(new Uint8Array([1]));
    a.advanceFrame();
    for (const e of errors) expect(e).toBeInstanceOf(Error);
  });
});

describe('time sync, events and stats', () => {
  it('recommends waiting to the peer that runs ahead until both are within two frames', () => {
    const mesh = new Mesh({
      players: 2,
      seed: 5,
      makeCore: () => new TestCore({ players: 2 }),
      inputOf: inputPattern(5),
      link: { latencyMs: 40, jitterMs: 5 },
    });
    mesh.tick();
    mesh.tick();
    mesh.rigs[1]!.wait = 40; // peer 1 starts late
    let maxAhead = 0;
    let maxCatchUp = 0;
    for (let i = 0; i < 600; i++) {
      mesh.tick();
      maxAhead = Math.max(maxAhead, mesh.rigs[0]!.session.framesAhead);
      maxCatchUp = Math.max(maxCatchUp, mesh.rigs[1]!.session.catchUpFrames);
    }
    expect(maxAhead).toBeGreaterThan(2);
    expect(maxCatchUp).toBeGreaterThan(0);
    expect(mesh.rigs[0]!.events.some((e) => e.type === 'wait-recommended')).toBe(true);
    const [f0, f1] = mesh.rigs.map((r) => r.session.currentFrame);
    expect(Math.abs(f0! - f1!)).toBeLessThanOrEqual(2);
    expect(Math.abs(mesh.rigs[0]!.session.framesAhead)).toBeLessThan(2);
    expect(mesh.mismatches).toEqual([]);
  });

  it('reports synchronizing, running, interrupted, resumed and disconnected, with per-peer stats', () => {
    const mesh = new Mesh({
      players: 2,
      seed: 6,
      makeCore: () => new TestCore({ players: 2 }),
      inputOf: inputPattern(6),
      link: { latencyMs: 30 },
    });
    mesh.runUntilConfirmed(120, 1000);
    const stats = mesh.rigs[0]!.session.peerStats()[0]!;
    expect(stats.rttMs).toBeGreaterThanOrEqual(60);
    expect(stats.rttMs).toBeLessThan(60 + 2 * 16 + 1);
    expect(stats.sendBytesPerSec).toBeGreaterThan(0);
    expect(stats.receiveBytesPerSec).toBeGreaterThan(0);
    expect(Math.abs(stats.framesBehind)).toBeLessThan(4);
    mesh.net.cutBoth(peerName(0), peerName(1));
    for (let i = 0; i < 60; i++) mesh.tick();
    mesh.net.heal();
    for (let i = 0; i < 30; i++) mesh.tick();
    expect(mesh.mismatches).toEqual([]);
    mesh.net.cutBoth(peerName(0), peerName(1));
    for (let i = 0; i < 400; i++) mesh.tick();
    const types = mesh.rigs[0]!.events.map((e) => e.type);
    const order = ['synchronizing', 'synchronized', 'running', 'interrupted', 'resumed', 'interrupted', 'disconnected'];
    expect(types.filter((t) => order.includes(t))).toEqual(order);
    // Split in two: the host (alone, it has quorum with 2 players) removed player 1 and goes on;
    // player 1 (alone, no quorum) never takes over: it ends, its finals frozen (issue 13: it used
    // to make itself host and mark frames final alone).
    expect(mesh.rigs[0]!.session.activePlayers()).toEqual([0]);
    expect(mesh.rigs[0]!.session.endReason).toBeUndefined();
    const client = mesh.rigs[1]!;
    expect(client.events.map((e) => e.type)).not.toContain('host-changed');
    expect(client.session.endReason).toBe('host-lost');
    expect(client.events.filter((e) => e.type === 'ended')).toEqual([
      { type: 'ended', event: { reason: 'host-lost', frame: client.session.confirmedFrame } },
    ]);
  });

  it('the host pauses and resumes every peer, and loads a savestate on every peer', () => {
    const mesh = new Mesh({
      players: 3,
      seed: 8,
      makeCore: () => new TestCore({ players: 3 }),
      inputOf: inputPattern(8),
      link: { latencyMs: 20, jitterMs: 5 },
    });
    const host = mesh.rigs[0]!;
    const watcher = mesh.addSpectator('watcher');
    const powerOn = new TestCore({ players: 3 }).registry.save();
    mesh.runUntilConfirmed(100, 1000);
    host.session.setHostPaused(true);
    for (let i = 0; i < 20; i++) mesh.tick();
    const frozen = mesh.rigs.map((r) => r.session.currentFrame);
    for (let i = 0; i < 20; i++) mesh.tick();
    expect(mesh.rigs.map((r) => r.session.currentFrame)).toEqual(frozen);
    for (const r of mesh.rigs) expect(r.session.paused).toBe(true);
    host.session.setHostPaused(false);
    for (let i = 0; i < 20; i++) mesh.tick();
    for (const r of mesh.rigs) expect(r.session.currentFrame).toBeGreaterThan(frozen[0]! + 5);
    const loadFrame = host.session.currentFrame;
    host.session.loadHostState(powerOn);
    for (let i = 0; i < 120; i++) mesh.tick();
    // Every peer loaded the power-on state at the same frame and replayed the same inputs.
    const common = Math.min(...mesh.rigs.map((r) => r.checked));
    expect(common).toBeGreaterThan(loadFrame + 60);
    const states = mesh.rigs.map((r) => Buffer.from(r.driver.stateOf(common)!).toString('hex'));
    expect(new Set(states).size).toBe(1);
    // The spectator applied the load at the same frame: its states match the players' states.
    for (let i = 0; i < 60; i++) mesh.tick();
    const hostCrcs = mesh.finalCrcs.get(host.name)!;
    const watcherCrcs = mesh.finalCrcs.get(watcher.name)!;
    let compared = 0;
    for (const [frame, crc] of watcherCrcs) {
      if (frame <= loadFrame || !hostCrcs.has(frame)) continue;
      expect(crc).toBe(hostCrcs.get(frame));
      compared++;
    }
    expect(compared).toBeGreaterThan(50);
    // The core frame counter restarted from the loaded state.
    expect(mesh.rigs[0]!.core.frame).toBeLessThan(host.session.currentFrame - loadFrame + 5);
  });
});

import { crc32 } from '@netplay/protocol';
import type { Core } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';
import { MemoryConnection, SimulatedNetwork } from '@netplay/transport';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ROLLBACK_CHANNELS,
  RollbackError,
  type RollbackGame,
  type RollbackOptions,
  type RollbackSpectatorGame,
  rollback,
  rollbackSpectator,
} from '../src/index.js';

const FRAME_MS = 16;

function stateCrc(core: Core): number {
  const buf = new Uint8Array(core.stateBytes);
  return crc32(buf.subarray(0, core.saveInto(buf)));
}

/** The byte every input byte of `player` holds at `frame` (changing every 1..4 frames, from a seed). */
function inputOf(seed: number, player: number, frame: number): number {
  let h = seed ^ Math.imul(player + 1, 0x9e3779b1) ^ Math.imul((frame >> 2) + 1, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 16), 0xc2b2ae35);
  return (h ^ (h >>> 13)) & 0xff;
}

interface Valid {
  players: number;
  host: number;
  inputDelay: number;
  maxPrediction: number;
  checksumInterval: number;
  latency: number;
  jitter: number;
  loss: number;
  spectator: boolean;
  seed: number;
}

const validArb: fc.Arbitrary<Valid> = fc
  .record({
    players: fc.integer({ min: 2, max: 4 }),
    hostPick: fc.nat(),
    inputDelay: fc.integer({ min: 0, max: 3 }),
    maxPrediction: fc.integer({ min: 1, max: 10 }),
    checksumInterval: fc.constantFrom(0, 1, 7, 60),
    latency: fc.integer({ min: 0, max: 50 }),
    jitter: fc.integer({ min: 0, max: 10 }),
    loss: fc.double({ min: 0, max: 0.1, noNaN: true }),
    spectator: fc.boolean(),
    seed: fc.integer(),
  })
  .map(({ hostPick, ...v }) => ({ ...v, host: hostPick % v.players }));

/**
 * Builds one peer per slot with the builder over a SimulatedNetwork (a full mesh, plus a spectator
 * of the host when asked), ticks them, and compares every frame each peer takes as final with an
 * offline replay of the inputs the test generated.
 */
function runMesh(v: Valid, frames: number) {
  const net = new SimulatedNetwork({ seed: v.seed });
  const link = { latencyMs: v.latency, jitterMs: v.jitter, loss: v.loss };
  const names = Array.from({ length: v.players }, (_, i) => `p${i}`);
  const builders = names.map((_, i) =>
    rollback({
      core: new TestCore({ players: v.players, inputBytes: 2 }),
      players: v.players,
      local: i,
      host: v.host,
      clock: net.clock,
      fps: 1000 / FRAME_MS,
      inputDelay: v.inputDelay,
      maxPrediction: v.maxPrediction,
      checksumInterval: v.checksumInterval,
    }),
  );
  for (let i = 0; i < v.players; i++)
    for (let j = i + 1; j < v.players; j++) {
      const { client, server } = net.pair(names[i]!, names[j]!, { channels: ROLLBACK_CHANNELS });
      builders[i]!.remote(j, client);
      builders[j]!.remote(i, server);
      net.setLink(names[i]!, names[j]!, link);
      net.setLink(names[j]!, names[i]!, link);
    }
  let spectator: RollbackSpectatorGame | undefined;
  if (v.spectator) {
    const { client, server } = net.pair('watcher', names[v.host]!, { channels: ROLLBACK_CHANNELS });
    builders[v.host]!.spectator(server);
    spectator = rollbackSpectator({ core: new TestCore({ players: v.players, inputBytes: 2 }) })
      .host(client)
      .start();
  }
  const games: RollbackGame[] = builders.map((b) => b.start());

  const offline = new TestCore({ players: v.players, inputBytes: 2 });
  const sums = [stateCrc(offline)];
  const scratch = new Uint8Array(2);
  const trueInput = (p: number, f: number) => (f < v.inputDelay ? 0 : inputOf(v.seed, p, f));
  const replay = (f: number) => {
    while (sums.length <= f) {
      const g = sums.length - 1;
      for (let p = 0; p < v.players; p++) offline.setInput(p, scratch.fill(trueInput(p, g)));
      offline.advance();
      sums.push(stateCrc(offline));
    }
    return sums[f]!;
  };
  const checked = games.map(() => -1);
  const mismatches: Array<{ peer: number; frame: number }> = [];
  let spectatorChecked = 0;
  const input = new Uint8Array(2);
  for (let t = 0; t < frames; t++) {
    games.forEach((g, i) => {
      input.fill(inputOf(v.seed, i, g.currentFrame + g.session.inputDelay));
      g.tick(input);
      const upTo = Math.min(g.confirmedFrame, g.currentFrame);
      for (let f = checked[i]! + 1; f <= upTo; f++) {
        const st = g.driver.stateOf(f);
        if (st !== undefined && crc32(st) !== replay(f)) mismatches.push({ peer: i, frame: f });
        checked[i] = f;
      }
    });
    if (spectator) {
      spectator.tick();
      const f = spectator.currentFrame;
      if (f !== undefined && f > spectatorChecked) {
        if (stateCrc(spectator.core) !== replay(f)) mismatches.push({ peer: -1, frame: f });
        spectatorChecked = f;
      }
    }
    net.advance(FRAME_MS);
  }
  return { games, checked, mismatches, spectatorChecked };
}

describe('rollback() builder', () => {
  it('valid option sets start sessions whose final frames equal an offline replay of the generated inputs', () => {
    fc.assert(
      fc.property(validArb, (v) => {
        const { games, checked, mismatches, spectatorChecked } = runMesh(v, 300);
        expect(mismatches).toEqual([]);
        for (const g of games) expect(g.endReason).toBeUndefined();
        // The game ran: every peer took frames as final (300 ticks; a window of 1 frame on 60 ms
        // links confirms about a third of them, larger windows nearly all).
        for (const c of checked) expect(c).toBeGreaterThanOrEqual(50);
        if (v.spectator) expect(spectatorChecked).toBeGreaterThanOrEqual(40);
      }),
      { numRuns: 60 },
    );
  });

  it('tick reports new frames, skips nothing on a clean link, and stats count the run', () => {
    const v: Valid = {
      players: 2,
      host: 0,
      inputDelay: 1,
      maxPrediction: 8,
      checksumInterval: 10,
      latency: 30,
      jitter: 0,
      loss: 0,
      spectator: false,
      seed: 7,
    };
    const { games, checked, mismatches } = runMesh(v, 200);
    expect(mismatches).toEqual([]);
    expect(checked[0]).toBeGreaterThan(150);
    expect(games[0]!.stats.rollbacks).toBeGreaterThan(0);
    expect(games[0]!.peerStats()[0]!.peer).toBe('player1');
    expect(games[1]!.session.isHost).toBe(false);
    expect(games[0]!.session.isHost).toBe(true);
  });

  const core = () => new TestCore({ players: 4, inputBytes: 2 });
  const base = (): RollbackOptions => ({ core: core(), players: 2, local: 0 });
  /** [option, bad values]: each value, alone in an otherwise valid set, must be refused naming the option. */
  const bad: Array<[keyof RollbackOptions, unknown[]]> = [
    ['core', [undefined, null, {}, { inputBytes: 2 }]],
    ['players', [0, 1, 17, 2.5, Number.NaN, '2', 5]],
    ['local', [-1, 2, 1.5, undefined]],
    ['host', [-1, 2, 0.5]],
    ['clock', [null, 5, {}]],
    ['inputDelay', [-1, 31, 1.5]],
    ['maxPrediction', [-1, 121, 2.5]],
    ['checksumInterval', [-1, 0.5]],
    ['fps', [0, -60, 1001, Number.NaN]],
    ['interruptMs', [-1, Number.POSITIVE_INFINITY]],
    ['disconnectMs', [-1, 100]],
    ['waitInterval', [0, 1.5]],
    ['predictor', [5, 'repeat']],
    ['timeSync', ['yes', 1]],
  ];

  it('invalid option sets throw RollbackError invalid-option naming the option', () => {
    const arb = fc
      .constantFrom(...bad)
      .chain(([name, values]) => fc.tuple(fc.constant(name), fc.constantFrom(...values)))
      .chain(([name, value]) =>
        fc.record({
          name: fc.constant(name),
          value: fc.constant(value),
          players: fc.integer({ min: 2, max: 4 }),
          localPick: fc.nat(),
          delay: fc.integer({ min: 0, max: 30 }),
        }),
      );
    fc.assert(
      fc.property(arb, ({ name, value, players, localPick, delay }) => {
        const options = { ...base(), players, local: localPick % players, inputDelay: delay, [name]: value };
        // `players: 5` is in range but beyond the core's 4 ports; `local: 2` is out of range only for 2 players.
        if (name === 'local' && value === 2 && players > 2) return;
        if (name === 'host' && value === 2 && players > 2) return;
        let error: unknown;
        try {
          rollback(options as RollbackOptions);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(RollbackError);
        const re = error as RollbackError;
        expect(re.code).toBe('invalid-option');
        expect(re.option).toBe(name);
        expect(re.message).toContain(name);
      }),
      { numRuns: 200 },
    );
  });

  it('the chain refuses bad connections and missing slots, naming them', () => {
    const net = new SimulatedNetwork({ seed: 1 });
    const { client } = net.pair('a', 'b', { channels: ROLLBACK_CHANNELS });
    const wrong = net.pair('c', 'd', { channels: [{ name: 'other', kind: 'reliable' }] }).client;
    const named = (fn: () => unknown, option: string) => {
      try {
        fn();
      } catch (e) {
        expect(e).toBeInstanceOf(RollbackError);
        expect((e as RollbackError).code).toBe('invalid-option');
        expect((e as RollbackError).option).toBe(option);
        expect((e as RollbackError).message).toContain(option);
        return;
      }
      throw new Error(`no error for ${option}`);
    };
    named(
      () =>
        rollback({ ...base(), players: 3 })
          .remote(1, client)
          .start(),
      'remote',
    );
    named(() => rollback(base()).remote(0, client), 'remote(0)');
    named(() => rollback(base()).remote(2, client), 'remote(2)');
    named(() => rollback(base()).remote(1, client).remote(1, client), 'remote(1)');
    named(() => rollback(base()).remote(1, wrong), 'remote(1)');
    named(() => rollback({ ...base(), local: 1 }).spectator(client), 'spectator');
    named(() => rollbackSpectator({ core: core() }).start(), 'host');
    named(() => rollbackSpectator({ core: core(), catchUpThreshold: 0 }), 'catchUpThreshold');
    const b = rollback(base()).remote(1, client);
    b.start();
    named(() => b.start(), 'start');
    expect(client).toBeInstanceOf(MemoryConnection);
  });
});

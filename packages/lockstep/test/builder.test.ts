import { decodeMameHubInputPacket } from '@netplay/protocol';
import { TestCore } from '@netplay/state/testing';
import { SimulatedNetwork } from '@netplay/transport';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ClientServerServer,
  decodeFaMessage,
  LockstepError,
  type LockstepGame,
  type LockstepMode,
  type LockstepOptions,
  lockstep,
  lockstepChannels,
} from '../src/index.js';
import {
  equalBytes,
  expectEveryFrame,
  frameChecksums,
  inForce,
  makeScript,
  playScript,
  replayGenerated,
  type Script,
  scriptValue,
  tapSends,
} from './oracle.js';

const F = 20;
const TIMEOUTS = { interruptMs: 100_000, disconnectMs: 1_000_000, connectMs: 100_000 };

interface Valid {
  mode: LockstepMode;
  n: number;
  host: number;
  extraDelayMs: number;
  equalize: boolean;
  latency: number;
  jitter: number;
  loss: number;
  seed: number;
}

const validArb: fc.Arbitrary<Valid> = fc
  .record({
    mode: fc.constantFrom<LockstepMode>('client-server', 'mesh', 'frame-advance'),
    n: fc.integer({ min: 2, max: 4 }),
    hostPick: fc.nat(),
    extraDelayMs: fc.integer({ min: 0, max: 40 }),
    equalize: fc.boolean(),
    latency: fc.integer({ min: 0, max: 60 }),
    jitter: fc.integer({ min: 0, max: 10 }),
    loss: fc.double({ min: 0, max: 0.05, noNaN: true }),
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  })
  .map(({ hostPick, ...v }) => ({ ...v, host: hostPick % v.n }));

/** What each peer stamped its generated inputs with, read from what it sends (the modes' rules, as in their own tests). */
interface Stamps {
  /** mesh: per peer, (future input time, generated value); frame-advance: (frame, key, client) per event. */
  readonly mesh: Array<Array<{ time: number; value: Uint8Array }>>;
  readonly fa: Array<{ frame: number; key: number; client: number; port: number; value: Uint8Array }>;
  readonly violations: string[];
}

/**
 * Builds n peers of `mode` with the builder over a SimulatedNetwork (peer i drives port i; in
 * client-server the host is the server), plays generated input scripts into `tick`, and returns
 * every peer's checksum after each frame together with the offline replay of the generated inputs.
 */
function run(v: Valid) {
  const net = new SimulatedNetwork({ seed: v.seed });
  const link = { latencyMs: v.latency, jitterMs: v.jitter, loss: v.loss };
  const t0 = 1000;
  const names = Array.from({ length: v.n }, (_, i) => `p${i}`);
  const cores = names.map(() => new TestCore({ players: v.n, inputBytes: 1 }));
  const sums = cores.map((c) => frameChecksums(c));
  const builders = names.map((_, i) =>
    lockstep({
      core: cores[i]!,
      mode: v.mode,
      id: i,
      host: v.host,
      clock: net.clock,
      frameMs: F,
      startMs: t0,
      extraDelayMs: v.extraDelayMs,
      equalize: v.equalize,
      seed: v.seed + i,
      liveness: { enabled: false },
    }),
  );
  const until = t0 + 250 * F;
  const scripts: Script[] = names.map((_, i) => makeScript(v.seed + i, 1, F, t0 - 200, until));
  const stamps: Stamps = { mesh: names.map(() => []), fa: [], violations: [] };
  const tapped = new Set<number>();
  for (let i = 0; i < v.n; i++)
    for (let j = i + 1; j < v.n; j++) {
      if (v.mode === 'client-server' && i !== v.host && j !== v.host) continue;
      const { client, server } = net.pair(names[i]!, names[j]!, {
        channels: lockstepChannels(v.mode),
        timeouts: TIMEOUTS,
        waitMs: 100_000,
      });
      net.setLinkBoth(names[i]!, names[j]!, link);
      for (const [me, conn] of [
        [i, client],
        [j, server],
      ] as const) {
        if (tapped.has(me)) continue;
        tapped.add(me);
        tapSends(conn, (channel, data) => {
          const value = scriptValue(scripts[me]!, inForce(scripts[me]!, net.now()), 1);
          if (v.mode === 'mesh' && channel === 'input' && data[0] === 1) {
            const p = decodeMameHubInputPacket(data.subarray(1));
            if (p.state[me]!.currentMask !== value[0])
              stamps.violations.push(`p${me}: packet ${p.inputId} is not the generated input`);
            stamps.mesh[me]!.push({ time: p.futureInputTime, value });
          } else if (v.mode === 'frame-advance' && channel === 'sched' && data[0] === 1) {
            const m = decodeFaMessage(data, 1);
            if (m.type !== 'event') return;
            const e = m.event;
            if (t0 + e.frame * F <= net.now()) stamps.violations.push(`p${me}: event for a frame already started`);
            if (!equalBytes(e.input, value)) stamps.violations.push(`p${me}: event is not the generated input`);
            stamps.fa.push({ frame: e.frame, key: e.key, client: e.client, port: e.port, value });
          }
        });
      }
      builders[i]!.peer(j, client);
      builders[j]!.peer(i, server);
    }
  // Client-server: what the server serves each frame, and when (its public poll).
  const served: Array<{ at: number; inputs: Uint8Array }> = [];
  const games: LockstepGame[] = builders.map((b) => b.start());
  if (v.mode === 'client-server') {
    const server = games[v.host]!.scheduler as ClientServerServer;
    const poll = server.poll.bind(server);
    server.poll = (now: number) => {
      const r = poll(now);
      if (r) served.push({ at: now, inputs: r.inputs.slice() });
      return r;
    };
  }
  for (const [i, g] of games.entries()) playScript(net, { setLocalInput: (x) => g.tick(x) }, scripts[i]!);
  net.clock.advanceTo(until + 3000);
  for (const g of games) g.stop();
  const frames = Math.max(...sums.map((s) => s.length));
  return { games, sums, stamps, served, scripts, frames, net };
}

/** The generated inputs of frame f under each mode's rule, from the stamps (never from a log the scheduler wrote). */
function expectedInputs(v: Valid, r: ReturnType<typeof run>): (f: number) => Uint8Array {
  if (v.mode === 'mesh')
    return (f) => {
      const out = new Uint8Array(v.n);
      for (const [i, st] of r.stamps.mesh.entries()) {
        let val: Uint8Array | undefined;
        for (const s of st) {
          if (s.time > f) break;
          val = s.value;
        }
        if (val) out.set(val, i);
      }
      return out;
    };
  if (v.mode === 'frame-advance') {
    const sorted = [...r.stamps.fa].sort((a, b) => a.frame - b.frame || a.key - b.key || a.client - b.client);
    const current = new Uint8Array(v.n);
    let at = 0;
    return (f) => {
      while (at < sorted.length && sorted[at]!.frame <= f) {
        const e = sorted[at++]!;
        current.set(e.value, e.port);
      }
      return current.slice();
    };
  }
  // Client-server: the server's own port has the value in force when the frame ran; a client's
  // port one of its generated values made before then, never older than the previous frame's.
  const at = new Array<number>(v.n).fill(-1);
  const rows = r.served.map((s) => {
    const row = new Uint8Array(v.n);
    for (let port = 0; port < v.n; port++) {
      const script = r.scripts[port]!;
      let k = inForce(script, s.at);
      if (port !== v.host) {
        let found = -2;
        for (let i = Math.max(at[port]!, -1); i <= k; i++)
          if (equalBytes(scriptValue(script, i, 1), s.inputs.subarray(port, port + 1))) {
            found = i;
            break;
          }
        if (found === -2) r.stamps.violations.push(`port ${port} at ${s.at}: not a generated input in bounds`);
        k = found;
      }
      at[port] = k;
      row.set(scriptValue(script, k, 1), port);
    }
    return row;
  });
  return (f) => rows[f] ?? new Uint8Array(v.n);
}

describe('lockstep() builder', () => {
  it('valid option sets start sessions whose every frame equals an offline replay of the generated inputs', () => {
    fc.assert(
      fc.property(validArb, (v) => {
        const r = run(v);
        const inputsAt = expectedInputs(v, r);
        expect(r.stamps.violations).toEqual([]);
        const replay = replayGenerated(new TestCore({ players: v.n, inputBytes: 1 }), r.frames, inputsAt);
        expectEveryFrame(
          r.sums.map((sums, i) => ({ name: `p${i}`, sums })),
          replay,
          150,
        );
        for (const g of r.games) {
          expect(g.endReason).toBeUndefined();
          expect(g.report().frames).toBe(g.framesRun);
        }
      }),
      { numRuns: 40 },
    );
  });

  const base = (): LockstepOptions => ({ core: new TestCore({ players: 4, inputBytes: 1 }), mode: 'mesh', id: 0 });
  const bad: Array<[keyof LockstepOptions, unknown[]]> = [
    ['core', [undefined, null, {}, new TestCore({ players: 2, inputBytes: 8 })]],
    ['mode', ['rollback', undefined, 3]],
    ['id', [-1, 65536, 1.5, undefined]],
    ['host', [-1, 70000, 0.5]],
    ['port', [-1, 4, 1.5]],
    ['clock', [null, {}]],
    ['frameMs', [0, -16, 1001, Number.NaN]],
    ['startMs', [-1, Number.POSITIVE_INFINITY]],
    ['extraDelayMs', [-1, Number.NaN]],
    ['seed', [1.5, 2 ** 40]],
    ['equalize', ['yes']],
    ['liveness', [5, { interruptMs: -1 }]],
    ['log', [1]],
    ['onFrame', ['x']],
  ];

  it('invalid option sets throw LockstepError invalid-option naming the option', () => {
    const arb = fc
      .constantFrom(...bad)
      .chain(([name, values]) => fc.tuple(fc.constant(name), fc.constantFrom(...values)))
      .chain(([name, value]) =>
        fc.record({
          name: fc.constant(name),
          value: fc.constant(value),
          mode: name === 'core' || name === 'port' ? fc.constant('mesh' as const) : validArb.map((x) => x.mode),
          id: fc.integer({ min: 0, max: 3 }),
        }),
      );
    fc.assert(
      fc.property(arb, ({ name, value, mode, id }) => {
        const options = { ...base(), mode, id, [name]: value } as LockstepOptions;
        let error: unknown;
        try {
          lockstep(options);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(LockstepError);
        expect((error as LockstepError).code).toBe('invalid-option');
        expect((error as LockstepError).option).toBe(name);
        expect((error as LockstepError).message).toContain(name);
      }),
      { numRuns: 200 },
    );
  });

  it('the chain refuses bad peers and missing connections, naming them', () => {
    const net = new SimulatedNetwork({ seed: 1 });
    const mesh = net.pair('a', 'b', { channels: lockstepChannels('mesh') }).client;
    const cs = net.pair('c', 'd', { channels: lockstepChannels('client-server') }).client;
    const named = (fn: () => unknown, option: string) => {
      let error: unknown;
      try {
        fn();
      } catch (e) {
        error = e;
      }
      expect(error, option).toBeInstanceOf(LockstepError);
      expect((error as LockstepError).option).toBe(option);
      expect((error as LockstepError).message).toContain(option);
    };
    named(() => lockstep(base()).peer(0, mesh), 'peer(0)');
    named(() => lockstep(base()).peer(1, mesh).peer(1, mesh), 'peer(1)');
    named(() => lockstep(base()).peer(1, cs), 'peer(1)');
    named(() => lockstep(base()).peer(1, mesh, 0), 'peer(1)');
    named(() => lockstep(base()).peer(9, mesh), 'peer(9)');
    named(() => lockstep(base()).start(), 'peer');
    named(
      () =>
        lockstep({ ...base(), id: 1 })
          .peer(2, mesh)
          .start(),
      'peer',
    );
    named(() => lockstep({ ...base(), mode: 'client-server', id: 1 }).peer(2, cs), 'peer(2)');
    named(() => lockstep({ ...base(), mode: 'client-server', id: 1, port: 1 }), 'port');
  });
});

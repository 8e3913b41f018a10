/**
 * The transport conformance suite: `@netplay/transport/conformance`.
 *
 * A transport passes by running {@link defineTransportConformance} in its own tests with a
 * {@link ConformanceHarness} that creates connected pairs. The suite is runner-agnostic: it takes
 * `describe` and `it` from the caller (vitest's fit as they are) and throws
 * {@link ConformanceFailure} on a violation, so this package does not depend on any test runner.
 *
 * ```ts
 * import { describe, it } from 'vitest';
 * import { defineTransportConformance } from '@netplay/transport/conformance';
 * defineTransportConformance(myHarness, { describe, it });
 * ```
 * @packageDocumentation
 */
import { truncateCloseReason } from './channels.js';
import type { ChannelSpec, CloseEvent, Connection, MessageEvent, Timeouts } from './contract.js';
import { TransportError } from './errors.js';
import { Prng } from './prng.js';
import type { RateLimits } from './rate-budget.js';

export {
  isNodeBuiltin,
  type ModuleGraph,
  type ModuleGraphOptions,
  moduleSpecifiers,
  NODE_GLOBALS,
  nodeGlobalUsers,
  stripComments,
  walkModuleGraph,
  workspaceSourceResolver,
} from './module-graph.js';

/** The part of a test runner the suite needs (vitest, jest and mocha fit structurally). */
export interface ConformanceTestApi {
  /** Groups the tests `body` registers under `name`. */
  describe(name: string, body: () => void): void;
  /** Registers one asynchronous test; `timeoutMs` is how long it may take. */
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
}

/** Network impairment a harness can apply to both directions of a pair. */
export interface Impairment {
  /** Probability (0–1) that a packet is lost. */
  readonly loss?: number;
  /** Probability (0–1) that a packet is delivered twice. */
  readonly duplicate?: number;
  /** Probability (0–1) that a packet is held back and overtaken by later ones. */
  readonly reorder?: number;
  /** One-way base latency in ms. */
  readonly latencyMs?: number;
  /** Extra random one-way delay in ms, uniform in [0, jitterMs]. */
  readonly jitterMs?: number;
}

/** What the suite asks the harness for when it needs a pair. */
export interface PairOptions {
  /** The channels both ends must declare, in this order. */
  readonly channels: readonly ChannelSpec[];
  /** Liveness timeouts for both ends. */
  readonly timeouts: Timeouts;
  /**
   * The per-peer message and byte budget for both ends (see `RateBudget`); absent: the transport's
   * defaults. A peer over its budget is closed with error code `flood`.
   */
  readonly rateLimits?: RateLimits;
}

/** A connected client/server pair made by a harness. */
export interface ConformancePair {
  /** The client end, already `open`. */
  readonly client: Connection;
  /** The server end (from the listener's `connection` event), already `open`. */
  readonly server: Connection;
  /**
   * Lets the transport run until `predicate()` holds or `budgetMs` of transport time passed;
   * resolves to whether the predicate holds. Virtual-time transports step their clock; real ones
   * poll (see {@link pollUntil}).
   */
  until(predicate: () => boolean, budgetMs: number): Promise<boolean>;
  /**
   * Applies `impairment` to both directions (replacing any earlier one). Optional: a transport that
   * cannot be impaired (e.g. over TCP) omits it and the loss tests then run on a clean network.
   */
  impair?(impairment: Impairment): void;
  /** Makes every packet in both directions disappear from now on (a pulled cable). */
  cut(): void;
  /** Releases sockets, listeners and timers. Called after each test, pass or fail. */
  dispose(): Promise<void>;
}

/** What a transport provides to run the suite. */
export interface ConformanceHarness {
  /** Name shown in the test titles. */
  readonly name: string;
  /** Creates a connected pair with the given channels and timeouts. */
  pair(options: PairOptions): Promise<ConformancePair>;
  /** Per-test timeout passed to `it`, in wall ms (default 60 000). */
  readonly testTimeoutMs?: number;
}

/** Thrown by the suite when a transport breaks the contract. */
export class ConformanceFailure extends Error {
  /** Always `'ConformanceFailure'`, so test reports name the suite's own failures apart from crashes. */
  override readonly name = 'ConformanceFailure';
  /** Always `'conformance'`: the one code of this error; the message names the rule that was broken. */
  readonly code = 'conformance';
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new ConformanceFailure(message);
}

/**
 * A {@link ConformancePair.until} for real-time transports: polls `predicate` every `intervalMs`
 * of wall time (through the host's `setTimeout`) until it holds or `budgetMs` passed.
 */
export async function pollUntil(predicate: () => boolean, budgetMs: number, intervalMs = 2): Promise<boolean> {
  const deadline = performance.now() + budgetMs;
  while (!predicate()) {
    if (performance.now() >= deadline) return predicate();
    await new Promise<void>((resolve) => setTimeout(resolve, intervalMs));
  }
  return true;
}

const CHANNELS: readonly ChannelSpec[] = [
  { name: 'control', kind: 'reliable' },
  { name: 'bulk', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];
// Generous enough that a loaded CI machine stalling the event loop for a few hundred ms does not
// look like an outage to real-time transports.
const TIMEOUTS: Timeouts = { interruptMs: 500, disconnectMs: 2000, connectMs: 3000 };

interface Recorder {
  readonly messages: Map<string, Uint8Array[]>;
  closed: CloseEvent | undefined;
  interruptedAt: number;
  events: string[];
}

function record(conn: Connection): Recorder {
  const r: Recorder = { messages: new Map(), closed: undefined, interruptedAt: -1, events: [] };
  conn.on('message', (m: MessageEvent) => {
    const list = r.messages.get(m.channel);
    if (list) list.push(m.data);
    else r.messages.set(m.channel, [m.data]);
  });
  conn.on('interrupted', () => {
    r.events.push('interrupted');
  });
  conn.on('resumed', () => {
    r.events.push('resumed');
  });
  conn.on('close', (e) => {
    r.events.push('close');
    r.closed = e;
  });
  return r;
}

function count(r: Recorder, channel: string): number {
  return r.messages.get(channel)?.length ?? 0;
}

/** A message whose first 4 bytes are its sequence number and the rest is seeded noise. */
function makeMessage(prng: Prng, seq: number, size: number): Uint8Array {
  const m = new Uint8Array(Math.max(4, size));
  prng.fill(m);
  new DataView(m.buffer).setUint32(0, seq);
  return m;
}

function seqOf(m: Uint8Array): number {
  check(m.length >= 4, `a message of ${m.length} bytes arrived where at least 4 were sent`);
  return new DataView(m.buffer, m.byteOffset, m.byteLength).getUint32(0);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function expectTransportError(fn: () => void, code: string, what: string): void {
  try {
    fn();
  } catch (e) {
    check(e instanceof TransportError, `${what}: threw ${String(e)} instead of a TransportError`);
    check(e.code === code, `${what}: TransportError code ${e.code}, expected ${code}`);
    return;
  }
  throw new ConformanceFailure(`${what}: did not throw`);
}

/**
 * Registers the conformance tests for `harness` with the runner's `describe`/`it`.
 * Every test makes its own pair and disposes it.
 */
export function defineTransportConformance(harness: ConformanceHarness, api: ConformanceTestApi): void {
  const timeout = harness.testTimeoutMs ?? 60_000;
  const withPair = (
    name: string,
    body: (pair: ConformancePair) => Promise<void>,
    timeouts: Timeouts = TIMEOUTS,
    rateLimits?: RateLimits,
  ): void => {
    api.it(
      name,
      async () => {
        const pair = await harness.pair(
          rateLimits === undefined ? { channels: CHANNELS, timeouts } : { channels: CHANNELS, timeouts, rateLimits },
        );
        try {
          check(pair.client.state === 'open', `client state is ${pair.client.state}, expected open`);
          check(pair.server.state === 'open', `server state is ${pair.server.state}, expected open`);
          await body(pair);
        } finally {
          await pair.dispose();
        }
      },
      timeout,
    );
  };

  api.describe(`transport conformance: ${harness.name}`, () => {
    withPair('declares the agreed channels and sane limits', async ({ client, server }) => {
      for (const c of [client, server]) {
        check(c.channels.length === CHANNELS.length, 'channel count differs from the requested list');
        CHANNELS.forEach((spec, i) => {
          check(c.channels[i]?.name === spec.name && c.channels[i]?.kind === spec.kind, `channel ${i} differs`);
        });
        check(c.limits.maxMessageBytes >= 2 << 20, 'maxMessageBytes must be at least 2 MiB');
        check(c.limits.maxUnreliableBytes >= 256, 'maxUnreliableBytes must be at least 256');
      }
    });

    withPair('reliable channels deliver everything, once, in order, under loss, both ways', async (pair) => {
      pair.impair?.({ loss: 0.1, duplicate: 0.05, reorder: 0.1, latencyMs: 5, jitterMs: 5 });
      const prng = new Prng(0x5eed);
      const n = 200;
      const sent = new Map<string, Uint8Array[]>();
      const rc = record(pair.client);
      const rs = record(pair.server);
      const scratch = new Uint8Array(5000);
      for (let i = 0; i < n; i++) {
        for (const [from, tag] of [
          [pair.client, 'c'],
          [pair.server, 's'],
        ] as const) {
          const channel = prng.chance(0.5) ? 'control' : 'bulk';
          const size = prng.int(4, channel === 'bulk' ? 5000 : 200);
          const m = makeMessage(prng, i, size);
          const key = `${tag}:${channel}`;
          const list = sent.get(key);
          if (list) list.push(m);
          else sent.set(key, [m]);
          // Send from a scratch buffer and scribble over it: the transport must have copied it.
          scratch.set(m);
          from.send(channel, scratch.subarray(0, m.length));
          scratch.fill(0xee, 0, m.length);
        }
      }
      const total = (tag: string) => (sent.get(`${tag}:control`)?.length ?? 0) + (sent.get(`${tag}:bulk`)?.length ?? 0);
      const ok = await pair.until(
        () =>
          count(rs, 'control') + count(rs, 'bulk') >= total('c') &&
          count(rc, 'control') + count(rc, 'bulk') >= total('s'),
        30_000,
      );
      check(ok, 'not every reliable message arrived within 30 s');
      await pair.until(() => false, 200); // late duplicates would show up now
      for (const [tag, rec] of [
        ['c', rs],
        ['s', rc],
      ] as const) {
        for (const channel of ['control', 'bulk']) {
          const want = sent.get(`${tag}:${channel}`) ?? [];
          const got = rec.messages.get(channel) ?? [];
          check(got.length === want.length, `${tag}:${channel}: ${got.length} messages arrived, ${want.length} sent`);
          for (let i = 0; i < want.length; i++) {
            check(sameBytes(got[i]!, want[i]!), `${tag}:${channel}: message ${i} differs or is out of order`);
          }
        }
      }
    });

    withPair('unreliable channels never deliver a stale message or a duplicate', async (pair) => {
      pair.impair?.({ loss: 0.1, duplicate: 0.2, reorder: 0.3, latencyMs: 5, jitterMs: 10 });
      const prng = new Prng(77);
      const rs = record(pair.server);
      const sent: Uint8Array[] = [];
      for (let i = 0; i < 300; i++) {
        const m = makeMessage(prng, i, prng.int(4, 200));
        sent.push(m);
        pair.client.send('state', m);
        if (i % 10 === 9) await pair.until(() => false, 2);
      }
      await pair.until(() => false, 500);
      const got = rs.messages.get('state') ?? [];
      check(got.length > 0, 'no unreliable message arrived at all');
      let last = -1;
      for (const m of got) {
        const seq = seqOf(m);
        check(seq > last, `unreliable message ${seq} arrived after ${last}`);
        check(seq < sent.length && sameBytes(m, sent[seq]!), `unreliable message ${seq} is corrupted`);
        last = seq;
      }
    });

    withPair('messages of 1 MiB and more arrive whole on reliable channels', async (pair) => {
      pair.impair?.({ loss: 0.02, latencyMs: 2, jitterMs: 2 });
      const prng = new Prng(1 << 20);
      const big1 = makeMessage(prng, 1, (1 << 20) + 1);
      const big2 = makeMessage(prng, 2, (1 << 20) + 4321);
      const rc = record(pair.client);
      const rs = record(pair.server);
      pair.client.send('bulk', big1);
      pair.client.send('control', makeMessage(prng, 3, 16));
      pair.server.send('bulk', big2);
      const ok = await pair.until(() => count(rs, 'bulk') >= 1 && count(rc, 'bulk') >= 1, 30_000);
      check(ok, 'a large message did not arrive within 30 s');
      check(sameBytes(rs.messages.get('bulk')![0]!, big1), 'the 1 MiB + 1 message arrived damaged');
      check(sameBytes(rc.messages.get('bulk')![0]!, big2), 'the 1 MiB + 4321 message arrived damaged');
      await pair.until(() => count(rs, 'control') >= 1, 5_000);
      check(count(rs, 'control') === 1, 'the small message sent beside the large one did not arrive');
    });

    withPair('close reasons reach the peer, after the messages sent before them', async (pair) => {
      const rc = record(pair.client);
      const rs = record(pair.server);
      const last = new Uint8Array([1, 2, 3, 4, 5]);
      pair.client.send('control', last);
      pair.client.close('game over: player 2 wins ✓');
      await pair.until(() => rc.closed !== undefined && rs.closed !== undefined, 10_000);
      check(rc.closed?.code === 'local', `client close code ${rc.closed?.code}, expected local`);
      check(rs.closed?.code === 'remote', `server close code ${rs.closed?.code}, expected remote`);
      check(rs.closed?.reason === 'game over: player 2 wins ✓', `server saw reason "${rs.closed?.reason}"`);
      check(count(rs, 'control') === 1 && sameBytes(rs.messages.get('control')![0]!, last), 'last message lost');
      check(pair.client.state === 'closed' && pair.server.state === 'closed', 'states are not closed');
      expectTransportError(() => pair.client.send('control', last), 'closed', 'send after close');
      expectTransportError(() => pair.server.send('control', last), 'closed', 'send on a remotely closed connection');
      pair.client.close('again'); // idempotent
      check(rc.events.filter((e) => e === 'close').length === 1, 'close fired more than once');
    });

    withPair('a long close reason from the server is truncated the same way everywhere', async (pair) => {
      const rc = record(pair.client);
      const long = `${'é'.repeat(59)}xyz${'ü'.repeat(40)}`;
      pair.server.close(long);
      await pair.until(() => rc.closed !== undefined, 10_000);
      check(rc.closed?.code === 'remote', `client close code ${rc.closed?.code}, expected remote`);
      check(rc.closed?.reason === truncateCloseReason(long), `client saw reason "${rc.closed?.reason}"`);
    });

    withPair('stats move', async (pair) => {
      const before = { ...pair.client.stats };
      const rc = record(pair.client);
      const rs = record(pair.server);
      for (let i = 0; i < 20; i++) {
        pair.client.send('control', new Uint8Array(100));
        pair.server.send('bulk', new Uint8Array(100));
      }
      const ok = await pair.until(
        () =>
          count(rs, 'control') === 20 &&
          count(rc, 'bulk') === 20 &&
          pair.client.stats.sendQueueLength === 0 &&
          pair.server.stats.sendQueueLength === 0 &&
          pair.client.stats.rttSamples > 0,
        10_000,
      );
      check(ok, 'messages not delivered, queue not drained or no RTT sample within 10 s');
      const s = pair.client.stats;
      check(s.bytesSent >= before.bytesSent + 2000, 'bytesSent did not grow by the payload sent');
      check(s.bytesReceived >= before.bytesReceived + 2000, 'bytesReceived did not grow by the payload received');
      check(s.packetsSent > before.packetsSent && s.packetsReceived > before.packetsReceived, 'packet counters');
      check(Number.isFinite(s.rttMs) && s.rttMs >= 0 && s.rttVarMs >= 0, 'RTT estimate is not a finite number');
      check(s.lossRate >= 0 && s.lossRate <= 1, 'lossRate outside [0, 1]');
      check(s.sendQueueBytes === 0, 'sendQueueBytes not 0 with an empty queue');
    });

    withPair('sending validates channel, size and state', async ({ client }) => {
      expectTransportError(() => client.send('nope', new Uint8Array(1)), 'unknown-channel', 'unknown channel');
      expectTransportError(
        () => client.send('state', new Uint8Array(client.limits.maxUnreliableBytes + 1)),
        'too-large',
        'oversized unreliable message',
      );
      expectTransportError(
        () => client.send('bulk', new Uint8Array(client.limits.maxMessageBytes + 1)),
        'too-large',
        'oversized reliable message',
      );
      check(client.state === 'open', 'a rejected send must not close the connection');
    });

    withPair('keepalives hold an idle connection open', async (pair) => {
      const rc = record(pair.client);
      const rs = record(pair.server);
      await pair.until(() => false, TIMEOUTS.disconnectMs * 2);
      check(rc.events.length === 0 && rs.events.length === 0, `idle pair saw events: ${rc.events} / ${rs.events}`);
      check(pair.client.state === 'open' && pair.server.state === 'open', 'idle pair closed');
    });

    withPair(
      'a peer over its message budget is closed with flood; one within it is not',
      async (pair) => {
        const rc = record(pair.client);
        const rs = record(pair.server);
        // Within budget: a burst of 40 messages (the bucket holds 50), then a pause.
        for (let i = 0; i < 40; i++) pair.client.send('control', new Uint8Array(16));
        const within = await pair.until(() => count(rs, 'control') === 40, 10_000);
        check(within, `${count(rs, 'control')} of 40 messages within the budget arrived`);
        check(rs.closed === undefined && rc.closed === undefined, 'a peer within its budget was closed');
        // Far past it: 2,000 messages at once.
        for (let i = 0; i < 2000 && pair.client.state === 'open'; i++) pair.client.send('control', new Uint8Array(16));
        const ok = await pair.until(() => rs.closed !== undefined && rc.closed !== undefined, 10_000);
        check(ok, 'the flooding peer was not disconnected within 10 s');
        // Read again: the checks above narrowed the fields to undefined.
        const sc = rs.closed as CloseEvent | undefined;
        const cc = rc.closed as CloseEvent | undefined;
        check(sc?.code === 'error', `server close code ${sc?.code}, expected error`);
        check(sc?.error?.code === 'flood', `server close error code ${sc?.error?.code}, expected flood`);
        check(cc?.code === 'remote', `client close code ${cc?.code}, expected remote`);
        check(cc?.reason.startsWith('flood') === true, `client saw reason "${cc?.reason}"`);
        check(count(rs, 'control') < 2040, 'every flooded message was delivered: the budget was not applied');
      },
      TIMEOUTS,
      { messagesPerSecond: 50, bytesPerSecond: 1 << 20, burstSeconds: 1 },
    );

    withPair('timeouts fire: interrupted, then close with code timeout, on both ends', async (pair) => {
      const rc = record(pair.client);
      const rs = record(pair.server);
      pair.cut();
      const ok = await pair.until(() => rc.closed !== undefined && rs.closed !== undefined, TIMEOUTS.disconnectMs * 4);
      check(ok, 'no close within 4 × disconnectMs of silence');
      for (const [side, r] of [
        ['client', rc],
        ['server', rs],
      ] as const) {
        check(r.events[0] === 'interrupted', `${side}: first event ${r.events[0]}, expected interrupted`);
        check(r.closed?.code === 'timeout', `${side}: close code ${r.closed?.code}, expected timeout`);
        check(r.closed?.error?.code === 'timeout', `${side}: close error code ${r.closed?.error?.code}`);
      }
    });
  });
}

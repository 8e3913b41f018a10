/**
 * Host CPU while one spectator floods it, with and without the session host's rate limit, as a
 * ratio to an idle host in the same run. A rollback game (host + one player over the simulated
 * network, 60 fps, 5 game seconds) runs in each case; the flooder is a spectator whose connection
 * hands the host 190,000 messages of 40 bytes per game second on `rb-control` (the rate seen in
 * issue 13: 1.9 M messages in 10 s) for as long as it stays connected. The transports' own budgets
 * are off, so only the session host's limit (`rateLimits`, default 4,000 messages/s, burst 2 s)
 * can stop it. Figures: wall time of the whole loop per game second (one thread: host, player and
 * simulator), median of 3 interleaved runs, and its ratio to the idle run (lower is better; 1.0 =
 * as cheap as idle).
 */
import { BenchSuite } from '@netplay/bench-kit';
import { TestCore } from '@netplay/state/testing';
import {
  type ChannelSpec,
  type CloseEvent,
  type ConnectionEventMap,
  type ConnectionState,
  Emitter,
  type Handler,
  MutableConnectionStats,
  Prng,
  SimulatedNetwork,
  type Unsubscribe,
} from '@netplay/transport';
import {
  type ContentInfo,
  encodeHello,
  encodeInfo,
  NetplayClient,
  NetplayHost,
  SESSION_CHANNELS,
  SESSION_CONTROL_CHANNEL,
} from '../src/index.js';

const CONTENT: ContentInfo = { coreId: 'test-core', coreVersion: '1.0.0', contentHash: '00112233aabbccdd' };
const FRAME_MS = 1000 / 60;
const SECONDS = 5;
const FLOOD_PER_SECOND = 190_000;

/** A connection whose peer is this bench: `deliver` hands the host a message at once; what the host sends is dropped. */
class BenchConnection {
  readonly channels: readonly ChannelSpec[] = SESSION_CHANNELS;
  readonly limits = { maxMessageBytes: 1 << 24, maxUnreliableBytes: 1200 };
  readonly stats = new MutableConnectionStats();
  private readonly emitter = new Emitter<ConnectionEventMap>();
  private open = true;
  constructor(readonly remoteAddress: string) {}
  get state(): ConnectionState {
    return this.open ? 'open' : 'closed';
  }
  on<K extends keyof ConnectionEventMap>(type: K, handler: Handler<ConnectionEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }
  send(_channel: string, _data: Uint8Array): void {}
  close(reason = ''): void {
    if (!this.open) return;
    this.open = false;
    const e: CloseEvent = { code: 'local', reason };
    this.emitter.emit('close', e);
  }
  deliver(channel: string, data: Uint8Array): void {
    if (this.open) this.emitter.emit('message', { channel, data });
  }
}

function run(flood: 'none' | 'limited' | 'unlimited'): { msPerSecond: number; delivered: number } {
  const net = new SimulatedNetwork({ seed: 1, link: { latencyMs: 5, jitterMs: 0, loss: 0 } });
  const salt = new Prng(7);
  const host = new NetplayHost({
    core: new TestCore({ players: 2, seed: 7 }),
    content: CONTENT,
    clock: net.clock,
    randomU32: () => salt.nextU32(),
    fps: 60,
    maxSpectators: 2,
    ...(flood === 'unlimited' ? { rateLimits: false as const } : {}),
  });
  host.listen(net.listen('host', { channels: SESSION_CHANNELS, rateLimits: false }));
  const alice = new NetplayClient(net.connect('alice', 'host', { channels: SESSION_CHANNELS, rateLimits: false }), {
    core: new TestCore({ players: 2, seed: 7 }),
    content: CONTENT,
    clock: net.clock,
    nick: 'alice',
    fps: 60,
  });
  net.runUntil(() => alice.state === 'playing', 2000);
  const evil = new BenchConnection('evil:1');
  host.accept(evil);
  evil.deliver(SESSION_CONTROL_CHANNEL, encodeHello({ spectate: true, nick: 'evil' }));
  evil.deliver(SESSION_CONTROL_CHANNEL, encodeInfo({ passwordHash: new Uint8Array(0), ...CONTENT }));
  if (host.peerList().find((p) => p.nick === 'evil')?.stage !== 'spectating') throw new Error('flooder not admitted');
  const input = new Uint8Array(2);
  const junk = new Uint8Array(40);
  const perFrame = Math.round(FLOOD_PER_SECOND / 60);
  let delivered = 0;
  const frames = SECONDS * 60;
  const t0 = performance.now();
  for (let f = 0; f < frames; f++) {
    input[0] = f & 0xff;
    host.tick(input);
    alice.tick(input);
    if (flood !== 'none' && evil.state === 'open') {
      for (let k = 0; k < perFrame && evil.state === 'open'; k++) {
        evil.deliver('rb-control', junk);
        delivered++;
      }
    }
    net.advance(FRAME_MS);
  }
  const ms = performance.now() - t0;
  if (alice.state !== 'playing' || host.frame < frames - 10) throw new Error('the game did not go on');
  return { msPerSecond: ms / SECONDS, delivered };
}

/** Median of `ROUNDS` runs of each case, interleaved so that machine load hits every case alike. */
const ROUNDS = 3;
const cases = ['none', 'unlimited', 'limited'] as const;
const samples = new Map<(typeof cases)[number], Array<{ msPerSecond: number; delivered: number }>>();
run('none'); // warm-up
for (let r = 0; r < ROUNDS; r++) for (const c of cases) samples.set(c, [...(samples.get(c) ?? []), run(c)]);
const median = (c: (typeof cases)[number]): { msPerSecond: number; delivered: number } => {
  const s = [...(samples.get(c) ?? [])].sort((a, b) => a.msPerSecond - b.msPerSecond);
  return s[Math.floor(s.length / 2)]!;
};

const suite = new BenchSuite('session/flood');
const idle = median('none');
suite.record({ name: 'idle host (ms per game second)', value: idle.msPerSecond, unit: 'ms/s', note: 'baseline' });
const unlimited = median('unlimited');
suite.record({
  name: 'flooded, rateLimits: false',
  value: unlimited.msPerSecond,
  unit: 'ms/s',
  baseline: 'idle host (ms per game second)',
  note: `${unlimited.delivered} messages handled`,
});
const limited = median('limited');
suite.record({
  name: 'flooded, default rate limit',
  value: limited.msPerSecond,
  unit: 'ms/s',
  baseline: 'idle host (ms per game second)',
  note: `${limited.delivered} messages handled, then disconnected (flood)`,
});
suite.finish();

/**
 * Issue 16, lockstep late join: what `ClientServerServer` (and `WatcherStream`) do to bring a
 * joiner in, on a 16 MiB state with 1 % of its 4 KiB pages changed since power-on (16 bytes in
 * each). Baseline, measured in the same run: the old path, `pageDelta(initial, state)` of
 * @netplay/state (hashes the whole base and state, compares every page). Rows: the server's
 * late-join delta now (`DeltaBase`: the base's pages hashed once, on the first join) without a
 * dirty-page set (compares every page, hashes nothing whole) and with the core's `pageTracker`
 * pages (what the runner hands `storeState`), and the first join, which builds the `DeltaBase`.
 * The mesh rows: a `MeshPeer` host admitting a candidate (hello, every member's report, the join
 * notice, the acceptance with the delta of its sync block, its inputs since). Every figure is the
 * time of one join, as a speed ratio to the baseline (higher is better).
 */
import { BenchSuite } from '@netplay/bench-kit';
import { ByteReader } from '@netplay/protocol';
import { applyDelta, PageTracker, pageDelta } from '@netplay/state';
import { ClientServerServer, MeshPeer } from '../src/index.js';
import { readAccepted } from '../src/mesh-join.js';

const suite = new BenchSuite('lockstep/late-join');
const MiB = 1 << 20;
const SIZE = 16 * MiB;
const PAGE = 4096;
const pages = SIZE / PAGE;

function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Median ms of one call over `runs` runs. */
function msPerCall(fn: () => void, runs = 5): number {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = now();
    fn();
    times.push(now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)]!;
}

// The power-on state: pseudo-random bytes (a real machine's RAM is not all zeros).
const initial = new Uint8Array(SIZE);
let s = 1;
for (let i = 0; i < SIZE; i++) {
  s ^= s << 13;
  s ^= s >>> 17;
  s ^= s << 5;
  initial[i] = s & 0xff;
}
const current = initial.slice();
const tracker = new PageTracker(SIZE, PAGE);
const mark = tracker.checkpoint();
for (let n = 0, p = 7; n < pages / 100; n++, p = (p * 7919 + 13) % pages) {
  for (let k = 0; k < 16; k++) current[p * PAGE + ((k * 257) % PAGE)]! ^= 0x5a + k;
  tracker.mark(p * PAGE, PAGE);
}
const dirty = tracker.since(mark);

/** Something that admits one late joiner per call and returns the page delta it sent (against `initial`). */
interface Joiner {
  join(withDirty: boolean): Uint8Array;
}

/** A server holding `initial` as its power-on state, and one late join of a watcher through it. */
function server(): Joiner {
  const srv = new ClientServerServer({ id: 0, ports: 2, inputBytes: 1, frameMs: 1000 / 60, pageSize: PAGE });
  srv.storeState(0, initial);
  let id = 100;
  return {
    join(withDirty) {
      const peer = id++;
      srv.addWatcher(peer);
      srv.storeState(srv.nextFrame, current, withDirty ? dirty : undefined);
      const sync = srv.outbox.find((e) => e.channel === 'sync' && e.to === peer)!.data;
      while (srv.outbox.length > 0) srv.outbox.pop();
      srv.removeWatcher(peer);
      return sync.subarray(4);
    },
  };
}

let old: Uint8Array = new Uint8Array(0);
const oldMs = msPerCall(() => {
  old = pageDelta(initial, current, { layoutHash: 0n, pageSize: PAGE });
});
const baseline = 'old path: pageDelta(initial, state), 16 MiB, 1 % pages';
suite.record({
  name: baseline,
  value: SIZE / 1e6 / (oldMs / 1000),
  unit: 'MB/s',
  note: `${oldMs.toFixed(1)} ms; ${old.length} bytes`,
});

const first = server();
const t0 = now();
first.join(false);
const firstMs = now() - t0;
suite.record({
  name: 'first late join (builds the DeltaBase: hashes the base once)',
  value: oldMs / firstMs,
  unit: '× baseline speed',
  note: `${firstMs.toFixed(1)} ms`,
});

/**
 * The rows `${label}, DeltaBase, every page compared` and `..., dirty pages from the core
 * pageTracker`: the median time of one join through `joiner` (already past its first join), as a
 * speed ratio to the baseline, after checking that the joiner rebuilds the same state from its delta.
 */
function recordJoins(label: string, joiner: Joiner): void {
  for (const [name, withDirty] of [
    [`${label}, DeltaBase, every page compared`, false],
    [`${label}, DeltaBase, dirty pages from the core pageTracker`, true],
  ] as const) {
    let bytes: Uint8Array = new Uint8Array(0);
    const ms = msPerCall(() => {
      bytes = joiner.join(withDirty);
    });
    // The joiner rebuilds the same state from it.
    const back = applyDelta(initial, bytes, { layoutHash: 0n, maxTargetBytes: SIZE });
    if (back.length !== SIZE || back.some((b, i) => b !== current[i])) throw new Error(`${name}: wrong state`);
    suite.record({
      name,
      value: oldMs / ms,
      unit: '× baseline speed',
      note: `${ms.toFixed(1)} ms; ${bytes.length} bytes (old path ${old.length})`,
    });
  }
}

const srv = server();
srv.join(false);
recordJoins('late join', srv);

/**
 * A mesh host (ports for every joiner) holding `initial` as its power-on state: each join admits a
 * new candidate (the earlier ones are members and report for it) with `current` as the sync block.
 */
function meshHost(): Joiner {
  const host = new MeshPeer({
    id: 0,
    members: [{ id: 0, port: 0 }],
    ports: 255,
    inputBytes: 1,
    frameMs: 16,
    syncIntervalFrames: 1,
    neutralFrames: 1_000_000,
    pageSize: PAGE,
  });
  host.storeState(0, initial);
  let cand = 100;
  const members: number[] = [];
  const report = new Uint8Array(6);
  return {
    join(withDirty) {
      const id = cand++;
      host.storeState(host.nextFrame, current, withDirty ? dirty : undefined);
      const hello = new Uint8Array(5 + 3);
      hello[0] = 1;
      new DataView(hello.buffer).setUint32(1, id);
      hello.set([49, 48, 48], 5);
      host.receive(id, 'join', hello, 0);
      report[0] = 3;
      new DataView(report.buffer).setUint32(1, id);
      report[5] = 1;
      for (const m of members) host.receive(m, 'join', report, 0);
      host.poll(1e12);
      const acc = host.outbox.find((e) => e.channel === 'join' && e.to === id && e.data[0] === 4)!.data;
      host.outbox.length = 0;
      members.push(id);
      return readAccepted(new ByteReader(acc, 1)).delta;
    },
  };
}

const mh = meshHost();
mh.join(false);
recordJoins('mesh late join', mh);
suite.finish();

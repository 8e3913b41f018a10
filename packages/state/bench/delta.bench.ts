// Late-join deltas of a 128 MiB state with 1 % of its 4 KiB pages changed. Every time is a ratio
// to the baseline of the same run: XOR of the whole state with the base, then node:zlib level 6
// (what seed 000 describes, with the fastest deflate this platform has). Rows: MAMEHub's
// xorDelta (pako), our version 1 pageDelta (two whole-state hashes + compare), and DeltaBase
// (version 2, paged hashes) by full compare or with a dirty-page set, with pako, node:zlib and
// CompressionStream. Bytes and apply times follow.
import { deflateSync } from 'node:zlib';
import { BenchSuite } from '@netplay/bench-kit';
import {
  applyDelta,
  compressionStreamDeflate,
  DeltaBase,
  hash64,
  PageTracker,
  pageDelta,
  pageHashesInto,
  xorDelta,
} from '../src/index.js';
import { nodeDeflate, nodeRangeCompare } from '../src/node.js';
import { fillPseudoRandom, msPerCall } from './timing.js';

const suite = new BenchSuite('state/delta');
const MiB = 1 << 20;
const SIZE = 128 * MiB;
const PAGE = 4096;
const pages = SIZE / PAGE;
const changedPages = Math.round(pages / 100);

const base = new Uint8Array(SIZE);
fillPseudoRandom(base, 1);
const xorBuffer = new Uint8Array(SIZE);

/** Picks `changedPages` distinct pages with a seeded generator. */
function pickPages(seed: number): number[] {
  const chosen = new Set<number>();
  let s = seed;
  while (chosen.size < changedPages) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    chosen.add((s >>> 0) % pages);
  }
  return [...chosen].sort((a, b) => a - b);
}

const scenarios: [string, string, number[], (x: Uint8Array, p: number) => void][] = [
  [
    'sparse',
    '16 bytes changed in each changed page',
    pickPages(7),
    (x, p) => {
      for (let k = 0; k < 16; k++) x[p * PAGE + ((k * 257) % PAGE)]! ^= 0x5a + k;
    },
  ],
  [
    'dense',
    'every byte of each changed page rewritten',
    pickPages(11),
    (x, p) => fillPseudoRandom(x.subarray(p * PAGE, (p + 1) * PAGE), p + 3),
  ],
];

/** Baseline: XOR of the whole state into a preallocated buffer, then node:zlib level 6. */
function xorZlib(a: Uint8Array, b: Uint8Array): Uint8Array {
  const wa = new Int32Array(a.buffer, a.byteOffset, a.length >>> 2);
  const wb = new Int32Array(b.buffer, b.byteOffset, b.length >>> 2);
  const wo = new Int32Array(xorBuffer.buffer, 0, a.length >>> 2);
  for (let i = 0; i < wo.length; i++) wo[i] = wa[i]! ^ wb[i]!;
  return deflateSync(xorBuffer, { level: 6 });
}

const layoutHash = 0x1234n;
const mbps = (ms: number) => SIZE / 1e6 / (ms / 1000);
const t0 = Number(process.hrtime.bigint()) / 1e6;
const deltaBase = new DeltaBase(base, { layoutHash });
const baseMs = Number(process.hrtime.bigint()) / 1e6 - t0;
suite.record({
  name: 'new DeltaBase 128 MiB (once per base)',
  value: mbps(baseMs),
  unit: 'MB/s',
  note: `${baseMs.toFixed(0)} ms: hashes every page of the base once`,
});

for (const [tag, label, chosen, mutate] of scenarios) {
  const current = base.slice();
  const tracker = new PageTracker(SIZE, PAGE);
  const mark = tracker.checkpoint();
  for (const p of chosen) {
    mutate(current, p);
    tracker.mark(p * PAGE, PAGE);
  }
  const dirty = tracker.since(mark);
  let zd: Uint8Array = new Uint8Array(0);
  const zMs = msPerCall(() => {
    zd = xorZlib(base, current);
  }, 3);
  const baseline = `XOR + node:zlib 128 MiB, ${tag}`;
  suite.record({ name: baseline, value: mbps(zMs), unit: 'MB/s', note: `${zMs.toFixed(0)} ms; ${label}; baseline` });
  const row = (name: string, ms: number, note: string) =>
    suite.record({
      name: `${name}, ${tag}`,
      value: zMs / ms,
      unit: '× baseline speed',
      note: `${ms.toFixed(1)} ms (${mbps(ms).toFixed(0)} MB/s); ${note}`,
    });

  let xd: Uint8Array = new Uint8Array(0);
  row(
    'xorDelta (pako)',
    msPerCall(() => {
      xd = xorDelta(base, current, { layoutHash });
    }, 2),
    "MAMEHub's delta as this package makes it",
  );
  let pd: Uint8Array = new Uint8Array(0);
  row(
    'pageDelta v1 (pako, computes both hashes)',
    msPerCall(() => {
      pd = pageDelta(base, current, { layoutHash });
    }, 3),
    'before: compare + hash64 of base and state',
  );
  const baseHash = hash64(base);
  row(
    'pageDelta v1 (node:zlib, base hash known)',
    msPerCall(() => pageDelta(base, current, { layoutHash, baseHash, deflate: nodeDeflate }), 3),
    'hash64 of the state remains',
  );
  // Finding the changed pages with the base in memory: word compare, or hashing the state's pages
  // against the base's page hashes (what a server holding only hashes would do).
  const hashes = new Uint8Array(pages * 8);
  row(
    'find changed pages by hashing every page',
    msPerCall(() => pageHashesInto(current, PAGE, hashes), 3),
    'page hashes of the whole state (no compression)',
  );
  let full: Uint8Array = new Uint8Array(0);
  row(
    'DeltaBase full compare (pako)',
    msPerCall(() => {
      full = deltaBase.pageDelta(current);
    }, 3),
    'v2: compares every page; hashes only changed ones',
  );
  row(
    'DeltaBase full compare (node:zlib)',
    msPerCall(() => deltaBase.pageDelta(current, { deflate: nodeDeflate }), 3),
    'v2, native deflate',
  );
  const nativeBase = new DeltaBase(base, { layoutHash, compare: nodeRangeCompare() });
  row(
    'DeltaBase full compare (memcmp, node:zlib)',
    msPerCall(() => nativeBase.pageDelta(current, { deflate: nodeDeflate }), 3),
    'v2, native compare and deflate: no dirty tracking needed',
  );
  let dd: Uint8Array = new Uint8Array(0);
  row(
    'DeltaBase dirty pages (pako)',
    msPerCall(() => {
      dd = deltaBase.pageDelta(current, { dirty });
    }, 9),
    `v2: reads only the ${changedPages} dirty pages`,
  );
  row(
    'DeltaBase dirty pages (node:zlib)',
    msPerCall(() => {
      dd = deltaBase.pageDelta(current, { dirty, deflate: nodeDeflate });
    }, 9),
    'goal ≥ 10× the baseline',
  );
  const times: number[] = [];
  let ad: Uint8Array = new Uint8Array(0);
  for (let r = 0; r < 9; r++) {
    const a = Number(process.hrtime.bigint()) / 1e6;
    ad = await deltaBase.pageDeltaAsync(current, { dirty, deflate: compressionStreamDeflate });
    times.push(Number(process.hrtime.bigint()) / 1e6 - a);
  }
  times.sort((a, b) => a - b);
  row('DeltaBase dirty pages (CompressionStream, async)', times[4]!, 'what a browser gets');
  if (dd.length !== full.length || ad.length === 0) throw new Error('dirty and full deltas differ');

  suite.record({
    name: `XOR + node:zlib bytes, ${tag}`,
    value: zd.length,
    unit: 'bytes',
    note: 'MAMEHub anchor: 128 MB → < 1 MB',
  });
  suite.record({ name: `xorDelta bytes, ${tag}`, value: xd.length, unit: 'bytes' });
  suite.record({
    name: `pageDelta bytes, ${tag}`,
    value: pd.length,
    unit: 'bytes',
    baseline: `XOR + node:zlib bytes, ${tag}`,
    note: 'goal < 1 MB',
  });
  suite.record({
    name: `DeltaBase dirty bytes (node:zlib), ${tag}`,
    value: dd.length,
    unit: 'bytes',
    baseline: `XOR + node:zlib bytes, ${tag}`,
    note: 'goal < 1 MB',
  });
  const applyX = msPerCall(() => applyDelta(base, xd, { layoutHash }), 2);
  const applyXName = `applyDelta (XOR) 128 MiB, ${tag}`;
  suite.record({
    name: applyXName,
    value: mbps(applyX),
    unit: 'MB/s',
    note: `${applyX.toFixed(0)} ms (two hash64 passes included)`,
  });
  const applyP = msPerCall(() => applyDelta(base, pd, { layoutHash }), 3);
  suite.record({
    name: `applyDelta (pages v1) 128 MiB, ${tag}`,
    value: mbps(applyP),
    unit: 'MB/s',
    baseline: applyXName,
    note: `${applyP.toFixed(0)} ms`,
  });
  const applyV2 = msPerCall(() => applyDelta(base, dd, { layoutHash, basePagedHash: deltaBase.hash }), 3);
  suite.record({
    name: `applyDelta (pages v2) 128 MiB, ${tag}`,
    value: mbps(applyV2),
    unit: 'MB/s',
    baseline: applyXName,
    note: `${applyV2.toFixed(0)} ms (paged hash of the result)`,
  });
}
suite.finish();

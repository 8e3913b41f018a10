// Late-join deltas of a 128 MiB state with 1 % of its 4 KiB pages changed: bytes produced and
// MB/s for MAMEHub's XOR+deflate of the whole state and for our page delta.
import { BenchSuite } from '@netplay/bench-kit';
import { applyDelta, hash64, pageDelta, xorDelta } from '@netplay/state';
import { fillPseudoRandom, msPerCall } from './timing.js';

const suite = new BenchSuite('state/delta');
const MiB = 1 << 20;
const SIZE = 128 * MiB;
const PAGE = 4096;
const pages = SIZE / PAGE;
const changedPages = Math.round(pages / 100);

const base = new Uint8Array(SIZE);
fillPseudoRandom(base, 1);

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

const scenarios: [string, (x: Uint8Array) => void][] = [
  [
    'sparse: 16 bytes changed in each changed page',
    (x) => {
      for (const p of pickPages(7)) for (let k = 0; k < 16; k++) x[p * PAGE + ((k * 257) % PAGE)]! ^= 0x5a + k;
    },
  ],
  [
    'dense: every byte of each changed page rewritten',
    (x) => {
      for (const p of pickPages(11)) fillPseudoRandom(x.subarray(p * PAGE, (p + 1) * PAGE), p + 3);
    },
  ],
];

const layoutHash = 0x1234n;
const mbps = (ms: number) => SIZE / 1e6 / (ms / 1000);
for (const [label, mutate] of scenarios) {
  const current = base.slice();
  mutate(current);
  let xd = new Uint8Array(0);
  let pd = new Uint8Array(0);
  const xorMs = msPerCall(() => {
    xd = xorDelta(base, current, { layoutHash });
  }, 2);
  const pageMs = msPerCall(() => {
    pd = pageDelta(base, current, { layoutHash });
  }, 5);
  const baseHash = hash64(base);
  const pageCachedMs = msPerCall(() => {
    pageDelta(base, current, { layoutHash, baseHash });
  }, 5);
  const targetHash = hash64(current);
  const pageKnownMs = msPerCall(() => {
    pageDelta(base, current, { layoutHash, baseHash, targetHash });
  }, 5);
  const xorName = `xorDelta 128 MiB, ${label}`;
  suite.record({ name: xorName, value: mbps(xorMs), unit: 'MB/s', note: `${xorMs.toFixed(0)} ms` });
  suite.record({
    name: `pageDelta 128 MiB, ${label}`,
    value: mbps(pageMs),
    unit: 'MB/s',
    baseline: xorName,
    note: `${pageMs.toFixed(0)} ms; goal ≥ 10× XOR+deflate`,
  });
  suite.record({
    name: `pageDelta 128 MiB, base hash known, ${label}`,
    value: mbps(pageCachedMs),
    unit: 'MB/s',
    baseline: xorName,
    note: `${pageCachedMs.toFixed(0)} ms`,
  });
  suite.record({
    name: `pageDelta 128 MiB, both hashes known, ${label}`,
    value: mbps(pageKnownMs),
    unit: 'MB/s',
    baseline: xorName,
    note: `${pageKnownMs.toFixed(0)} ms (a server has checksum() of the current state)`,
  });
  suite.record({
    name: `xorDelta bytes, ${label}`,
    value: xd.length,
    unit: 'bytes',
    note: 'MAMEHub anchor: 128 MB → < 1 MB',
  });
  suite.record({
    name: `pageDelta bytes, ${label}`,
    value: pd.length,
    unit: 'bytes',
    baseline: `xorDelta bytes, ${label}`,
    note: 'goal < 1 MB',
  });
  const applyX = msPerCall(() => {
    applyDelta(base, xd, { layoutHash });
  }, 2);
  const applyP = msPerCall(() => {
    applyDelta(base, pd, { layoutHash });
  }, 3);
  const applyXName = `applyDelta (XOR) 128 MiB, ${label}`;
  suite.record({
    name: applyXName,
    value: mbps(applyX),
    unit: 'MB/s',
    note: `${applyX.toFixed(0)} ms (two hash64 passes included)`,
  });
  suite.record({
    name: `applyDelta (pages) 128 MiB, ${label}`,
    value: mbps(applyP),
    unit: 'MB/s',
    baseline: applyXName,
    note: `${applyP.toFixed(0)} ms`,
  });
}
suite.finish();

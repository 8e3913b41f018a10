// MAMEHub's XOR delta of a 32 MiB state with 1 % of its 4 KiB pages changed, made with each
// compressor, as a speed ratio to the pako path (xorDelta's default: pako streamed through
// 256 KiB) measured in the same run, interleaved round by round (median of ROUNDS per row), so
// machine load hits every row alike. Then applying the delta with pako's bounded inflate (the
// default) and with node:zlib's (nodeInflateBounded), interleaved the same way.
import { BenchSuite } from '@netplay/bench-kit';
import { applyDelta, compressionStreamDeflate, xorDelta, xorDeltaAsync } from '../src/index.js';
import { nodeDeflate, nodeDeflateAsync, nodeInflateBounded } from '../src/node.js';
import { fillPseudoRandom } from './timing.js';

const suite = new BenchSuite('state/xor-delta');
const MiB = 1 << 20;
const SIZE = 32 * MiB;
const PAGE = 4096;
const ROUNDS = 5;
const layoutHash = 0x1234n;

const base = new Uint8Array(SIZE);
fillPseudoRandom(base, 1);

function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

const scenarios: [string, (x: Uint8Array, p: number) => void][] = [
  [
    'sparse',
    (x, p) => {
      for (let k = 0; k < 16; k++) x[p * PAGE + ((k * 257) % PAGE)]! ^= 0x5a + k;
    },
  ],
  ['dense', (x, p) => fillPseudoRandom(x.subarray(p * PAGE, (p + 1) * PAGE), p + 3)],
];

for (const [tag, mutate] of scenarios) {
  const current = base.slice();
  for (let p = 0; p < SIZE / PAGE; p += 100) mutate(current, p);
  // Whole-state hashes are given, as a server keeping them would: the rows then time XOR + deflate.
  const opts = { layoutHash, baseHash: 1n, targetHash: 2n };
  const rows: [string, () => Promise<Uint8Array> | Uint8Array][] = [
    ['xorDelta (pako, streamed; the default)', () => xorDelta(base, current, opts)],
    ['xorDelta + nodeDeflate (node:zlib)', () => xorDelta(base, current, { ...opts, deflate: nodeDeflate })],
    ['xorDeltaAsync (default: CompressionStream)', () => xorDeltaAsync(base, current, opts)],
    [
      'xorDeltaAsync + compressionStreamDeflate',
      () => xorDeltaAsync(base, current, { ...opts, deflate: compressionStreamDeflate }),
    ],
    ['xorDeltaAsync + nodeDeflateAsync', () => xorDeltaAsync(base, current, { ...opts, deflate: nodeDeflateAsync })],
  ];
  const times: number[][] = rows.map(() => []);
  const sizes: number[] = rows.map(() => 0);
  for (const [, make] of rows) await make(); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < rows.length; i++) {
      const t0 = now();
      const d = await rows[i]![1]();
      times[i]!.push(now() - t0);
      sizes[i] = d.length;
    }
  }
  const median = (a: number[]) => a.slice().sort((x, y) => x - y)[a.length >> 1]!;
  const pakoMs = median(times[0]!);
  for (let i = 0; i < rows.length; i++) {
    const ms = median(times[i]!);
    suite.record({
      name: `${rows[i]![0]}, ${tag}`,
      value: pakoMs / ms,
      unit: '× pako speed',
      note: `${ms.toFixed(1)} ms median of ${ROUNDS} (${(SIZE / 1e3 / ms).toFixed(0)} MB/s); ${sizes[i]} bytes${i === 0 ? '; baseline' : ''}`,
    });
  }

  // Applying: pako's bounded inflate (the default) vs node:zlib's, each with the XOR and two hashes.
  const delta = xorDelta(base, current, { layoutHash, deflate: nodeDeflate });
  const applyTimes: number[][] = [[], []];
  for (let r = 0; r <= ROUNDS; r++) {
    for (const [i, inflate] of [undefined, nodeInflateBounded].entries()) {
      const t0 = now();
      applyDelta(base, delta, { layoutHash, inflate });
      if (r > 0) applyTimes[i]!.push(now() - t0); // round 0 warms up
    }
  }
  const pakoApply = median(applyTimes[0]!);
  const nodeApply = median(applyTimes[1]!);
  suite.record({
    name: `applyDelta (pako bounded inflate; the default), ${tag}`,
    value: 1,
    unit: '× pako speed',
    note: `${pakoApply.toFixed(1)} ms median of ${ROUNDS}; XOR and two hash64 passes included; baseline`,
  });
  suite.record({
    name: `applyDelta + nodeInflateBounded, ${tag}`,
    value: pakoApply / nodeApply,
    unit: '× pako speed',
    note: `${nodeApply.toFixed(1)} ms median of ${ROUNDS}`,
  });
}

suite.finish();

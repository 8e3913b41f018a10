// hash64 (MurmurHash3_x86_128, 64 bits) against crc32 from @netplay/protocol over the same bytes.
import { BenchSuite } from '@netplay/bench-kit';
import { crc32 } from '@netplay/protocol';
import { hash64 } from '@netplay/state';
import { fillPseudoRandom, opsPerSecond } from './timing.js';

const suite = new BenchSuite('state/checksum');
for (const size of [64 * 1024, 16 * 1024 * 1024]) {
  const bytes = new Uint8Array(size);
  fillPseudoRandom(bytes, 3);
  const label = size >= 1 << 20 ? `${size >> 20} MiB` : `${size >> 10} KiB`;
  const crc = () => crc32(bytes);
  const h = () => hash64(bytes);
  const unaligned = bytes.subarray(1);
  const hu = () => hash64(unaligned);
  const toMBs = (ops: number) => (ops * size) / 1e6;
  const crcName = `crc32 ${label}`;
  suite.record({ name: crcName, value: toMBs(opsPerSecond(crc)), unit: 'MB/s' });
  suite.record({ name: `hash64 ${label}`, value: toMBs(opsPerSecond(h)), unit: 'MB/s', baseline: crcName });
  suite.record({ name: `hash64 ${label} unaligned`, value: toMBs(opsPerSecond(hu)), unit: 'MB/s', baseline: crcName });
}
// Allocation per call of the hash on a small state (only the returned bigint is expected).
const small = new Uint8Array(8192);
suite.measure('hash64 8 KiB', () => {
  hash64(small);
});
suite.measure(
  'crc32 8 KiB',
  () => {
    crc32(small);
  },
  { baseline: 'hash64 8 KiB' },
);
suite.finish();

import { fc, test } from '@fast-check/vitest';
import { crc32 } from '@netplay/protocol';
import { describe, expect, it } from 'vitest';
import { hash64, murmur3x86_128Into } from '../src/index.js';

describe('hash64 (MurmurHash3_x86_128, low 64 bits)', () => {
  it("passes SMHasher's verification test for MurmurHash3_x86_128 (0xB3ECE62A)", () => {
    // SMHasher VerificationTest: hash keys {0}, {0,1}, ... of lengths 0..255 with seed 256-n,
    // hash the concatenated digests with seed 0 and read the first 32 bits little-endian.
    const key = new Uint8Array(256);
    const digests = new Uint8Array(256 * 16);
    const out = new Uint32Array(4);
    for (let n = 0; n < 256; n++) {
      key[n] = n;
      murmur3x86_128Into(key, 0, n, 256 - n, out);
      new DataView(digests.buffer).setUint32(n * 16, out[0]!, true);
      new DataView(digests.buffer).setUint32(n * 16 + 4, out[1]!, true);
      new DataView(digests.buffer).setUint32(n * 16 + 8, out[2]!, true);
      new DataView(digests.buffer).setUint32(n * 16 + 12, out[3]!, true);
    }
    murmur3x86_128Into(digests, 0, digests.length, 0, out);
    expect(out[0]).toBe(0xb3ece62a);
  });

  test.prop([fc.uint8Array({ maxLength: 200 }), fc.integer({ min: 0, max: 7 })])(
    'does not depend on where the bytes lie (aligned word path = byte path)',
    (data, shift) => {
      const a = new Uint8Array(data.length + 8);
      a.set(data, shift);
      expect(hash64(a, shift, shift + data.length)).toBe(hash64(data));
      expect(hash64(a.subarray(shift, shift + data.length))).toBe(hash64(data));
    },
  );

  test.prop([fc.uint8Array({ minLength: 1, maxLength: 100 }), fc.nat(), fc.integer({ min: 1, max: 255 })])(
    'a single changed byte changes the hash',
    (data, at, delta) => {
      const b = data.slice();
      b[at % b.length] = (b[at % b.length]! + delta) & 0xff;
      expect(hash64(b)).not.toBe(hash64(data));
    },
  );

  it('returns an unsigned 64-bit bigint', () => {
    for (let n = 0; n < 64; n++) {
      const h = hash64(new Uint8Array(n).fill(n));
      expect(h >= 0n && h < 2n ** 64n).toBe(true);
    }
  });

  it('crc32 from @netplay/protocol is the zlib CRC', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });
});

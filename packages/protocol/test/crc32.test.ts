import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { crc32, crc32Update } from '../src/index.js';

/** A bit-at-a-time reference CRC-32, independent of the table implementation. */
function referenceCrc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

describe('crc32', () => {
  it('gives 0xCBF43926 for "123456789"', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });
  it('gives 0 for no bytes', () => {
    expect(crc32(new Uint8Array(0))).toBe(0);
  });
  test.prop([fc.uint8Array({ maxLength: 300 })])('matches a bitwise reference', (bytes) => {
    expect(crc32(bytes)).toBe(referenceCrc32(bytes));
  });
  test.prop([fc.uint8Array({ maxLength: 300 }), fc.nat()])('is the same computed in two pieces', (bytes, cut) => {
    const at = bytes.length === 0 ? 0 : cut % (bytes.length + 1);
    expect(crc32Update(crc32(bytes, 0, at), bytes, at)).toBe(crc32(bytes));
  });
});

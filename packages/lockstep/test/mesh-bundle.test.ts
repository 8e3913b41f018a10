import { fc, test } from '@fast-check/vitest';
import { DecodeError } from '@netplay/protocol';
import { describe, expect } from 'vitest';
import { BundleReader, BundleWriter, K_BUNDLE, MAX_BUNDLE } from '../src/mesh-bundle.js';
import { OutboxPool } from '../src/pool.js';

const PACKET = 13;

/** A stream message: a packet (kind 1, `PACKET` bytes) or a notice (kind 2, 22 bytes). */
const messageArb = fc.oneof(
  fc.uint8Array({ minLength: PACKET - 1, maxLength: PACKET - 1 }).map((b) => Uint8Array.of(1, ...b)),
  fc.uint8Array({ minLength: 21, maxLength: 21 }).map((b) => Uint8Array.of(2, ...b)),
);

describe('input-u bundles (mesh-bundle.ts)', () => {
  test.prop([fc.array(messageArb, { minLength: 1, maxLength: 30 })], { numRuns: 200 })(
    'each packet bundle holds the two stream messages before it and the packet, oldest first',
    (stream) => {
      const w = new BundleWriter(new OutboxPool([]), 22);
      const r = new BundleReader(PACKET);
      const sent: Uint8Array[] = [];
      for (const m of stream) {
        if (m[0] === 2) {
          w.remember(m);
          sent.push(m);
          continue;
        }
        const b = w.bundle(m);
        sent.push(m);
        expect(b[0]).toBe(K_BUNDLE);
        const n = r.check(b);
        const want = sent.slice(-3);
        expect(n).toBe(want.length);
        for (let k = 0; k < n; k++) expect([...r.message(b, k)]).toEqual([...want[k]!]);
      }
    },
  );

  test.prop([fc.uint8Array({ maxLength: 200 })], { numRuns: 2000 })(
    'any bytes: a count and messages, or a DecodeError; never another throw',
    (bytes) => {
      const data = Uint8Array.of(K_BUNDLE, ...bytes);
      const r = new BundleReader(PACKET);
      let n: number;
      try {
        n = r.check(data);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
        return;
      }
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThanOrEqual(MAX_BUNDLE);
      for (let k = 0; k < n; k++) {
        const m = r.message(data, k);
        expect(m.length).toBeGreaterThanOrEqual(5);
        expect([1, 2]).toContain(m[0]);
      }
    },
  );
});

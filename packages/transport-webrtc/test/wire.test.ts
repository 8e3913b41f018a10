import { fc, test } from '@fast-check/vitest';
import { TransportError } from '@netplay/transport';
import { describe, expect } from 'vitest';
import {
  decodeClose,
  decodeHello,
  encodeClose,
  encodeHello,
  encodeReliable,
  encodeUnreliable,
  Reassembler,
  seqNewer,
} from '../src/wire.js';

describe('wire', () => {
  test.prop([fc.uint8Array({ maxLength: 5000 }), fc.integer({ min: 16, max: 2048 })])(
    'reliable messages cut into frames of at most the chunk size reassemble to the same bytes',
    (data, chunk) => {
      const frames = encodeReliable(data, chunk);
      const r = new Reassembler(1 << 20);
      const out: Uint8Array[] = [];
      for (const f of frames) {
        expect(f.length).toBeLessThanOrEqual(chunk);
        const m = r.push(f);
        if (m) out.push(m);
      }
      expect(out).toHaveLength(1);
      expect(out[0]).toEqual(data);
      expect(r.pendingBytes).toBe(0);
    },
  );

  test.prop([fc.array(fc.uint8Array({ maxLength: 100 }), { maxLength: 20 })], { numRuns: 2000 })(
    'any frames give messages or a TransportError (protocol / too-large), never another throw',
    (frames) => {
      const r = new Reassembler(300);
      try {
        for (const f of frames) {
          const m = r.push(f);
          if (m) expect(m.length).toBeLessThanOrEqual(300);
        }
      } catch (e) {
        expect(e).toBeInstanceOf(TransportError);
        expect(['protocol', 'too-large']).toContain((e as TransportError).code);
      }
    },
  );

  test.prop([fc.integer({ min: 301, max: 2 ** 32 - 1 })])(
    'an announced length over the limit is refused before allocating',
    (n) => {
      const first = new Uint8Array(10);
      first[0] = 1;
      new DataView(first.buffer).setUint32(1, n);
      expect(() => new Reassembler(300).push(first)).toThrow(/too-large/);
    },
  );

  test.prop([fc.string({ maxLength: 100 }), fc.nat(), fc.nat()])('HELLO round-trips', (signature, a, b) => {
    const h = decodeHello(encodeHello(0x10, { signature, maxMessageBytes: a >>> 0, maxUnreliableBytes: b >>> 0 }));
    expect(h).toEqual({ version: 1, signature, maxMessageBytes: a >>> 0, maxUnreliableBytes: b >>> 0 });
  });

  test.prop([
    fc.constantFrom(0 as const, 1 as const, 2 as const),
    fc.array(fc.nat(), { maxLength: 10 }),
    fc.uint8Array({ maxLength: 120 }),
  ])('CLOSE round-trips', (kind, sent, reason) => {
    const c = decodeClose(encodeClose({ kind, sent, reason }));
    expect(c.kind).toBe(kind);
    expect(c.sent).toEqual(sent);
    expect(c.reason).toEqual(reason);
  });

  test.prop([fc.nat(), fc.integer({ min: 1, max: 0x7fffffff })])('sequence numbers compare across the wrap', (a, d) => {
    expect(seqNewer((a + d) >>> 0, a >>> 0)).toBe(true);
    expect(seqNewer(a >>> 0, (a + d) >>> 0)).toBe(false);
    expect(encodeUnreliable(a, new Uint8Array(3))).toHaveLength(7);
  });
});

import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  DecodeError,
  decodeRetroArchDiscoveryQuery,
  decodeRetroArchDiscoveryReply,
  EncodeError,
  encodeRetroArchDiscoveryQuery,
  encodeRetroArchDiscoveryReply,
  type RetroArchDiscoveryReply,
} from '../src/index.js';
import { be32, field, textArb } from './retroarch-arbitraries.js';

const replyArb: fc.Arbitrary<RetroArchDiscoveryReply> = fc.record({
  contentCrc: fc.nat({ max: 0xffffffff }),
  port: fc.nat({ max: 0xffff }),
  hasPassword: fc.boolean(),
  hasSpectatePassword: fc.boolean(),
  nick: textArb(31),
  frontend: textArb(31),
  core: textArb(31),
  coreVersion: textArb(31),
  retroarchVersion: textArb(31),
  content: textArb(255),
  subsystem: textArb(255),
});

/** The 688-byte reply laid out by hand: RANS, crc, port, flags, 5 × char[32], 2 × char[256]. */
function referenceReply(r: RetroArchDiscoveryReply): Uint8Array {
  return Uint8Array.from([
    ...[0x52, 0x41, 0x4e, 0x53],
    ...be32(r.contentCrc),
    ...be32(r.port),
    ...be32((r.hasPassword ? 1 : 0) + (r.hasSpectatePassword ? 2 : 0)),
    ...field(r.nick, 32),
    ...field(r.frontend, 32),
    ...field(r.core, 32),
    ...field(r.coreVersion, 32),
    ...field(r.retroarchVersion, 32),
    ...field(r.content, 256),
    ...field(r.subsystem, 256),
  ]);
}

describe('LAN discovery', () => {
  it('the query is the 4 bytes RANQ', () => {
    const out = new Uint8Array(4);
    expect(encodeRetroArchDiscoveryQuery(out)).toBe(4);
    expect(new TextDecoder().decode(out)).toBe('RANQ');
    expect(() => decodeRetroArchDiscoveryQuery(out)).not.toThrow();
    expect(() => decodeRetroArchDiscoveryQuery(new TextEncoder().encode('RANP'))).toThrow(
      expect.objectContaining({ code: 'bad-magic' }),
    );
    expect(() => decodeRetroArchDiscoveryQuery(new TextEncoder().encode('RANQ!'))).toThrow(
      expect.objectContaining({ code: 'bad-length' }),
    );
  });

  test.prop([replyArb])('the reply is 688 bytes laid out as RETROARCH.md says', (r) => {
    const out = new Uint8Array(688);
    expect(encodeRetroArchDiscoveryReply(r, out)).toBe(688);
    expect(out).toEqual(referenceReply(r));
  });

  test.prop([replyArb])('valid reply bytes decode and re-encode identically', (r) => {
    const bytes = referenceReply(r);
    const decoded = decodeRetroArchDiscoveryReply(bytes);
    expect(decoded).toEqual(r);
    const again = new Uint8Array(688);
    encodeRetroArchDiscoveryReply(decoded, again);
    expect(again).toEqual(bytes);
  });

  test.prop([fc.uint8Array({ maxLength: 700 })])('arbitrary datagrams decode or throw DecodeError', (bytes) => {
    try {
      decodeRetroArchDiscoveryReply(bytes);
      expect(bytes.length).toBe(688);
    } catch (e) {
      expect(e).toBeInstanceOf(DecodeError);
    }
  });

  test.prop([replyArb, fc.array(fc.tuple(fc.nat({ max: 687 }), fc.nat({ max: 255 })), { minLength: 1, maxLength: 8 })])(
    'mutated replies decode or throw DecodeError',
    (r, flips) => {
      const bytes = referenceReply(r);
      for (const [at, v] of flips) bytes[at] = v;
      try {
        decodeRetroArchDiscoveryReply(bytes);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
        expect((e as DecodeError).code).toBe('bad-magic');
      }
    },
  );

  it('refuses a text that does not fit and a small buffer', () => {
    const r: RetroArchDiscoveryReply = {
      contentCrc: 1,
      port: 55435,
      hasPassword: false,
      hasSpectatePassword: true,
      nick: 'n'.repeat(32),
      frontend: '',
      core: '',
      coreVersion: '',
      retroarchVersion: '1.14.0',
      content: '',
      subsystem: '',
    };
    expect(() => encodeRetroArchDiscoveryReply(r, new Uint8Array(688))).toThrow(EncodeError);
    expect(() => encodeRetroArchDiscoveryReply({ ...r, nick: 'ok' }, new Uint8Array(687))).toThrow(
      expect.objectContaining({ code: 'buffer-too-small' }),
    );
  });
});

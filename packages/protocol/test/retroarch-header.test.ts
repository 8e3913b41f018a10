import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  chooseRetroArchProtocol,
  DecodeError,
  decodeRetroArchHeader,
  EncodeError,
  encodeRetroArchHeader,
  parseRetroArchPlatformMagic,
  RETROARCH_1_14_IMPLEMENTATION_MAGIC,
  RETROARCH_PLATFORM_LP64,
  type RetroArchHeader,
  RetroArchHeaderMagic,
  retroArchClientHeader,
  retroArchHostHeader,
  retroArchImplementationMagic,
  retroArchPlatformMagic,
  retroArchRefusalHeader,
} from '../src/index.js';

function hex(s: string): Uint8Array {
  return Uint8Array.from(s.replace(/\s+/g, '').match(/../g) ?? [], (h) => Number.parseInt(h, 16));
}

function encode(h: RetroArchHeader): Uint8Array {
  const out = new Uint8Array(24);
  expect(encodeRetroArchHeader(h, out)).toBe(24);
  return out;
}

const u32 = fc.nat({ max: 0xffffffff });
// The four magics, spelled out from their ASCII names.
const ascii = (s: string) =>
  ((s.charCodeAt(0) << 24) | (s.charCodeAt(1) << 16) | (s.charCodeAt(2) << 8) | s.charCodeAt(3)) >>> 0;
const magicArb = fc.constantFrom(
  ascii('RANP'),
  ascii('FULL'),
  ascii('DENY'),
  ascii('POKE'),
) as fc.Arbitrary<RetroArchHeaderMagic>;

const headerArb: fc.Arbitrary<RetroArchHeader> = fc.oneof(
  fc.record({
    sender: fc.constant('client' as const),
    magic: magicArb,
    platformMagic: u32,
    compression: u32,
    highProtocol: u32,
    lowProtocol: u32,
    implementationMagic: u32,
  }),
  fc.record({
    sender: fc.constant('host' as const),
    magic: magicArb,
    platformMagic: u32,
    compression: u32,
    salt: u32,
    protocol: u32,
    implementationMagic: u32,
  }),
);

describe('connection header', () => {
  it('magics are the ASCII words', () => {
    expect(RetroArchHeaderMagic.Ranp).toBe(ascii('RANP'));
    expect(RetroArchHeaderMagic.Full).toBe(ascii('FULL'));
    expect(RetroArchHeaderMagic.Deny).toBe(ascii('DENY'));
    expect(RetroArchHeaderMagic.Poke).toBe(ascii('POKE'));
  });

  it('decodes the captured client header and re-encodes it identically', () => {
    const bytes = hex('52414e50 00040008 00000001 00000006 00000005 00000469');
    const h = decodeRetroArchHeader(bytes, 'client');
    expect(h).toEqual({
      sender: 'client',
      magic: RetroArchHeaderMagic.Ranp,
      platformMagic: 0x00040008,
      compression: 1,
      highProtocol: 6,
      lowProtocol: 5,
      implementationMagic: 0x469,
    });
    expect(encode(h)).toEqual(bytes);
    expect(encode(retroArchClientHeader())).toEqual(bytes);
  });

  it('decodes the captured host reply and re-encodes it identically', () => {
    const bytes = hex('52414e50 00040008 00000001 00000000 00000006 00000469');
    const h = decodeRetroArchHeader(bytes, 'host');
    expect(h).toEqual({
      sender: 'host',
      magic: RetroArchHeaderMagic.Ranp,
      platformMagic: 0x00040008,
      compression: 1,
      salt: 0,
      protocol: 6,
      implementationMagic: 0x469,
    });
    expect(encode(h)).toEqual(bytes);
    expect(encode(retroArchHostHeader())).toEqual(bytes);
  });

  it('writes FULL and DENY refusals as RetroArch does (magic, protocol 6, zeros)', () => {
    expect(encode(retroArchRefusalHeader(RetroArchHeaderMagic.Full))).toEqual(
      hex('46554c4c 00000000 00000000 00000000 00000006 00000000'),
    );
    expect(decodeRetroArchHeader(hex('44454e59 00000000 00000000 00000000 00000006 00000000'), 'host')).toMatchObject({
      magic: RetroArchHeaderMagic.Deny,
    });
  });

  test.prop([headerArb, fc.nat({ max: 16 })])('round trips at any offset', (h, offset) => {
    const out = new Uint8Array(offset + 24);
    encodeRetroArchHeader(h, out, offset);
    expect(decodeRetroArchHeader(out, h.sender, offset)).toEqual(h);
  });

  test.prop([fc.uint8Array({ maxLength: 30 }), fc.constantFrom('client' as const, 'host' as const)])(
    'arbitrary bytes decode to a header or a DecodeError',
    (bytes, sender) => {
      try {
        const h = decodeRetroArchHeader(bytes, sender);
        expect(bytes.length).toBeGreaterThanOrEqual(24);
        expect([...encode(h)]).toEqual([...bytes.subarray(0, 24)]);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
        expect(['truncated', 'bad-magic']).toContain((e as DecodeError).code);
      }
    },
  );

  it('rejects a bad magic and a short header', () => {
    expect(() => decodeRetroArchHeader(new Uint8Array(24), 'client')).toThrow(
      expect.objectContaining({ code: 'bad-magic', offset: 0 }),
    );
    expect(() => decodeRetroArchHeader(new Uint8Array(23), 'client')).toThrow(
      expect.objectContaining({ code: 'truncated' }),
    );
    expect(() => encodeRetroArchHeader(retroArchClientHeader(), new Uint8Array(23))).toThrow(EncodeError);
    expect(() => encodeRetroArchHeader(retroArchHostHeader({ salt: -1 }), new Uint8Array(24))).toThrow(EncodeError);
  });
});

describe('platform magic', () => {
  it('is 0x00040008 on x86-64 (little-endian, 8-byte size_t and long)', () => {
    expect(retroArchPlatformMagic({ bigEndian: false, sizeofSizeT: 8, sizeofLong: 8 })).toBe(0x00040008);
    expect(RETROARCH_PLATFORM_LP64).toBe(0x00040008);
  });

  it('puts big-endian in bit 30, size_t in bits 29-15 and long in bits 14-0', () => {
    expect(retroArchPlatformMagic({ bigEndian: true, sizeofSizeT: 4, sizeofLong: 4 })).toBe(2 ** 30 + 4 * 2 ** 15 + 4);
  });

  test.prop([fc.boolean(), fc.nat({ max: 0x7fff }), fc.nat({ max: 0x7fff })])(
    'parses back what it builds',
    (bigEndian, sizeofSizeT, sizeofLong) => {
      const p = { bigEndian, sizeofSizeT, sizeofLong };
      expect(parseRetroArchPlatformMagic(retroArchPlatformMagic(p))).toEqual(p);
    },
  );
});

describe('implementation magic', () => {
  it('of "1.14.0" is 0x469', () => {
    expect(retroArchImplementationMagic('1.14.0')).toBe(0x469);
    expect(RETROARCH_1_14_IMPLEMENTATION_MAGIC).toBe(0x469);
  });

  it('follows the documented fold on a hand-computed example', () => {
    // "ab": 0x61 << 0 ^ 0x62 << 1 = 0x61 ^ 0xc4 = 0xa5; then ^ 6 << 2 = 0x18 → 0xbd.
    expect(retroArchImplementationMagic('ab')).toBe(0xbd);
    // Empty version: only 6 << 0.
    expect(retroArchImplementationMagic('')).toBe(6);
  });
});

describe('protocol choice', () => {
  it('picks min(high, 6) when the ranges overlap, else refuses', () => {
    expect(chooseRetroArchProtocol(6, 5)).toBe(6);
    expect(chooseRetroArchProtocol(7, 5)).toBe(6);
    expect(chooseRetroArchProtocol(5, 5)).toBe(5);
    expect(chooseRetroArchProtocol(4, 1)).toBeUndefined();
    expect(chooseRetroArchProtocol(9, 7)).toBeUndefined();
  });
});

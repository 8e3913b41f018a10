import { fc, test } from '@fast-check/vitest';
import { DecodeError } from '@netplay/protocol';
import { describe, expect, it } from 'vitest';
import {
  decodeLinkMessage,
  decodeSessionMessage,
  encodeLinkAddress,
  encodeLinkHello,
  encodeLinkSlots,
  encodeLinks,
  LinkMessageType,
} from '../src/index.js';

const nick = fc.string({ minLength: 1, maxLength: 16 });
const address = fc.string({ maxLength: 60 });
const token = fc.uint8Array({ minLength: 8, maxLength: 8 });
const slot = fc.integer({ min: 0, max: 254 });

describe('link messages (types 15–19)', () => {
  test.prop([address, fc.boolean()])('LINK_ADDRESS round-trips', (a, dials) => {
    expect(decodeLinkMessage(encodeLinkAddress({ address: a, dials }))).toEqual({
      type: LinkMessageType.LinkAddress,
      address: a,
      dials,
    });
  });

  test.prop([
    fc.integer({ min: 0, max: 255 }),
    slot,
    fc.array(fc.record({ slot, nick, dial: fc.boolean(), address, token }), { maxLength: 15 }),
  ])('LINKS round-trips', (round, mine, entries) => {
    const bytes = encodeLinks({ round, slot: mine, entries });
    expect(decodeLinkMessage(bytes)).toEqual({ type: LinkMessageType.Links, round, slot: mine, entries });
    // The session codec decodes them too (a peer reading every session message never throws on them).
    expect(decodeSessionMessage(bytes)).toEqual(decodeLinkMessage(bytes));
  });

  test.prop([fc.integer({ min: 0, max: 255 }), slot, slot, token])('LINK_HELLO round-trips', (round, from, to, t) => {
    expect(decodeLinkMessage(encodeLinkHello({ round, from, to, token: t }))).toEqual({
      type: LinkMessageType.LinkHello,
      round,
      from,
      to,
      token: t,
    });
  });

  test.prop([
    fc.constantFrom(LinkMessageType.LinksReady, LinkMessageType.LinkSet),
    fc.integer({ min: 0, max: 255 }),
    fc.array(slot, { maxLength: 16 }),
  ])('LINKS_READY and LINK_SET round-trip', (type, round, slots) => {
    expect(decodeLinkMessage(encodeLinkSlots({ type, round, slots }))).toEqual({ type, round, slots });
  });

  test.prop([fc.integer({ min: 15, max: 19 }), fc.uint8Array({ maxLength: 80 })], { numRuns: 2000 })(
    'any body after types 15–19 decodes or throws DecodeError',
    (type, body) => {
      const bytes = new Uint8Array([type, ...body]);
      try {
        decodeSessionMessage(bytes);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
      }
    },
  );

  it('every truncation of a LINKS throws DecodeError', () => {
    const bytes = encodeLinks({
      round: 1,
      slot: 2,
      entries: [{ slot: 1, nick: 'ann', dial: true, address: '10.0.0.7:41000', token: new Uint8Array(8).fill(9) }],
    });
    for (let n = 0; n < bytes.length; n++) expect(() => decodeLinkMessage(bytes.subarray(0, n))).toThrow(DecodeError);
  });
});

import { fc, test } from '@fast-check/vitest';
import { DecodeError } from '@netplay/protocol';
import { describe, expect } from 'vitest';
import {
  decodeLinkMessage,
  decodeSessionMessage,
  encodeLinkSlots,
  encodeLinks,
  isLinkMessage,
  LinkMessageType,
} from '../src/index.js';

const nick = fc.string({ minLength: 1, maxLength: 16 });
const address = fc.string({ maxLength: 60 });
const token = fc.uint8Array({ minLength: 8, maxLength: 8 });
const slot = fc.integer({ min: 0, max: 254 });

describe('link messages for a player entering the running game (types 25–27, protocol 5)', () => {
  test.prop([
    fc.integer({ min: 0, max: 255 }),
    slot,
    fc.array(fc.record({ slot, nick, dial: fc.boolean(), address, token }), { maxLength: 15 }),
  ])('LINK_ADD round-trips (LINKS body, type 25), through the session codec too', (round, mine, entries) => {
    const bytes = encodeLinks({ type: LinkMessageType.LinkAdd, round, slot: mine, entries });
    expect(bytes[0]).toBe(25);
    expect(isLinkMessage(bytes)).toBe(true);
    expect(decodeLinkMessage(bytes)).toEqual({ type: LinkMessageType.LinkAdd, round, slot: mine, entries });
    expect(decodeSessionMessage(bytes)).toEqual(decodeLinkMessage(bytes));
  });

  test.prop([
    fc.constantFrom(LinkMessageType.LinkAddSet, LinkMessageType.LinkAddKept),
    fc.integer({ min: 0, max: 255 }),
    fc.array(slot, { maxLength: 16 }),
  ])('LINK_ADD_SET and LINK_ADD_KEPT round-trip', (type, round, slots) => {
    const bytes = encodeLinkSlots({ type, round, slots });
    expect(decodeLinkMessage(bytes)).toEqual({ type, round, slots });
    // Every truncation throws DecodeError.
    for (let n = 0; n < bytes.length; n++) expect(() => decodeLinkMessage(bytes.subarray(0, n))).toThrow(DecodeError);
  });

  test.prop([fc.integer({ min: 25, max: 27 }), fc.uint8Array({ maxLength: 80 })], { numRuns: 2000 })(
    'any body after types 25–27 decodes or throws DecodeError',
    (type, body) => {
      const bytes = new Uint8Array([type, ...body]);
      try {
        expect(decodeLinkMessage(bytes).type).toBe(type);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
      }
    },
  );

  test.prop([fc.integer({ min: 20, max: 24 })])('types 20–24 and 28+ are no link messages', (type) => {
    expect(isLinkMessage(new Uint8Array([type]))).toBe(false);
    expect(isLinkMessage(new Uint8Array([type + 8]))).toBe(false);
  });
});

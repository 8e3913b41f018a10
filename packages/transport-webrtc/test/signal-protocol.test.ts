import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { encodeMessage, parseClientMessage, parseServerMessage, SignalingError } from '../src/index.js';

const CODES = ['bad-json', 'bad-message', 'version'];
const name = fc.stringMatching(/^[A-Za-z0-9._~-]{1,64}$/);
const signal = fc.oneof(
  fc.record({ kind: fc.constantFrom('offer' as const, 'answer' as const), sdp: fc.string({ maxLength: 200 }) }),
  fc.record({
    kind: fc.constant('candidate' as const),
    candidate: fc.string({ maxLength: 100 }),
    sdpMid: fc.option(fc.string({ maxLength: 3 }), { nil: null }),
    sdpMLineIndex: fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }),
  }),
);
const clientMessage = fc.oneof(
  fc.record({ v: fc.constant(1 as const), type: fc.constant('join' as const), room: name, peer: name }),
  fc.record({ v: fc.constant(1 as const), type: fc.constant('signal' as const), to: name, signal }),
  fc.constant({ v: 1 as const, type: 'leave' as const }),
);
/** Near-valid objects: valid fields mixed with arbitrary values, so the checks are reached. */
const nearMessage = fc.record(
  {
    v: fc.oneof(fc.constant(1), fc.jsonValue()),
    type: fc.oneof(fc.constantFrom('join', 'signal', 'leave', 'joined', 'refused'), fc.jsonValue()),
    room: fc.oneof(name, fc.jsonValue()),
    peer: fc.oneof(name, fc.jsonValue()),
    to: fc.oneof(name, fc.jsonValue()),
    signal: fc.oneof(signal, fc.jsonValue()),
  },
  { requiredKeys: [] },
);

describe('signaling protocol', () => {
  test.prop([clientMessage])('valid client messages round-trip through JSON', (m) => {
    expect(parseClientMessage(encodeMessage(m))).toEqual(m);
  });

  test.prop(
    [
      fc.oneof(
        fc.string(),
        fc.json(),
        nearMessage.map((o) => JSON.stringify(o)),
      ),
    ],
    { numRuns: 2000 },
  )('any text parses to a valid message or throws a typed SignalingError', (text) => {
    try {
      const m = parseClientMessage(text);
      // Whatever parsed is a valid message: it survives a second round trip unchanged.
      expect(parseClientMessage(encodeMessage(m))).toEqual(m);
    } catch (e) {
      expect(e).toBeInstanceOf(SignalingError);
      expect(CODES).toContain((e as SignalingError).code);
    }
  });

  test.prop(
    [
      fc.oneof(
        fc.string(),
        fc.json(),
        nearMessage.map((o) => JSON.stringify(o)),
      ),
    ],
    { numRuns: 1000 },
  )('the client side parser is as strict', (text) => {
    try {
      parseServerMessage(text);
    } catch (e) {
      expect(e).toBeInstanceOf(SignalingError);
    }
  });

  test('names and sizes are checked', () => {
    const bad = (m: unknown) => {
      try {
        parseClientMessage(JSON.stringify(m));
      } catch (e) {
        return (e as SignalingError).code;
      }
      return 'ok';
    };
    expect(bad({ v: 1, type: 'join', room: 'a b', peer: 'x' })).toBe('bad-message');
    expect(bad({ v: 1, type: 'join', room: 'r'.repeat(65), peer: 'x' })).toBe('bad-message');
    expect(bad({ v: 2, type: 'join', room: 'r', peer: 'x' })).toBe('version');
    expect(bad({ v: 1, type: 'signal', to: 'x', signal: { kind: 'offer', sdp: 's'.repeat(16_001) } })).toBe(
      'bad-message',
    );
    expect(
      bad({ v: 1, type: 'signal', to: 'x', signal: { kind: 'candidate', candidate: 'c', sdpMLineIndex: 1.5 } }),
    ).toBe('bad-message');
    expect(bad('[1,2]')).toBe('bad-message');
    expect(bad({ v: 1, type: 'join', room: 'r', peer: 'x' })).toBe('ok');
  });
});

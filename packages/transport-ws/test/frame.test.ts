import { fc, test } from '@fast-check/vitest';
import { TransportError } from '@netplay/transport';
import { describe, expect } from 'vitest';
import {
  decodeHello,
  decodePingTime,
  decodeWelcome,
  encodeHello,
  encodePing,
  encodeReliable,
  encodeUnreliable,
  encodeWelcome,
  FrameType,
  MAX_LIMIT,
  PROTOCOL_VERSION,
  RELIABLE_HEADER_BYTES,
  seqNewer,
  UNRELIABLE_HEADER_BYTES,
  unreliableSeq,
} from '../src/index.js';

const limit = fc.integer({ min: 0, max: MAX_LIMIT });
const channels = fc.array(
  fc.record({
    name: fc.string({ minLength: 1, maxLength: 40 }),
    kind: fc.constantFrom('reliable' as const, 'unreliable' as const),
  }),
  { maxLength: 64 },
);

function throwsOnlyProtocol(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TransportError);
    expect((e as TransportError).code).toBe('protocol');
  }
}

describe('frame codec', () => {
  test.prop([limit, limit, channels])('HELLO round-trips', (maxMessageBytes, maxUnreliableBytes, chans) => {
    const bytes = encodeHello({ maxMessageBytes, maxUnreliableBytes, channels: chans });
    expect(bytes[0]).toBe(FrameType.hello);
    expect(decodeHello(bytes)).toEqual({
      version: PROTOCOL_VERSION,
      maxMessageBytes,
      maxUnreliableBytes,
      channels: chans,
    });
  });

  test.prop([limit, limit])('WELCOME round-trips', (maxMessageBytes, maxUnreliableBytes) => {
    expect(decodeWelcome(encodeWelcome({ maxMessageBytes, maxUnreliableBytes }))).toEqual({
      version: PROTOCOL_VERSION,
      maxMessageBytes,
      maxUnreliableBytes,
    });
  });

  test.prop([fc.double({ noNaN: true })])('PING and PONG carry the time unchanged', (t) => {
    expect(decodePingTime(encodePing(t))).toBe(t);
    const pong = encodePing(t, FrameType.pong);
    expect(pong[0]).toBe(FrameType.pong);
    expect(decodePingTime(pong)).toBe(t);
  });

  test.prop([fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 100 })])(
    'RELIABLE frames are type, channel, payload',
    (ch, payload) => {
      const f = encodeReliable(ch, payload);
      expect([...f.subarray(0, RELIABLE_HEADER_BYTES)]).toEqual([FrameType.reliable, ch]);
      expect(f.subarray(RELIABLE_HEADER_BYTES)).toEqual(payload);
    },
  );

  test.prop([
    fc.integer({ min: 0, max: 255 }),
    fc.integer({ min: 0, max: MAX_LIMIT }),
    fc.uint8Array({ maxLength: 100 }),
  ])('UNRELIABLE frames are type, channel, big-endian sequence, payload', (ch, seq, payload) => {
    const f = encodeUnreliable(ch, seq, payload);
    expect([f[0], f[1]]).toEqual([FrameType.unreliable, ch]);
    expect(new DataView(f.buffer).getUint32(2)).toBe(seq);
    expect(unreliableSeq(f)).toBe(seq);
    expect(f.subarray(UNRELIABLE_HEADER_BYTES)).toEqual(payload);
  });

  test.prop([fc.uint8Array({ maxLength: 80 })], { numRuns: 500 })(
    'decoders throw nothing but TransportError(protocol) on arbitrary bytes',
    (bytes) => {
      throwsOnlyProtocol(() => decodeHello(bytes));
      throwsOnlyProtocol(() => decodeWelcome(bytes));
      throwsOnlyProtocol(() => decodePingTime(bytes));
    },
  );

  test.prop([limit, limit, channels, fc.nat(), fc.integer({ min: 0, max: 255 })], { numRuns: 300 })(
    'a HELLO with one byte changed or cut decodes or throws only TransportError(protocol)',
    (m, u, chans, at, value) => {
      const bytes = encodeHello({ maxMessageBytes: m, maxUnreliableBytes: u, channels: chans });
      const mutated = bytes.slice();
      mutated[at % bytes.length] = value;
      throwsOnlyProtocol(() => decodeHello(mutated));
      throwsOnlyProtocol(() => decodeHello(bytes.subarray(0, at % bytes.length)));
    },
  );

  test.prop([fc.integer({ min: 0, max: MAX_LIMIT }), fc.integer({ min: 1, max: 0x7fff_ffff })])(
    'seqNewer follows serial-number arithmetic across the u32 wrap',
    (a, d) => {
      const b = (a + d) >>> 0;
      expect(seqNewer(b, a)).toBe(true);
      expect(seqNewer(a, b)).toBe(false);
      expect(seqNewer(a, a)).toBe(false);
    },
  );
});

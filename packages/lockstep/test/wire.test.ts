import { fc, test } from '@fast-check/vitest';
import { DecodeError } from '@netplay/protocol';
import { describe, expect } from 'vitest';
import {
  decodeFaMessageInto,
  encodeFaAdvanceInto,
  encodeFaEventInto,
  encodeFaHostProgressInto,
  encodeFaLatencyInfoInto,
  encodeFaPingInto,
  encodeFaPongInto,
  FaType,
  faMessageScratch,
} from '../src/frame-advance-wire.js';
import {
  decodeFaMessage,
  encodeFaAdvance,
  encodeFaEvent,
  encodeFaHostProgress,
  encodeFaLatencyInfo,
  encodeFaPing,
  encodeFaPong,
  type FrameAdvanceMessage,
} from '../src/index.js';

/** The allocation-free codec of the frame-advance wire must be the allocating one, byte for byte. */
const u32 = fc.nat({ max: 0xffffffff });
const ms = fc.double({ min: 0, max: 1e9, noNaN: true });

function into(size: number, write: (t: Uint8Array) => number): Uint8Array {
  // Garbage in the buffer first: the encoders must write every byte.
  const t = new Uint8Array(size).fill(0xa5);
  expect(write(t)).toBe(size);
  return t;
}

/** What `decodeFaMessageInto` says, in `decodeFaMessage`'s shape (or the error code). */
function viaInto(bytes: Uint8Array, inputBytes: number): FrameAdvanceMessage | string {
  const m = faMessageScratch();
  try {
    decodeFaMessageInto(bytes, inputBytes, m);
  } catch (e) {
    if (e instanceof DecodeError) return 'error';
    throw e;
  }
  switch (m.type) {
    case FaType.Event:
      return {
        type: 'event',
        event: {
          frame: m.frame,
          key: m.key,
          client: m.client,
          port: m.port,
          input: bytes.slice(m.inputAt, m.inputAt + inputBytes),
        },
      };
    case FaType.Advance:
      return { type: 'advance', frame: m.frame };
    case FaType.Ping:
      return { type: 'ping', seq: m.seq, sentAtUs: m.sentAtUs };
    case FaType.Pong:
      return { type: 'pong', seq: m.seq, pingSentAtUs: m.pingSentAtUs, repliedAtUs: m.repliedAtUs };
    case FaType.Progress:
      return { type: 'progress', frames: m.frame };
    default:
      return { type: 'latency', maxOneWayMs: m.maxOneWayMs };
  }
}

function viaAlloc(bytes: Uint8Array, inputBytes: number): FrameAdvanceMessage | string {
  try {
    return decodeFaMessage(bytes, inputBytes);
  } catch (e) {
    if (e instanceof DecodeError) return 'error';
    throw e;
  }
}

describe('frame-advance wire, allocation-free variants', () => {
  test.prop([u32, u32, fc.nat({ max: 0xffff }), fc.nat({ max: 255 }), fc.uint8Array({ minLength: 1, maxLength: 8 })])(
    'events encode to the same bytes',
    (frame, key, client, port, input) => {
      const e = { frame, key, client, port, input };
      const a = encodeFaEvent(e);
      expect(into(a.length, (t) => encodeFaEventInto(e, t))).toEqual(a);
    },
  );

  test.prop([u32, u32, ms, ms, fc.double({ min: 0, max: 1e6, noNaN: true })])(
    'advances, pings, pongs, latency info and host progress encode to the same bytes',
    (frame, seq, now, sent, maxMs) => {
      const sentUs = Math.round(sent * 1000);
      expect(into(5, (t) => encodeFaAdvanceInto(frame, t))).toEqual(encodeFaAdvance(frame));
      expect(into(13, (t) => encodeFaPingInto(seq, now, t))).toEqual(encodeFaPing(seq, now));
      expect(into(21, (t) => encodeFaPongInto(seq, sentUs, now, t))).toEqual(encodeFaPong(seq, sentUs, now));
      expect(into(9, (t) => encodeFaLatencyInfoInto(maxMs, t))).toEqual(encodeFaLatencyInfo(maxMs));
      expect(into(5, (t) => encodeFaHostProgressInto(frame, t))).toEqual(encodeFaHostProgress(frame));
      expect(encodeFaHostProgress(frame)).toEqual(Uint8Array.of(0x15, frame >>> 24, frame >>> 16, frame >>> 8, frame));
      expect(decodeFaMessage(encodeFaHostProgress(frame), 2)).toEqual({ type: 'progress', frames: frame });
    },
  );

  const messages = fc.oneof(
    fc
      .tuple(u32, u32, fc.nat({ max: 0xffff }), fc.nat({ max: 255 }), fc.uint8Array({ minLength: 2, maxLength: 2 }))
      .map(([frame, key, client, port, input]) => encodeFaEvent({ frame, key, client, port, input })),
    u32.map(encodeFaAdvance),
    fc.tuple(u32, ms).map(([s, n]) => encodeFaPing(s, n)),
    fc.tuple(u32, ms, ms).map(([s, a, n]) => encodeFaPong(s, Math.round(a * 1000), n)),
    fc.double({ min: 0, max: 1e6, noNaN: true }).map(encodeFaLatencyInfo),
    u32.map(encodeFaHostProgress),
  );

  test.prop([messages, fc.nat({ max: 40 }), fc.nat({ max: 255 }), fc.nat({ max: 3 })])(
    'decodes exactly what decodeFaMessage decodes, and rejects what it rejects (mutated and cut messages)',
    (bytes, at, value, cut) => {
      const m = bytes.slice(0, Math.max(0, bytes.length - (cut === 3 ? 1 : 0)));
      if (at < m.length && cut === 1) m[at] = value;
      const grown = cut === 2 ? Uint8Array.of(...m, value) : m;
      expect(viaInto(grown, 2)).toEqual(viaAlloc(grown, 2));
    },
  );

  test.prop([fc.uint8Array({ maxLength: 40 })])('random bytes: same verdict as decodeFaMessage', (bytes) => {
    expect(viaInto(bytes, 2)).toEqual(viaAlloc(bytes, 2));
  });
});

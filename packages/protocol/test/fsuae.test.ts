import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  compareFsUaeInputEvents,
  DecodeError,
  decodeFsUaeMessage,
  decodeFsUaeMessages,
  EncodeError,
  encodeFsUaeMessage,
  type FsUaeInputEvent,
  type FsUaeMessage,
  FsUaeMessageType,
  fsUaeFrameAdvanceLayout,
  fsUaeInputEventLayout,
  fsUaeMessageSize,
  fsUaePingLayout,
  fsUaePongLayout,
  readFsUaeMessage,
} from '../src/index.js';

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const time = fc.maxSafeNat();
const inputEventArb: fc.Arbitrary<FsUaeInputEvent> = fc.record({
  kind: fc.constant('input-event' as const),
  targetFrame: u32,
  orderKey: u32,
  clientId: fc.integer({ min: 0, max: 0xffff }),
  payload: fc.uint8Array({ maxLength: 255 }),
});
const messageArb: fc.Arbitrary<FsUaeMessage> = fc.oneof(
  inputEventArb,
  fc.record({ kind: fc.constant('frame-advance' as const), frame: u32 }),
  fc.record({ kind: fc.constant('ping' as const), sequence: u32, sentAt: time }),
  fc.record({ kind: fc.constant('pong' as const), sequence: u32, pingSentAt: time, repliedAt: time }),
);

function encode(msg: FsUaeMessage): Uint8Array {
  const b = new Uint8Array(fsUaeMessageSize(msg));
  expect(encodeFsUaeMessage(msg, b)).toBe(b.length);
  return b;
}

/** What the buffer-layout declaration writes for `msg`. */
function oracle(msg: FsUaeMessage): Uint8Array {
  switch (msg.kind) {
    case 'input-event': {
      const l = fsUaeInputEventLayout(msg.payload.length);
      const b = new Uint8Array(l.span);
      const { targetFrame, orderKey, clientId, payload } = msg;
      l.encode({ type: 1, targetFrame, orderKey, clientId, payloadLength: payload.length, payload }, b);
      return b;
    }
    case 'frame-advance': {
      const b = new Uint8Array(fsUaeFrameAdvanceLayout.span);
      fsUaeFrameAdvanceLayout.encode({ type: 2, frame: msg.frame }, b);
      return b;
    }
    case 'ping': {
      const b = new Uint8Array(fsUaePingLayout.span);
      fsUaePingLayout.encode({ type: 3, sequence: msg.sequence, sentAt: msg.sentAt }, b);
      return b;
    }
    case 'pong': {
      const b = new Uint8Array(fsUaePongLayout.span);
      fsUaePongLayout.encode(
        { type: 4, sequence: msg.sequence, pingSentAt: msg.pingSentAt, repliedAt: msg.repliedAt },
        b,
      );
      return b;
    }
  }
}

function valueOrDecodeError(fn: () => unknown, length: number): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    const d = e as DecodeError;
    expect(typeof d.code).toBe('string');
    expect(d.offset >= 0 && d.offset <= length).toBe(true);
  }
}

describe('FS-UAE messages', () => {
  test.prop([messageArb])('write exactly the bytes of their buffer-layout declarations', (msg) => {
    expect(encode(msg)).toEqual(oracle(msg));
  });

  test.prop([messageArb])('round-trip', (msg) => {
    expect(decodeFsUaeMessage(encode(msg))).toEqual(msg);
  });

  test.prop([fc.array(messageArb, { maxLength: 6 })])('several messages share one packet', (msgs) => {
    const parts = msgs.map(encode);
    const packet = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      packet.set(p, at);
      at += p.length;
    }
    expect(decodeFsUaeMessages(packet)).toEqual(msgs);
  });

  test.prop([fc.uint8Array({ maxLength: 40 })])(
    'valid bytes re-encode identically; others throw DecodeError',
    (bytes) => {
      let msg: FsUaeMessage;
      try {
        msg = decodeFsUaeMessage(bytes);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
        return;
      }
      expect(encode(msg)).toEqual(bytes);
    },
  );

  test.prop([
    messageArb,
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
    fc.nat(),
  ])('mutated and truncated messages decode or throw DecodeError', (msg, edits, cut) => {
    const bytes = encode(msg);
    for (const [at, v] of edits) bytes[at % bytes.length] = v;
    valueOrDecodeError(() => decodeFsUaeMessage(bytes), bytes.length);
    valueOrDecodeError(() => decodeFsUaeMessages(bytes), bytes.length);
    const short = bytes.subarray(0, cut % (bytes.length + 1));
    valueOrDecodeError(() => readFsUaeMessage(short), short.length);
  });

  it('names its type bytes and rejects unknown ones', () => {
    expect([
      FsUaeMessageType.InputEvent,
      FsUaeMessageType.FrameAdvance,
      FsUaeMessageType.Ping,
      FsUaeMessageType.Pong,
    ]).toEqual([1, 2, 3, 4]);
    expect(() => decodeFsUaeMessage(new Uint8Array([9, 0, 0, 0, 0]))).toThrow(
      expect.objectContaining({ code: 'unknown-type', offset: 0 }),
    );
    const ping = encode({ kind: 'ping', sequence: 1, sentAt: 2 });
    ping[5] = 0x00;
    ping[6] = 0x20;
    expect(() => decodeFsUaeMessage(ping)).toThrow(expect.objectContaining({ code: 'bad-value', offset: 5 }));
  });

  it('refuses out-of-range fields when encoding', () => {
    const t = new Uint8Array(300);
    const ev: FsUaeInputEvent = {
      kind: 'input-event',
      targetFrame: 1,
      orderKey: 2,
      clientId: 3,
      payload: new Uint8Array(0),
    };
    expect(() => encodeFsUaeMessage({ ...ev, clientId: 0x10000 }, t)).toThrow(EncodeError);
    expect(() => encodeFsUaeMessage({ ...ev, payload: new Uint8Array(256) }, t)).toThrow(EncodeError);
    expect(() => encodeFsUaeMessage({ kind: 'ping', sequence: 0, sentAt: -1 }, t)).toThrow(EncodeError);
    expect(() => encodeFsUaeMessage({ kind: 'frame-advance', frame: 1 }, new Uint8Array(4))).toThrow(EncodeError);
  });
});

describe('FS-UAE input event order', () => {
  test.prop([fc.array(inputEventArb, { maxLength: 12 }), fc.nat()])(
    'every peer sorts the same events the same way',
    (events, seed) => {
      const sorted = [...events].sort(compareFsUaeInputEvents);
      // Another peer receives them in another order.
      const shuffled = [...events];
      let s = seed;
      for (let i = shuffled.length - 1; i > 0; i--) {
        s = (s * 1103515245 + 12345) >>> 0;
        const j = s % (i + 1);
        [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
      }
      expect(shuffled.sort(compareFsUaeInputEvents)).toEqual(sorted);
      for (let i = 1; i < sorted.length; i++) {
        const a = sorted[i - 1]!;
        const b = sorted[i]!;
        expect(a.targetFrame <= b.targetFrame).toBe(true);
        if (a.targetFrame === b.targetFrame) expect(a.orderKey <= b.orderKey).toBe(true);
      }
    },
  );

  test.prop([inputEventArb, inputEventArb])('is antisymmetric and ties only identical events', (a, b) => {
    expect(compareFsUaeInputEvents(a, { ...a, payload: a.payload.slice() })).toBe(0);
    const c = compareFsUaeInputEvents(a, b);
    expect(Math.sign(c) + Math.sign(compareFsUaeInputEvents(b, a))).toBe(0);
    if (c === 0) expect(encode(a)).toEqual(encode(b));
  });
});

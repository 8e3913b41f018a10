import { crc32 as zlibCrc32 } from 'node:zlib';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  createFceuServerTcpMessage,
  createFceuTcpFrame,
  createFceuUdpFrame,
  createFceuUdpInput,
  decodeFceuTcpFrame,
  decodeFceuTcpFrameInto,
  decodeFceuUdpFrame,
  decodeFceuUdpFrameInto,
  decodeFceuUdpInput,
  decodeFceuUdpInputInto,
  encodeFceuUdpFrame,
  encodeFceuUdpInput,
  type FceuFrameData,
  type FceuServerTcpMessageValue,
  readFceuServerTcpMessage,
  readFceuServerTcpMessageInto,
} from '../src/index.js';
import { outcome, shifted } from './decode-outcome.js';
import {
  chunkArb,
  editsArb,
  frameArb,
  mutate,
  readInChunks,
  serverStream,
  serverStreamItemsArb,
  serverText,
  tcpFrame,
  textArb,
  u32,
} from './fceu-arbitraries.js';

/** A plain copy of a scratch object (typed arrays as number arrays), to compare states. */
function snapshot(v: object): unknown {
  return JSON.parse(JSON.stringify(v, (_k, x: unknown) => (x instanceof Uint8Array ? [...x] : x)));
}

const edits = editsArb(3);
/** Writes a correct CRC32 (zlib's, little-endian) over bytes[4..] into bytes[0..4), when there is room. */
function withCrc(bytes: Uint8Array): Uint8Array {
  if (bytes.length < 4) return bytes;
  const crc = zlibCrc32(bytes.subarray(4));
  bytes.set([crc & 255, (crc >>> 8) & 255, (crc >>> 16) & 255, crc >>> 24]);
  return bytes;
}

function udpFrame(magic: number, counter: number, frame: FceuFrameData): Uint8Array {
  const b = new Uint8Array(17);
  encodeFceuUdpFrame(magic, counter, frame, b);
  return b;
}
function udpInput(magic: number, counter: number, controller: number): Uint8Array {
  const b = new Uint8Array(13);
  encodeFceuUdpInput(magic, counter, controller, b);
  return b;
}

/**
 * Datagrams worth decoding: valid ones, mutated ones, junk with a correct CRC (which reaches the
 * length and command checks) and plain junk, of lengths around 9, 13 and 17.
 */
const datagramArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.tuple(u32, u32, frameArb).map(([m, c, f]) => udpFrame(m, c, f)),
  fc.tuple(u32, u32, fc.integer({ min: 0, max: 255 })).map(([m, c, p]) => udpInput(m, c, p)),
  fc.tuple(fc.integer({ min: 0, max: 0xfffffffe }), frameArb).map(([c, f]) => tcpFrame(c, f)),
  fc.tuple(u32, u32, frameArb, edits).map(([m, c, f, e]) => mutate(udpFrame(m, c, f), e)),
  fc.tuple(fc.integer({ min: 0, max: 0xfffffffe }), frameArb, edits).map(([c, f, e]) => mutate(tcpFrame(c, f), e)),
  fc.uint8Array({ maxLength: 24 }).map(withCrc),
  fc.uint8Array({ minLength: 8, maxLength: 20 }).map((b) => {
    b.fill(0xff, 0, 4); // the text counter
    return b;
  }),
  textCounterFrameArb(),
  udpFrameAnyCommandArb(),
  fc.uint8Array({ maxLength: 24 }),
);

/**
 * A 17-byte UDP frame with a correct CRC but any command byte (most are not FCE Ultra commands):
 * what the UDP frame fast path must refuse with `unknown-type`.
 */
function udpFrameAnyCommandArb(): fc.Arbitrary<Uint8Array> {
  return fc.tuple(u32, u32, frameArb, fc.integer({ min: 0, max: 255 })).map(([m, c, f, command]) => {
    const b = udpFrame(m, c, f);
    b[16] = command;
    return withCrc(b);
  });
}

/** A well-formed 9-byte TCP frame but for its counter, 0xFFFFFFFF (a text): what the fast paths must refuse. */
function textCounterFrameArb(): fc.Arbitrary<Uint8Array> {
  return frameArb.map((f) => {
    const b = tcpFrame(0, f);
    b.fill(0xff, 0, 4);
    return b;
  });
}

/** The three decoders with their allocating twins and a scratch factory. */
const decoders = [
  { name: 'UDP frame', alloc: decodeFceuUdpFrame, into: decodeFceuUdpFrameInto, create: createFceuUdpFrame },
  { name: 'UDP input', alloc: decodeFceuUdpInput, into: decodeFceuUdpInputInto, create: createFceuUdpInput },
  { name: 'TCP frame', alloc: decodeFceuTcpFrame, into: decodeFceuTcpFrameInto, create: createFceuTcpFrame },
] as const;

/** Calls one decoder's into variant with a scratch of its own kind (the union defeats the overloads). */
function decodeInto(
  d: (typeof decoders)[number],
  scratch: object,
  bytes: Uint8Array,
  offset?: number,
  length?: number,
): unknown {
  const into = d.into as (s: object, b: Uint8Array, o?: number, l?: number) => unknown;
  return into(scratch, bytes, offset, length);
}

describe('FCE Ultra decode-into', () => {
  test.prop([u32, u32, frameArb, fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 0xfffffffe })])(
    'valid messages decode into the scratch to what was encoded, in place',
    (magic, counter, frame, pad, tcpCounter) => {
      const f = createFceuUdpFrame();
      const { frame: inner } = f;
      const { controllers } = inner;
      expect(decodeFceuUdpFrameInto(f, udpFrame(magic, counter, frame))).toBe(f);
      expect(f).toEqual({ magic, counter, frame });
      expect(f.frame).toBe(inner);
      expect(f.frame.controllers).toBe(controllers);
      const i = createFceuUdpInput();
      expect(decodeFceuUdpInputInto(i, udpInput(magic, counter, pad))).toEqual({ magic, counter, controller: pad });
      const t = createFceuTcpFrame();
      const tc = t.frame.controllers;
      expect(decodeFceuTcpFrameInto(t, tcpFrame(tcpCounter, frame))).toEqual({ counter: tcpCounter, frame });
      expect(t.frame.controllers).toBe(tc);
    },
  );

  test.prop([datagramArb], { numRuns: 300 })(
    'agree with the allocating decoders on any bytes: same value or same DecodeError, scratch unchanged on a throw',
    (bytes) => {
      for (const d of decoders) {
        const scratch = d.create();
        const before = snapshot(scratch);
        const expected = outcome(() => d.alloc(bytes));
        const got = outcome(() => decodeInto(d, scratch, bytes));
        if ('ok' in expected) {
          expect('ok' in got).toBe(true);
          expect(scratch).toEqual(expected.ok);
        } else {
          expect(got).toEqual(expected);
          expect(snapshot(scratch)).toEqual(before);
        }
      }
    },
  );

  test.prop([datagramArb, fc.uint8Array({ maxLength: 10 }), fc.uint8Array({ maxLength: 10 })], { numRuns: 200 })(
    'decode at an offset inside a larger buffer as they decode the slice, errors at whole-buffer offsets',
    (bytes, before, after) => {
      const big = new Uint8Array([...before, ...bytes, ...after]);
      const at = before.length;
      for (const d of decoders) {
        const a = d.create();
        const b = d.create();
        const expected = outcome(() => decodeInto(d, a, bytes));
        expect(outcome(() => decodeInto(d, b, big, at, bytes.length))).toEqual(shifted(expected, at));
        expect(b).toEqual(a);
        // Without a length the message runs to the end of the buffer.
        const c = d.create();
        const tail = big.subarray(0, at + bytes.length);
        expect(outcome(() => decodeInto(d, c, tail, at))).toEqual(shifted(expected, at));
        expect(c).toEqual(a);
      }
    },
  );

  test.prop([fc.array(fc.tuple(u32, u32, frameArb), { minLength: 1, maxLength: 8 })])(
    'one scratch reused for a run of datagrams holds each in turn',
    (items) => {
      const f = createFceuUdpFrame();
      for (const [m, c, fr] of items) {
        decodeFceuUdpFrameInto(f, udpFrame(m, c, fr));
        expect(f).toEqual(decodeFceuUdpFrame(udpFrame(m, c, fr)));
      }
    },
  );

  it('refuses a range past the end as truncated, a bad offset or length as bad-range, and a bad scratch as RangeError', () => {
    const bytes = udpFrame(1, 2, { controllers: new Uint8Array([1, 2, 3, 4]), command: 30 });
    const f = createFceuUdpFrame();
    expect(() => decodeFceuUdpFrameInto(f, bytes, 1, 17)).toThrow(
      expect.objectContaining({ code: 'truncated', offset: 17 }),
    );
    expect(() => decodeFceuUdpFrameInto(f, bytes, 18)).toThrow(expect.objectContaining({ code: 'truncated' }));
    const badRange = (offset: number) => expect.objectContaining({ name: 'DecodeError', code: 'bad-range', offset });
    expect(() => decodeFceuUdpFrameInto(f, bytes, -1, 17)).toThrow(badRange(0));
    expect(() => decodeFceuUdpInputInto(createFceuUdpInput(), bytes, 0, 1.5)).toThrow(badRange(0));
    expect(() => decodeFceuTcpFrameInto(createFceuTcpFrame(), bytes, Number.NaN)).toThrow(badRange(0));
    const short = { magic: 0, counter: 0, frame: { controllers: new Uint8Array(3), command: 0 } };
    expect(() => decodeFceuUdpFrameInto(short, bytes)).toThrow(RangeError);
    expect(short).toEqual({ magic: 0, counter: 0, frame: { controllers: new Uint8Array(3), command: 0 } });
  });
});

/** The allocating reader's result in the shape the into reader leaves its scratch. */
function asValue(m: ReturnType<typeof readFceuServerTcpMessage>, scratch: FceuServerTcpMessageValue): unknown {
  if (m === undefined) return undefined;
  const msg = m.message;
  if (msg.kind === 'frame') {
    return { size: m.size, value: { kind: 'frame', counter: msg.counter, frame: msg.frame, text: '' } };
  }
  return { size: m.size, value: { kind: 'text', counter: 0xffffffff, frame: scratch.frame, text: msg.text } };
}

describe('FCE Ultra TCP stream read-into', () => {
  const streamBytesArb = fc.oneof(
    fc.uint8Array({ maxLength: 40 }),
    fc.tuple(fc.integer({ min: 0, max: 0xfffffffe }), frameArb, edits).map(([c, f, e]) => mutate(tcpFrame(c, f), e)),
    fc.tuple(textArb, edits).map(([t, e]) => mutate(serverText(t), e)),
    textCounterFrameArb(),
  );

  test.prop([streamBytesArb, fc.nat({ max: 12 }), fc.option(fc.integer({ min: 1, max: 300 }), { nil: undefined })], {
    numRuns: 200,
  })('agrees with readFceuServerTcpMessage at any offset', (bytes, offset, maxBytes) => {
    const options = maxBytes === undefined ? undefined : { maxBytes };
    const scratch = createFceuServerTcpMessage();
    const before = snapshot(scratch);
    const expected = outcome(() => asValue(readFceuServerTcpMessage(bytes, offset, options), scratch));
    const got = outcome(() => {
      const size = readFceuServerTcpMessageInto(scratch, bytes, offset, options);
      return size === 0 ? undefined : { size, value: { ...scratch } };
    });
    expect(got).toEqual(expected);
    if (!('ok' in got) || got.ok === undefined) expect(snapshot(scratch)).toEqual(before);
  });

  test.prop([serverStreamItemsArb, chunkArb])(
    'reads a chunked stream message by message into one scratch',
    (items, chunk) => {
      const stream = serverStream(items);
      const scratch = createFceuServerTcpMessage();
      const got: unknown[] = [];
      const consumed = readInChunks(stream, chunk, (prefix, offset) => {
        const n = readFceuServerTcpMessageInto(scratch, prefix, offset);
        if (n !== 0) {
          got.push(
            scratch.kind === 'text'
              ? { t: scratch.text }
              : {
                  counter: scratch.counter,
                  f: { controllers: scratch.frame.controllers.slice(), command: scratch.frame.command },
                },
          );
        }
        return n;
      });
      expect(consumed).toBe(stream.length);
      expect(got).toEqual(items.map((it, i) => ('t' in it ? { t: it.t } : { counter: i, f: it.f })));
    },
  );

  it('refuses a malformed offset as bad-range', () => {
    expect(() => readFceuServerTcpMessageInto(createFceuServerTcpMessage(), new Uint8Array(9), -1)).toThrow(
      expect.objectContaining({ name: 'DecodeError', code: 'bad-range', offset: 0 }),
    );
  });
});

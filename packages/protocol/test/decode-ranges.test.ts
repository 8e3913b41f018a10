import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  ByteReader,
  createFceuServerTcpMessage,
  createFceuTcpFrame,
  createFceuUdpFrame,
  createFceuUdpInput,
  DecodeError,
  decodeFceuFrameData,
  decodeFceuTcpFrameInto,
  decodeFceuUdpFrameInto,
  decodeFceuUdpInputInto,
  decodeInputStream,
  decodeRetroArchCrcInto,
  decodeRetroArchHeader,
  decodeRetroArchInputInto,
  decodeRetroArchNoInput,
  decodeRetroArchPayload,
  inputStreamDecodedSize,
  RetroArchInputFrame,
  readFceuClientText,
  readFceuServerTcpMessage,
  readFceuServerTcpMessageInto,
  readFsUaeMessage,
  readInputStreamHeader,
} from '../src/index.js';

/*
 * Every decoder that takes a caller's offset (and length) into a larger buffer, called with any
 * numbers at all: the only thing it may throw is DecodeError, with an integer offset ≥ 0, and an
 * offset or length that is not an integer 0..2^32−1 is always `bad-range`.
 */

/** One decoder, called on `bytes` at `offset` with `length` (ignored by those that take only an offset). */
type Call = (bytes: Uint8Array, offset: number, length: number | undefined) => unknown;

const calls: Record<string, { call: Call; takesLength: boolean }> = {
  decodeInputStream: {
    call: (b, offset, length) =>
      decodeInputStream(b, new Uint8Array(1024), { offset, length, reference: new Uint8Array(b[offset + 6] ?? 1) }),
    takesLength: true,
  },
  readInputStreamHeader: {
    call: (b, offset, length) => readInputStreamHeader(b, undefined, { offset, length }),
    takesLength: true,
  },
  inputStreamDecodedSize: {
    call: (b, offset, length) => inputStreamDecodedSize(b, { offset, length }),
    takesLength: true,
  },
  decodeFceuUdpFrameInto: {
    call: (b, o, l) => decodeFceuUdpFrameInto(createFceuUdpFrame(), b, o, l),
    takesLength: true,
  },
  decodeFceuUdpInputInto: {
    call: (b, o, l) => decodeFceuUdpInputInto(createFceuUdpInput(), b, o, l),
    takesLength: true,
  },
  decodeFceuTcpFrameInto: {
    call: (b, o, l) => decodeFceuTcpFrameInto(createFceuTcpFrame(), b, o, l),
    takesLength: true,
  },
  readFceuServerTcpMessageInto: {
    call: (b, o) => readFceuServerTcpMessageInto(createFceuServerTcpMessage(), b, o),
    takesLength: false,
  },
  readFceuServerTcpMessage: { call: (b, o) => readFceuServerTcpMessage(b, o), takesLength: false },
  readFceuClientText: { call: (b, o) => readFceuClientText(b, o), takesLength: false },
  decodeFceuFrameData: { call: (b, o) => decodeFceuFrameData(b, o), takesLength: false },
  readFsUaeMessage: { call: (b, o) => readFsUaeMessage(b, o), takesLength: false },
  decodeRetroArchHeader: { call: (b, o) => decodeRetroArchHeader(b, 'client', o), takesLength: false },
  decodeRetroArchInputInto: {
    call: (b, o, l) => decodeRetroArchInputInto(new RetroArchInputFrame(4), b, o, l ?? Math.max(0, b.length - o)),
    takesLength: true,
  },
  decodeRetroArchNoInput: { call: (b, o, l) => decodeRetroArchNoInput(b, o, l ?? 4), takesLength: true },
  decodeRetroArchCrcInto: {
    call: (b, o, l) => decodeRetroArchCrcInto({ frame: 0, crc: 0 }, b, o, l ?? 8),
    takesLength: true,
  },
  decodeRetroArchPayload: {
    call: (b, o, l) => decodeRetroArchPayload(b[0] ?? 0, b, o, l ?? Math.max(0, b.length - o), 'host'),
    takesLength: true,
  },
};

/** What a caller could pass as an offset or a length: small, huge, negative, fractional, NaN, ±Infinity. */
const anyNumber = fc.oneof(
  fc.nat({ max: 80 }),
  fc.nat({ max: 80 }),
  fc.integer({ min: -100, max: -1 }),
  fc.integer({ min: 0, max: 2 ** 32 + 10 }),
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    0.5,
    2 ** 32 - 1,
    2 ** 32,
    2 ** 53,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
  ),
  fc.double(),
);

/** An integer 0..2^32−1: what an offset or a length must be. */
const isIndex = (x: number) => x >>> 0 === x;

/** The DecodeError `fn` threw, `undefined` if it returned; anything else thrown fails the test. */
function decodeErrorOf(fn: () => unknown): DecodeError | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    return e as DecodeError;
  }
}

describe.each(Object.entries(calls))('%s with any offset and length', (_name, { call, takesLength }) => {
  test.prop([fc.uint8Array({ maxLength: 64 }), anyNumber, fc.option(anyNumber, { nil: undefined })], {
    numRuns: 150,
  })('throws only DecodeError, bad-range exactly for a malformed offset or length', (bytes, offset, length) => {
    const error = decodeErrorOf(() => call(bytes, offset, length));
    const malformed = !isIndex(offset) || (takesLength && length !== undefined && !isIndex(length));
    if (malformed) expect(error?.code).toBe('bad-range');
    else if (error !== undefined) expect(error.code).not.toBe('bad-range');
    if (error !== undefined) expect(Number.isSafeInteger(error.offset) && error.offset >= 0).toBe(true);
  });
});

describe('ByteReader with any start and end', () => {
  test.prop([fc.uint8Array({ maxLength: 64 }), anyNumber, fc.option(anyNumber, { nil: undefined })], {
    numRuns: 150,
  })('throws only DecodeError, bad-range for a malformed start or end', (bytes, start, end) => {
    const error = decodeErrorOf(() => new ByteReader(bytes, start, end).u8('a byte'));
    if (!isIndex(start) || (end !== undefined && !isIndex(end))) expect(error?.code).toBe('bad-range');
    else if (end === undefined || start <= end) expect(error?.code).not.toBe('bad-range');
    if (error !== undefined) expect(Number.isSafeInteger(error.offset) && error.offset >= 0).toBe(true);
  });
});

describe('regression (issue 13): the input-stream functions throw DecodeError for a bad { offset, length }', () => {
  const packet = new Uint8Array([0, 0, 0, 0, 1, 0, 1, 0, 8]);
  it.each([
    { offset: -1 },
    { offset: 0.5 },
    { offset: Number.NaN },
    { offset: Number.POSITIVE_INFINITY },
    { offset: 2 ** 53 },
    { length: -1 },
    { length: 1.5 },
    { length: Number.NaN },
    { length: Number.NEGATIVE_INFINITY },
    { offset: 3, length: 2 ** 40 },
  ])('%o', (range) => {
    for (const fn of [
      () => decodeInputStream(packet, new Uint8Array(8), range),
      () => readInputStreamHeader(packet, undefined, range),
      () => inputStreamDecodedSize(packet, range),
    ]) {
      const error = decodeErrorOf(fn);
      expect(error?.code).toBe('bad-range');
      expect(error?.offset).toBe(range.offset === 3 ? 3 : 0);
    }
  });
});

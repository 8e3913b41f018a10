import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  DecodeError,
  decodeInputStream,
  EncodeError,
  encodeInputStream,
  INPUT_STREAM_HEADER_SIZE,
  type InputStreamDecodeOptions,
  type InputStreamHeaderInfo,
  inputStreamDecodedSize,
  inputStreamMaxEncodedSize,
  readInputStreamHeader,
} from '../src/index.js';
import { concat } from './concat.js';
import { outcome, shifted } from './decode-outcome.js';

/**
 * The oracle: a deliberately plain reference encoder written from docs/input-stream.md. It
 * builds the diff stream as an array of 0/1, lists the zero runs and writes each as LEB128.
 * (The input stream is bit-packed and variable-length, so a buffer-layout declaration cannot
 * describe it; this reference encoder plays that role.)
 */
function referenceEncode(
  startFrame: number,
  inputSize: number,
  frames: Uint8Array[],
  reference?: Uint8Array,
): number[] {
  const out: number[] = [];
  out.push((startFrame >>> 24) & 255, (startFrame >>> 16) & 255, (startFrame >>> 8) & 255, startFrame & 255);
  out.push(frames.length, inputSize >> 8, inputSize & 255, reference ? 1 : 0);
  const bits: number[] = [];
  let prev = reference ?? new Uint8Array(inputSize);
  for (const frame of frames) {
    for (let j = 0; j < inputSize; j++) {
      const d = frame[j]! ^ prev[j]!;
      for (let b = 0; b < 8; b++) bits.push((d >> b) & 1);
    }
    prev = frame;
  }
  const runs: number[] = [];
  let zeros = 0;
  for (const bit of bits) {
    if (bit) {
      runs.push(zeros);
      zeros = 0;
    } else zeros++;
  }
  runs.push(zeros);
  for (let r of runs) {
    do {
      const low = r % 128;
      r = Math.floor(r / 128);
      out.push(r > 0 ? low + 128 : low);
    } while (r > 0);
  }
  return out;
}

function lebLength(v: number): number {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

function popcount(bytes: Uint8Array): number {
  let c = 0;
  for (const b of bytes) for (let k = 0; k < 8; k++) c += (b >> k) & 1;
  return c;
}

/** A sequence of frames of one input size, with an optional reference frame. */
const sequenceArb = fc.integer({ min: 1, max: 24 }).chain((inputSize) =>
  fc.record({
    startFrame: fc.integer({ min: 0, max: 0xffffffff }),
    inputSize: fc.constant(inputSize),
    frames: fc.array(fc.uint8Array({ minLength: inputSize, maxLength: inputSize }), { minLength: 1, maxLength: 16 }),
    reference: fc.option(fc.uint8Array({ minLength: inputSize, maxLength: inputSize }), { nil: undefined }),
  }),
);

/** Frames as a pad would produce them: long holds of the same buttons with occasional changes. */
const heldArb = fc.integer({ min: 1, max: 16 }).chain((inputSize) =>
  fc.record({
    inputSize: fc.constant(inputSize),
    first: fc.uint8Array({ minLength: inputSize, maxLength: inputSize }),
    changes: fc.array(fc.tuple(fc.integer({ min: 1, max: 63 }), fc.nat(), fc.integer({ min: 0, max: 7 })), {
      maxLength: 3,
    }),
    frameCount: fc.integer({ min: 1, max: 64 }),
  }),
);

function encode(seq: {
  startFrame: number;
  inputSize: number;
  frames: Uint8Array[];
  reference?: Uint8Array | undefined;
}): Uint8Array {
  const target = new Uint8Array(inputStreamMaxEncodedSize(seq.frames.length, seq.inputSize));
  const n = encodeInputStream(
    { startFrame: seq.startFrame, frameCount: seq.frames.length, inputSize: seq.inputSize },
    concat(seq.frames),
    seq.reference,
    target,
  );
  return target.subarray(0, n);
}

function expectValueOrDecodeError(fn: () => unknown, length: number): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    const d = e as DecodeError;
    expect(typeof d.code).toBe('string');
    expect(d.offset >= 0 && d.offset <= length).toBe(true);
  }
}

describe('input stream', () => {
  test.prop([sequenceArb])('writes exactly the bytes of the reference encoder', (seq) => {
    expect([...encode(seq)]).toEqual(referenceEncode(seq.startFrame, seq.inputSize, seq.frames, seq.reference));
  });

  test.prop([sequenceArb])('round-trips arbitrary frame sequences', (seq) => {
    const bytes = encode(seq);
    const expected = concat(seq.frames);
    expect(inputStreamDecodedSize(bytes)).toBe(expected.length);
    const out = new Uint8Array(expected.length + 5).fill(0xee);
    const header: InputStreamHeaderInfo = { startFrame: -1, frameCount: -1, inputSize: -1, hasReference: false };
    expect(decodeInputStream(bytes, out, { reference: seq.reference, header })).toBe(expected.length);
    expect(out.subarray(0, expected.length)).toEqual(expected);
    expect([...out.subarray(expected.length)]).toEqual([0xee, 0xee, 0xee, 0xee, 0xee]);
    expect(header).toEqual({
      startFrame: seq.startFrame,
      frameCount: seq.frames.length,
      inputSize: seq.inputSize,
      hasReference: seq.reference !== undefined,
    });
  });

  // Sparse changes in large frames: runs of thousands of zero bits, so 2- and 3-byte varints.
  test.prop(
    [
      fc.integer({ min: 1, max: 255 }),
      fc.integer({ min: 1, max: 256 }),
      fc.array(fc.tuple(fc.nat(), fc.nat({ max: 7 })), { maxLength: 6 }),
      fc.boolean(),
    ],
    { numRuns: 200 },
  )('round-trips sparse changes in large frames (multi-byte runs)', (frameCount, inputSize, flips, withReference) => {
    const n = frameCount * inputSize;
    const inputs = new Uint8Array(n);
    for (const [at, bit] of flips) inputs[at % n]! ^= 1 << bit;
    const reference = withReference ? new Uint8Array(inputSize).fill(0x21) : undefined;
    const packet = new Uint8Array(inputStreamMaxEncodedSize(frameCount, inputSize));
    const size = encodeInputStream({ startFrame: 7, frameCount, inputSize }, inputs, reference, packet);
    const out = new Uint8Array(n);
    expect(decodeInputStream(packet.subarray(0, size), out, { reference })).toBe(n);
    // The first differing byte (-1: none). toEqual on a 64 KiB typed array compares element by
    // element through the generic matcher (~100 ms a run: 200 runs neared the test timeout in CI).
    expect(out.findIndex((b, i) => b !== inputs[i])).toBe(-1);
  });

  test.prop([sequenceArb, fc.nat({ max: 6 })])('encodes at an offset and never writes past the target', (seq, at) => {
    const whole = encode(seq);
    for (const room of [whole.length - 1, whole.length]) {
      const big = new Uint8Array(at + whole.length + 4).fill(0xaa);
      const target = big.subarray(0, at + room);
      const header = { startFrame: seq.startFrame, frameCount: seq.frames.length, inputSize: seq.inputSize };
      if (room < whole.length) {
        expect(() => encodeInputStream(header, concat(seq.frames), seq.reference, target, at)).toThrow(EncodeError);
      } else {
        expect(encodeInputStream(header, concat(seq.frames), seq.reference, target, at)).toBe(whole.length);
        expect(big.subarray(at, at + whole.length)).toEqual(whole);
      }
      expect([...big.subarray(at + room)].every((b) => b === 0xaa)).toBe(true);
      expect([...big.subarray(0, at)].every((b) => b === 0xaa)).toBe(true);
    }
  });

  test.prop([sequenceArb])('size stays within the bound the layout gives: 8 + (set diff bits + 1) runs', (seq) => {
    const bytes = encode(seq);
    const total = seq.frames.length * seq.inputSize * 8;
    let setBits = 0;
    let prev = seq.reference ?? new Uint8Array(seq.inputSize);
    for (const f of seq.frames) {
      setBits += popcount(f.map((b, j) => b ^ prev[j]!));
      prev = f;
    }
    expect(bytes.length).toBeLessThanOrEqual(INPUT_STREAM_HEADER_SIZE + (setBits + 1) * lebLength(total));
    expect(bytes.length).toBeLessThanOrEqual(inputStreamMaxEncodedSize(seq.frames.length, seq.inputSize));
  });

  test.prop([heldArb])('held buttons cost almost nothing', ({ inputSize, first, changes, frameCount }) => {
    // Build a held sequence: every frame repeats the previous one except at a few change points.
    const frames: Uint8Array[] = [];
    let cur = first;
    for (let f = 0; f < frameCount; f++) {
      for (const [at, byte, bit] of changes) {
        if (at === f) {
          cur = cur.slice();
          cur[byte % inputSize] = cur[byte % inputSize]! ^ (1 << bit);
        }
      }
      frames.push(cur);
    }
    const total = frameCount * inputSize * 8;
    // Against the previous frame as reference, the diff has at most one bit per change.
    const withRef = encode({ startFrame: 100, inputSize, frames, reference: first });
    expect(withRef.length).toBeLessThanOrEqual(INPUT_STREAM_HEADER_SIZE + (changes.length + 1) * lebLength(total));
    // Without a reference only the first frame's set bits cost extra.
    const alone = encode({ startFrame: 100, inputSize, frames });
    expect(alone.length).toBeLessThanOrEqual(
      INPUT_STREAM_HEADER_SIZE + (popcount(first) + changes.length + 1) * lebLength(total),
    );
  });

  it('fits 8 held frames of 16 bytes in 10 bytes', () => {
    const pad = new Uint8Array(16).fill(0x5a);
    const frames = Array.from({ length: 8 }, () => pad);
    // 8 × 16 × 8 = 1024 zero diff bits: one run, LEB128 of 1024 is 2 bytes.
    expect(encode({ startFrame: 7, inputSize: 16, frames, reference: pad }).length).toBe(10);
  });

  it('needs the reference frame when the packet says so', () => {
    const ref = new Uint8Array([1, 2]);
    const bytes = encode({ startFrame: 5, inputSize: 2, frames: [ref], reference: ref });
    expect(readInputStreamHeader(bytes).hasReference).toBe(true);
    expect(() => decodeInputStream(bytes, new Uint8Array(2))).toThrow(
      expect.objectContaining({ code: 'bad-value', offset: 7 }),
    );
    expect(() => decodeInputStream(bytes, new Uint8Array(2), { reference: new Uint8Array(3) })).toThrow(
      expect.objectContaining({ code: 'bad-length' }),
    );
  });

  it('checks the decoded size against the bound and the output before writing', () => {
    const header = new Uint8Array([0, 0, 0, 0, 255, 0xff, 0xff, 0, 0x80, 0x80, 0x80, 0x40]);
    const out = new Uint8Array(16).fill(9);
    expect(inputStreamDecodedSize(header)).toBe(255 * 65535);
    expect(() => decodeInputStream(header, out)).toThrow(expect.objectContaining({ code: 'too-large', offset: 4 }));
    const small = encode({ startFrame: 0, inputSize: 4, frames: [new Uint8Array(4), new Uint8Array(4)] });
    expect(() => decodeInputStream(small, out, { maxBytes: 7 })).toThrow(
      expect.objectContaining({ code: 'too-large' }),
    );
    expect(() => decodeInputStream(small, new Uint8Array(7))).toThrow(expect.objectContaining({ code: 'too-large' }));
    expect([...out].every((b) => b === 9)).toBe(true);
  });

  it('rejects non-minimal and overlong runs', () => {
    // 1 frame of 1 byte: 8 bits. A final run of 8 written as 0x88 0x00 is not minimal.
    const head = [0, 0, 0, 0, 1, 0, 1, 0];
    expect(decodeInputStream(new Uint8Array([...head, 8]), new Uint8Array(1))).toBe(1);
    expect(() => decodeInputStream(new Uint8Array([...head, 0x88, 0]), new Uint8Array(1))).toThrow(
      expect.objectContaining({ code: 'bad-value', offset: 9 }),
    );
    expect(() => decodeInputStream(new Uint8Array([...head, 9]), new Uint8Array(1))).toThrow(
      expect.objectContaining({ code: 'bad-value', offset: 8 }),
    );
    expect(() => decodeInputStream(new Uint8Array([...head, 0x80, 0x80, 0x80, 0x80, 1]), new Uint8Array(1))).toThrow(
      expect.objectContaining({ code: 'bad-value' }),
    );
    expect(() => decodeInputStream(new Uint8Array([...head, 8, 0]), new Uint8Array(1))).toThrow(
      expect.objectContaining({ code: 'trailing-bytes', offset: 9 }),
    );
  });

  test.prop([
    fc.integer({ min: 1, max: 8 }),
    fc.integer({ min: 1, max: 8 }),
    fc.boolean(),
    fc.uint8Array({ maxLength: 40 }),
  ])('valid bytes re-encode identically', (frameCount, inputSize, hasRef, body) => {
    const bytes = new Uint8Array([0, 0, 1, 2, frameCount, 0, inputSize, hasRef ? 1 : 0, ...body]);
    const reference = hasRef ? new Uint8Array(inputSize).fill(0x33) : undefined;
    const out = new Uint8Array(frameCount * inputSize);
    let n: number;
    try {
      n = decodeInputStream(bytes, out, { reference });
    } catch (e) {
      expect(e).toBeInstanceOf(DecodeError);
      return;
    }
    const again = new Uint8Array(inputStreamMaxEncodedSize(frameCount, inputSize));
    const m = encodeInputStream({ startFrame: 258, frameCount, inputSize }, out.subarray(0, n), reference, again);
    expect(again.subarray(0, m)).toEqual(bytes);
  });

  test.prop([fc.uint8Array({ maxLength: 64 })])(
    'arbitrary bytes decode or throw DecodeError, writing only the announced bytes',
    (bytes) => {
      const out = new Uint8Array(1024).fill(0xa5);
      expectValueOrDecodeError(
        () => decodeInputStream(bytes, out, { reference: new Uint8Array(bytes[6] ?? 1) }),
        bytes.length,
      );
      expectValueOrDecodeError(() => readInputStreamHeader(bytes), bytes.length);
      const announced = bytes.length >= 7 ? bytes[4]! * ((bytes[5]! << 8) | bytes[6]!) : 0;
      // Beyond the announced size nothing is written; a size over the output is refused before any write.
      expect(out.subarray(announced > out.length ? 0 : announced).every((b) => b === 0xa5)).toBe(true);
    },
  );

  test.prop([
    sequenceArb,
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
    fc.nat(),
  ])('mutated and truncated packets decode or throw DecodeError', (seq, edits, cut) => {
    const bytes = encode(seq).slice();
    for (const [at, v] of edits) bytes[at % bytes.length] = v;
    const out = new Uint8Array(4096);
    const reference = seq.reference ?? new Uint8Array(seq.inputSize);
    expectValueOrDecodeError(() => decodeInputStream(bytes, out, { reference, maxBytes: 4096 }), bytes.length);
    const short = bytes.subarray(0, cut % (bytes.length + 1));
    expectValueOrDecodeError(() => decodeInputStream(short, out, { reference, maxBytes: 4096 }), short.length);
  });

  it('refuses impossible headers when encoding', () => {
    const t = new Uint8Array(64);
    expect(() =>
      encodeInputStream({ startFrame: 0, frameCount: 0, inputSize: 1 }, new Uint8Array(1), undefined, t),
    ).toThrow(EncodeError);
    expect(() =>
      encodeInputStream({ startFrame: 0, frameCount: 256, inputSize: 1 }, new Uint8Array(256), undefined, t),
    ).toThrow(EncodeError);
    expect(() =>
      encodeInputStream({ startFrame: -1, frameCount: 1, inputSize: 1 }, new Uint8Array(1), undefined, t),
    ).toThrow(EncodeError);
    expect(() =>
      encodeInputStream({ startFrame: 0, frameCount: 2, inputSize: 2 }, new Uint8Array(3), undefined, t),
    ).toThrow(EncodeError);
    expect(() =>
      encodeInputStream({ startFrame: 0, frameCount: 1, inputSize: 2 }, new Uint8Array(2), new Uint8Array(1), t),
    ).toThrow(EncodeError);
  });
});

/** Packets worth decoding: valid ones, mutated ones, cut ones and plain junk. */
const packetArb: fc.Arbitrary<{ bytes: Uint8Array; reference: Uint8Array | undefined }> = fc.oneof(
  sequenceArb.map((seq) => ({ bytes: encode(seq), reference: seq.reference })),
  fc
    .tuple(sequenceArb, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }), fc.nat())
    .map(([seq, edits, cut]) => {
      const bytes = encode(seq).slice();
      for (const [at, v] of edits) bytes[at % bytes.length] = v;
      return { bytes: bytes.subarray(0, bytes.length - (cut % 3)), reference: seq.reference };
    }),
  fc.record({
    bytes: fc.uint8Array({ maxLength: 48 }),
    reference: fc.option(fc.uint8Array({ minLength: 1, maxLength: 4 }), { nil: undefined }),
  }),
  // A header with edge values (zero counts and sizes, unknown flags), then junk runs.
  fc
    .record({
      startFrame: fc.integer({ min: 0, max: 0xffffffff }),
      frameCount: fc.constantFrom(0, 1, 2, 255),
      inputSize: fc.constantFrom(0, 1, 2, 3, 0x100),
      flags: fc.constantFrom(0, 1, 2, 0x80),
      body: fc.uint8Array({ maxLength: 12 }),
      reference: fc.option(fc.uint8Array({ minLength: 1, maxLength: 3 }), { nil: undefined }),
    })
    .map((h) => ({
      bytes: new Uint8Array([
        h.startFrame >>> 24,
        (h.startFrame >>> 16) & 255,
        (h.startFrame >>> 8) & 255,
        h.startFrame & 255,
        h.frameCount,
        h.inputSize >>> 8,
        h.inputSize & 255,
        h.flags,
        ...h.body,
      ]),
      reference: h.reference,
    })),
);

describe('input stream inside a larger buffer', () => {
  test.prop([packetArb, fc.uint8Array({ maxLength: 12 }), fc.uint8Array({ maxLength: 12 })], { numRuns: 300 })(
    'decoding at an offset gives what decoding the slice gives, errors shifted by the offset',
    ({ bytes, reference }, before, after) => {
      const big = new Uint8Array([...before, ...bytes, ...after]);
      const at = before.length;
      const outSlice = new Uint8Array(512).fill(0x5c);
      const outBig = new Uint8Array(512).fill(0x5c);
      const hSlice: InputStreamHeaderInfo = { startFrame: -1, frameCount: -1, inputSize: -1, hasReference: false };
      const hBig: InputStreamHeaderInfo = { ...hSlice };
      const base = { reference, maxBytes: 512 };
      const expected = outcome(() => decodeInputStream(bytes, outSlice, { ...base, header: hSlice }));
      const got = outcome(() =>
        decodeInputStream(big, outBig, { ...base, header: hBig, offset: at, length: bytes.length }),
      );
      expect(got).toEqual(shifted(expected, at));
      expect(outBig).toEqual(outSlice);
      expect(hBig).toEqual(hSlice);
      // Without a length the packet runs to the end of the buffer: the same when nothing follows it.
      const tail = big.subarray(0, at + bytes.length);
      outBig.fill(0x5c);
      expect(outcome(() => decodeInputStream(tail, outBig, { ...base, offset: at }))).toEqual(shifted(expected, at));
      expect(outBig).toEqual(outSlice);
      // The header readers take the same range.
      const range = { offset: at, length: bytes.length };
      expect(outcome(() => readInputStreamHeader(big, undefined, range))).toEqual(
        shifted(
          outcome(() => readInputStreamHeader(bytes)),
          at,
        ),
      );
      expect(outcome(() => inputStreamDecodedSize(big, range))).toEqual(
        shifted(
          outcome(() => inputStreamDecodedSize(bytes)),
          at,
        ),
      );
    },
  );

  test.prop([
    fc.uint8Array({ maxLength: 64 }),
    fc.nat({ max: 70 }),
    fc.option(fc.nat({ max: 70 }), { nil: undefined }),
  ])(
    'arbitrary bytes at any offset and length decode or throw DecodeError inside the buffer',
    (bytes, offset, length) => {
      const out = new Uint8Array(1024);
      const options: InputStreamDecodeOptions = { offset, length, reference: new Uint8Array(bytes[offset + 6] ?? 1) };
      expectValueOrDecodeError(() => decodeInputStream(bytes, out, options), bytes.length);
      expectValueOrDecodeError(() => readInputStreamHeader(bytes, undefined, { offset, length }), bytes.length);
      expectValueOrDecodeError(() => inputStreamDecodedSize(bytes, { offset, length }), bytes.length);
    },
  );

  it('decodes the example of docs/input-stream.md behind a header of the caller', () => {
    // A 3-byte header of our own, the documented packet, then 2 bytes of the next message.
    const message = new Uint8Array([
      0xaa, 0xbb, 0xcc, 0x00, 0x00, 0x03, 0xe8, 0x03, 0x00, 0x02, 0x01, 0x00, 0x1f, 0x0f, 0xdd, 0xee,
    ]);
    const out = new Uint8Array(6);
    const header: InputStreamHeaderInfo = { startFrame: 0, frameCount: 0, inputSize: 0, hasReference: false };
    const options = { offset: 3, length: 11, reference: new Uint8Array([0x10, 0x00]), header };
    expect(decodeInputStream(message, out, options)).toBe(6);
    expect([...out]).toEqual([0x11, 0x00, 0x11, 0x00, 0x10, 0x00]);
    expect(header).toEqual({ startFrame: 1000, frameCount: 3, inputSize: 2, hasReference: true });
    // Up to the end of the buffer, the next message's bytes are trailing bytes, at their index.
    expect(() => decodeInputStream(message, out, { ...options, length: undefined })).toThrow(
      expect.objectContaining({ code: 'trailing-bytes', offset: 14 }),
    );
    // Without the reference, the flag byte is reported where it lies in the buffer.
    expect(() => decodeInputStream(message, out, { offset: 3, length: 11 })).toThrow(
      expect.objectContaining({ code: 'bad-value', offset: 10 }),
    );
  });

  it('refuses a range past the end as truncated and a malformed offset or length as bad-range', () => {
    const bytes = new Uint8Array([0, 0, 0, 0, 1, 0, 1, 0, 8]);
    const out = new Uint8Array(1);
    expect(decodeInputStream(bytes, out, { offset: 0, length: 9 })).toBe(1);
    expect(() => decodeInputStream(bytes, out, { offset: 1, length: 9 })).toThrow(
      expect.objectContaining({ code: 'truncated', offset: 9 }),
    );
    expect(() => decodeInputStream(bytes, out, { offset: 10 })).toThrow(
      expect.objectContaining({ code: 'truncated', offset: 9 }),
    );
    expect(() => decodeInputStream(bytes, out, { offset: 9 })).toThrow(
      expect.objectContaining({ code: 'truncated', offset: 9 }),
    );
    const badRange = (offset: number) => expect.objectContaining({ name: 'DecodeError', code: 'bad-range', offset });
    expect(() => decodeInputStream(bytes, out, { offset: -1 })).toThrow(badRange(0));
    expect(() => decodeInputStream(bytes, out, { offset: 0.5 })).toThrow(badRange(0));
    expect(() => decodeInputStream(bytes, out, { offset: 2, length: -1 })).toThrow(badRange(2));
    expect(() => readInputStreamHeader(bytes, undefined, { offset: Number.NaN })).toThrow(badRange(0));
    expect(() => inputStreamDecodedSize(bytes, { length: Number.POSITIVE_INFINITY })).toThrow(badRange(0));
  });
});

/**
 * The hand-written per-frame codecs (INPUT, NOINPUT, CRC) must write exactly the bytes their
 * buffer-layout declarations write, and read back what the declarations wrote. The declaration is
 * the oracle.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  DecodeError,
  decodeRetroArchCrcInto,
  decodeRetroArchInputInto,
  decodeRetroArchNoInput,
  EncodeError,
  encodeRetroArchCrc,
  encodeRetroArchInput,
  encodeRetroArchNoInput,
  RETROARCH_MAX_INPUT_WORDS,
  RetroArchInputFrame,
  retroArchInputSize,
  retroArchLayouts,
} from '../src/index.js';

const u32 = fc.nat({ max: 0xffffffff });
const words = fc.array(u32, { maxLength: RETROARCH_MAX_INPUT_WORDS });
const offset = fc.nat({ max: 24 });
const fillByte = fc.nat({ max: 255 });

describe('INPUT codec vs its buffer-layout declaration', () => {
  test.prop([u32, u32, words, offset, fillByte])(
    'writes the same bytes at any offset of a dirty buffer',
    (frame, client, input, at, fill) => {
      const size = retroArchInputSize(input.length);
      const layout = retroArchLayouts.inputFrameLayout(input.length);
      expect(layout.span).toBe(size);
      const expected = new Uint8Array(at + size + 4).fill(fill);
      layout.encode({ command: 3, length: size - 8, frame, client, input }, expected, at);
      const actual = new Uint8Array(at + size + 4).fill(fill);
      expect(encodeRetroArchInput(actual, at, frame, client, input)).toBe(size);
      expect(actual).toEqual(expected);
    },
  );

  test.prop([u32, u32, words, offset])('reads what the declaration wrote', (frame, client, input, at) => {
    const layout = retroArchLayouts.inputFrameLayout(input.length);
    const bytes = new Uint8Array(at + layout.span);
    layout.encode({ command: 3, length: layout.span - 8, frame, client, input }, bytes, at);
    const into = new RetroArchInputFrame();
    decodeRetroArchInputInto(into, bytes, at + 8, layout.span - 8);
    expect(into.frame).toBe(frame);
    expect(into.client).toBe(client);
    expect([...into.words.subarray(0, into.count)]).toEqual(input);
  });

  test.prop([fc.array(fc.tuple(u32, u32, words), { minLength: 1, maxLength: 6 })])(
    'stays right when the target and source buffers alternate (DataView cache)',
    (messages) => {
      const buffers = [new Uint8Array(400), new Uint8Array(400)];
      const into = new RetroArchInputFrame();
      messages.forEach(([frame, client, input], i) => {
        const target = buffers[i % 2]!;
        const n = encodeRetroArchInput(target, 0, frame, client, input);
        decodeRetroArchInputInto(into, target, 8, n - 8);
        expect([into.frame, into.client, ...into.words.subarray(0, into.count)]).toEqual([frame, client, ...input]);
      });
    },
  );

  test.prop([u32, u32, words])('sends only the first `count` words when asked', (frame, client, input) => {
    const count = Math.floor(input.length / 2);
    const a = new Uint8Array(retroArchInputSize(count));
    const b = new Uint8Array(retroArchInputSize(count));
    encodeRetroArchInput(a, 0, frame, client, input, count);
    encodeRetroArchInput(b, 0, frame, client, input.slice(0, count));
    expect(a).toEqual(b);
  });

  it('rejects what the declaration would not write', () => {
    expect(() => encodeRetroArchInput(new Uint8Array(20), 0, 0, 0, [2 ** 32])).toThrow(EncodeError);
    expect(() => encodeRetroArchInput(new Uint8Array(20), 0, -1, 0, [])).toThrow(EncodeError);
    expect(() => encodeRetroArchInput(new Uint8Array(19), 0, 0, 0, [1])).toThrow(
      expect.objectContaining({ code: 'buffer-too-small' }),
    );
    expect(() => encodeRetroArchInput(new Uint8Array(40), 0, 0, 0, [1], 2)).toThrow(EncodeError);
  });

  it('names the first thing wrong: count, then room, then frame/client, then the first bad word', () => {
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return `${(e as EncodeError).code}: ${(e as EncodeError).message}`;
      }
      return 'ok';
    };
    expect(code(() => encodeRetroArchInput(new Uint8Array(8), 0, -1, 0, [1], 2))).toMatch(
      /^out-of-range: count 2 of 1/,
    );
    expect(code(() => encodeRetroArchInput(new Uint8Array(8), 0, -1, 0, [1]))).toMatch(/^buffer-too-small/);
    expect(code(() => encodeRetroArchInput(new Uint8Array(8), Number.NaN, 0, 0, []))).toMatch(/^buffer-too-small/);
    expect(code(() => encodeRetroArchInput(new Uint8Array(24), 0, 1.5, 0, [-1]))).toMatch(/^out-of-range: frame 1.5/);
    expect(code(() => encodeRetroArchInput(new Uint8Array(28), 0, 0, 0, [1, 2 ** 32, -1]))).toMatch(
      /^out-of-range: input word 1 = 4294967296/,
    );
    expect(code(() => encodeRetroArchInput(new Uint8Array(28), 0, 0, 0, [1, 2, 3]))).toBe('ok');
  });

  // Any number where a u32 or an index goes: integers in and out of range, fractions, NaN, ±Infinity.
  const anyNumber = fc.oneof(
    u32,
    fc.integer({ min: -8, max: 40 }),
    fc.constantFrom(-1, 0.5, 1.5, 2 ** 32, 2 ** 53, Number.NaN, Infinity, -Infinity, -0),
    fc.double(),
  );
  test.prop(
    [anyNumber, anyNumber, anyNumber, fc.array(anyNumber, { maxLength: 4 }), fc.option(anyNumber), fc.nat({ max: 40 })],
    {
      numRuns: 500,
    },
  )(
    "any arguments: the declaration's bytes, or an EncodeError; a frame that does not fit writes nothing",
    (at, frame, client, input, count, room) => {
      const target = new Uint8Array(room).fill(0xa5);
      let n: number;
      try {
        n =
          count === null
            ? encodeRetroArchInput(target, at, frame, client, input)
            : encodeRetroArchInput(target, at, frame, client, input, count);
      } catch (e) {
        expect(e).toBeInstanceOf(EncodeError);
        if ((e as EncodeError).code === 'buffer-too-small' || input.length <= 1)
          expect(target.every((b) => b === 0xa5)).toBe(true);
        return;
      }
      const k = count ?? input.length;
      const words = input.slice(0, k);
      expect(n).toBe(retroArchInputSize(k));
      const expected = new Uint8Array(room).fill(0xa5);
      retroArchLayouts
        .inputFrameLayout(k)
        .encode({ command: 3, length: n - 8, frame, client, input: words }, expected, at);
      expect(target).toEqual(expected);
      for (const v of [at, frame, client, k, ...words]) expect(v >>> 0 === v).toBe(true);
    },
  );

  it('refuses an offset or count that is not an integer (DataView would truncate it)', () => {
    const t = new Uint8Array(64);
    expect(() => encodeRetroArchInput(t, 1.5, 0, 0, [1])).toThrow(expect.objectContaining({ code: 'out-of-range' }));
    expect(() => encodeRetroArchInput(t, 0, 0, 0, [1, 2], 1.5)).toThrow(
      expect.objectContaining({ code: 'out-of-range' }),
    );
    expect(() => encodeRetroArchInput(t, 2 ** 32, 0, 0, [1])).toThrow(
      expect.objectContaining({ code: 'buffer-too-small' }),
    );
  });

  it('rejects bad payload sizes and too many words with DecodeError', () => {
    const into = new RetroArchInputFrame(2);
    const bytes = new Uint8Array(64);
    expect(() => decodeRetroArchInputInto(into, bytes, 0, 6)).toThrow(expect.objectContaining({ code: 'bad-length' }));
    expect(() => decodeRetroArchInputInto(into, bytes, 0, 10)).toThrow(expect.objectContaining({ code: 'bad-length' }));
    expect(() => decodeRetroArchInputInto(into, bytes, 0, 20)).toThrow(expect.objectContaining({ code: 'too-large' }));
    expect(() => decodeRetroArchInputInto(into, bytes, 60, 8)).toThrow(expect.objectContaining({ code: 'truncated' }));
    expect(decodeRetroArchInputInto(into, bytes, 0, 16).count).toBe(2);
  });
});

describe('NOINPUT codec vs its buffer-layout declaration', () => {
  test.prop([u32, offset, fillByte])('writes the same bytes and reads them back', (frame, at, fill) => {
    const expected = new Uint8Array(at + 12 + 3).fill(fill);
    retroArchLayouts.noInputFrameLayout.encode({ command: 4, length: 4, frame }, expected, at);
    const actual = new Uint8Array(at + 12 + 3).fill(fill);
    expect(encodeRetroArchNoInput(actual, at, frame)).toBe(12);
    expect(actual).toEqual(expected);
    expect(decodeRetroArchNoInput(expected, at + 8, 4)).toBe(frame);
  });

  it('rejects a payload that is not 4 bytes', () => {
    expect(() => decodeRetroArchNoInput(new Uint8Array(8), 0, 5)).toThrow(DecodeError);
  });
});

describe('CRC codec vs its buffer-layout declaration', () => {
  test.prop([u32, u32, offset, fillByte])('writes the same bytes and reads them back', (frame, crc, at, fill) => {
    const expected = new Uint8Array(at + 16 + 3).fill(fill);
    retroArchLayouts.crcFrameLayout.encode({ command: 0x40, length: 8, frame, crc }, expected, at);
    const actual = new Uint8Array(at + 16 + 3).fill(fill);
    expect(encodeRetroArchCrc(actual, at, frame, crc)).toBe(16);
    expect(actual).toEqual(expected);
    expect(decodeRetroArchCrcInto({ frame: -1, crc: -1 }, expected, at + 8, 8)).toEqual({ frame, crc });
  });

  it('rejects a payload that is not 8 bytes', () => {
    expect(() => decodeRetroArchCrcInto({ frame: 0, crc: 0 }, new Uint8Array(16), 0, 4)).toThrow(
      expect.objectContaining({ code: 'bad-length', offset: 0 }),
    );
  });
});

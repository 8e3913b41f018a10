import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_PAYLOAD,
  DecodeError,
  EncodeError,
  encodeFrame,
  FRAME_HEADER_SIZE,
  FrameDecoder,
  frameSize,
  writeFrameHeader,
} from '../src/index.js';

interface PlainFrame {
  command: number;
  payload: Uint8Array;
}

/** Independent big-endian frame writer: the expected bytes of a frame. */
function referenceFrame(f: PlainFrame): number[] {
  const be = (v: number) => [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
  return [...be(f.command), ...be(f.payload.length), ...f.payload];
}

function concat(frames: readonly PlainFrame[]): Uint8Array {
  return Uint8Array.from(frames.flatMap(referenceFrame));
}

/** Splits `bytes` at the given cut points (any values; reduced modulo the length, sorted). */
function split(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % (bytes.length + 1))))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const p of points) {
    out.push(bytes.subarray(at, p));
    at = p;
  }
  out.push(bytes.subarray(at));
  return out;
}

/** Feeds chunks and copies each frame out as soon as it is yielded (views are short-lived). */
function decodeAll(chunks: readonly Uint8Array[], decoder = new FrameDecoder()): PlainFrame[] {
  const out: PlainFrame[] = [];
  for (const chunk of chunks) {
    for (const f of decoder.feed(chunk)) out.push({ command: f.command, payload: f.payload.slice() });
  }
  return out;
}

const frameArb: fc.Arbitrary<PlainFrame> = fc.record({
  command: fc.nat({ max: 0xffffffff }),
  payload: fc.oneof(
    { weight: 4, arbitrary: fc.uint8Array({ maxLength: 40 }) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 200, maxLength: 3000 }) },
  ),
});
const framesArb = fc.array(frameArb, { maxLength: 12 });
const cutsArb = fc.array(fc.nat(), { maxLength: 30 });

describe('encodeFrame / writeFrameHeader', () => {
  test.prop([frameArb, fc.nat({ max: 16 })])('write the reference bytes at any offset', (f, offset) => {
    const target = new Uint8Array(offset + frameSize(f.payload.length) + 3).fill(0xaa);
    expect(encodeFrame(target, offset, f.command, f.payload)).toBe(FRAME_HEADER_SIZE + f.payload.length);
    expect([...target.subarray(offset, offset + frameSize(f.payload.length))]).toEqual(referenceFrame(f));
    expect(target.subarray(0, offset).every((b) => b === 0xaa)).toBe(true);
    expect(target.subarray(offset + frameSize(f.payload.length)).every((b) => b === 0xaa)).toBe(true);
  });

  it('refuses a buffer that is too small', () => {
    expect(() => encodeFrame(new Uint8Array(10), 0, 1, new Uint8Array(3))).toThrow(EncodeError);
    expect(() => writeFrameHeader(new Uint8Array(12), 5, 1, 0)).toThrow(
      expect.objectContaining({ code: 'buffer-too-small' }),
    );
  });

  it('refuses a command that is not a u32', () => {
    expect(() => writeFrameHeader(new Uint8Array(8), 0, 2 ** 32, 0)).toThrow(
      expect.objectContaining({ code: 'out-of-range' }),
    );
    expect(() => writeFrameHeader(new Uint8Array(8), 0, -1, 0)).toThrow(EncodeError);
  });
});

describe('FrameDecoder', () => {
  test.prop([framesArb, cutsArb])('yields the encoded frames under any chunking', (frames, cuts) => {
    const stream = concat(frames);
    expect(decodeAll(split(stream, cuts))).toEqual(frames);
  });

  test.prop([framesArb, cutsArb, cutsArb])('yields the same frames under two different chunkings', (frames, a, b) => {
    const stream = concat(frames);
    expect(decodeAll(split(stream, a))).toEqual(decodeAll(split(stream, b)));
  });

  test.prop([fc.array(frameArb, { maxLength: 4 })])('yields the frames when fed one byte at a time', (frames) => {
    const stream = concat(frames);
    const chunks = Array.from(stream, (_, i) => stream.subarray(i, i + 1));
    expect(decodeAll(chunks)).toEqual(frames);
  });

  test.prop([framesArb, cutsArb])('returns fresh copies with copy: true that survive later pushes', (frames, cuts) => {
    const stream = concat(frames);
    const decoder = new FrameDecoder({ copy: true });
    const kept: PlainFrame[] = [];
    for (const chunk of split(stream, cuts)) {
      const owned = chunk.slice();
      for (const f of decoder.feed(owned)) kept.push(f);
      owned.fill(0xee); // the caller reuses its buffer
    }
    expect(kept.map((f) => ({ command: f.command, payload: [...f.payload] }))).toEqual(
      frames.map((f) => ({ command: f.command, payload: [...f.payload] })),
    );
  });

  test.prop([framesArb, cutsArb])('feed() payloads stay valid across later feeds', (frames, cuts) => {
    const stream = concat(frames);
    const decoder = new FrameDecoder();
    const kept = split(stream, cuts).flatMap((chunk) => decoder.feed(chunk));
    expect(kept.map((f) => ({ command: f.command, payload: f.payload.slice() }))).toEqual(frames);
  });

  test.prop([framesArb, fc.integer({ min: 1, max: 64 })])(
    'works with one receive buffer refilled for every chunk once drained',
    (frames, size) => {
      const stream = concat(frames);
      const receive = new Uint8Array(size);
      const decoder = new FrameDecoder();
      const out: PlainFrame[] = [];
      for (let at = 0; at < stream.length; at += size) {
        const n = Math.min(size, stream.length - at);
        receive.fill(0xcc).set(stream.subarray(at, at + n));
        decoder.push(receive.subarray(0, n));
        for (let f = decoder.next(); f !== undefined; f = decoder.next()) {
          out.push({ command: f.command, payload: f.payload.slice() });
        }
      }
      expect(out).toEqual(frames);
    },
  );

  test.prop([framesArb])('does not copy frames that lie inside one chunk', (frames) => {
    const stream = concat(frames);
    const decoder = new FrameDecoder();
    decoder.push(stream);
    for (let f = decoder.next(); f !== undefined; f = decoder.next()) {
      expect(f.payload.buffer).toBe(stream.buffer);
    }
    expect(decoder.reservedBytes).toBe(0);
  });

  test.prop([framesArb, cutsArb])('reports buffered bytes and the stream offset', (frames, cuts) => {
    const stream = concat(frames);
    const decoder = new FrameDecoder();
    let pushed = 0;
    for (const chunk of split(stream, cuts)) {
      decoder.push(chunk);
      pushed += chunk.length;
      while (decoder.readFrame()) {
        // drain
      }
      expect(decoder.streamOffset + decoder.buffered).toBe(pushed);
    }
    expect(decoder.buffered).toBe(0);
    expect(decoder.streamOffset).toBe(stream.length);
  });

  test.prop([framesArb, cutsArb])('readFrame describes the same frames without allocating objects', (frames, cuts) => {
    const stream = concat(frames);
    const decoder = new FrameDecoder();
    const out: PlainFrame[] = [];
    for (const chunk of split(stream, cuts)) {
      decoder.push(chunk);
      while (decoder.readFrame()) {
        out.push({
          command: decoder.command,
          payload: decoder.bytes.slice(decoder.payloadOffset, decoder.payloadOffset + decoder.payloadLength),
        });
      }
    }
    expect(out).toEqual(frames);
  });

  test.prop([fc.uint8Array({ minLength: 24, maxLength: 24 }), framesArb, cutsArb])(
    'reads an unframed prefix with readRaw, then frames',
    (prefix, frames, cuts) => {
      const stream = Uint8Array.from([...prefix, ...concat(frames)]);
      const decoder = new FrameDecoder();
      let raw: Uint8Array | undefined;
      const out: PlainFrame[] = [];
      for (const chunk of split(stream, cuts)) {
        decoder.push(chunk);
        if (raw === undefined) raw = decoder.readRaw(24)?.slice();
        if (raw === undefined) continue;
        for (let f = decoder.next(); f !== undefined; f = decoder.next()) {
          out.push({ command: f.command, payload: f.payload.slice() });
        }
      }
      expect(raw).toEqual(prefix);
      expect(out).toEqual(frames);
    },
  );

  describe('maximum payload', () => {
    it('defaults to 64 MiB', () => {
      expect(DEFAULT_MAX_PAYLOAD).toBe(64 * 1024 * 1024);
      expect(new FrameDecoder().maxPayload).toBe(DEFAULT_MAX_PAYLOAD);
    });

    it('fails with too-large on the 8-byte prefix alone, before reserving anything', () => {
      const decoder = new FrameDecoder();
      // A header announcing 4 GiB - 1, split in two so it passes through the pending buffer.
      decoder.push(Uint8Array.of(0, 0, 0, 0x42, 0xff));
      expect(decoder.readFrame()).toBe(false);
      decoder.push(Uint8Array.of(0xff, 0xff, 0xff));
      let error: unknown;
      try {
        decoder.readFrame();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DecodeError);
      expect(error).toMatchObject({ code: 'too-large', offset: 4 });
      expect(decoder.reservedBytes).toBeLessThanOrEqual(256);
      // The stream is dead: every later call fails the same way.
      expect(() => decoder.push(new Uint8Array(4))).toThrow(error as Error);
      expect(() => decoder.next()).toThrow(error as Error);
    });

    test.prop([framesArb, fc.nat({ max: 1000 }), fc.integer({ min: 1, max: 5000 }), cutsArb])(
      'rejects the first frame over a configured maximum at its length field',
      (before, max, excess, cuts) => {
        const ok = before.filter((f) => f.payload.length <= max);
        const stream = Uint8Array.from([
          ...concat(ok),
          ...referenceFrame({ command: 7, payload: new Uint8Array(max + excess) }),
        ]);
        const decoder = new FrameDecoder({ maxPayload: max });
        const out: PlainFrame[] = [];
        let error: unknown;
        try {
          for (const chunk of split(stream, cuts)) {
            decoder.push(chunk);
            for (let f = decoder.next(); f !== undefined; f = decoder.next()) {
              out.push({ command: f.command, payload: f.payload.slice() });
            }
          }
        } catch (e) {
          error = e;
        }
        expect(out).toEqual(ok);
        expect(error).toBeInstanceOf(DecodeError);
        expect(error).toMatchObject({ code: 'too-large', offset: concat(ok).length + 4 });
        // Nothing was reserved for the oversized payload.
        expect(decoder.reservedBytes).toBeLessThanOrEqual(Math.max(256, FRAME_HEADER_SIZE + max));
      },
    );

    test.prop([fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 1, max: 4096 })])(
      'grows the pending buffer with the bytes received, never past one maximal frame',
      (length, chunkSize) => {
        const max = 20_000;
        const stream = concat([{ command: 1, payload: new Uint8Array(length).fill(3) }]);
        const decoder = new FrameDecoder({ maxPayload: max });
        let received = 0;
        let frames = 0;
        for (let at = 0; at < stream.length; at += chunkSize) {
          const chunk = stream.subarray(at, at + chunkSize);
          received += chunk.length;
          frames += decoder.feed(chunk).length;
          expect(decoder.reservedBytes).toBeLessThanOrEqual(Math.max(256, 2 * received));
          expect(decoder.reservedBytes).toBeLessThanOrEqual(Math.max(256, FRAME_HEADER_SIZE + max));
        }
        expect(frames).toBe(1);
      },
    );
  });

  test.prop([fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 20 }), fc.nat({ max: 100 })])(
    'on arbitrary bytes yields frames or throws DecodeError, nothing else',
    (chunks, max) => {
      const decoder = new FrameDecoder({ maxPayload: max });
      try {
        for (const chunk of chunks) {
          for (const f of decoder.feed(chunk)) expect(f.payload.length).toBeLessThanOrEqual(max);
        }
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
        expect((e as DecodeError).code).toBe('too-large');
        expect(Number.isInteger((e as DecodeError).offset)).toBe(true);
      }
      expect(decoder.reservedBytes).toBeLessThanOrEqual(Math.max(256, FRAME_HEADER_SIZE + max));
    },
  );

  it('rejects a bad maximum and a bad readRaw size', () => {
    expect(() => new FrameDecoder({ maxPayload: -1 })).toThrow(RangeError);
    expect(() => new FrameDecoder({ maxPayload: 10 }).readRaw(100)).toThrow(RangeError);
  });
});

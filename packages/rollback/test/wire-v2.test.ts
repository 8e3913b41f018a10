import { fc, test } from '@fast-check/vitest';
import { DecodeError, decodeInputStream, encodeInputStream, inputStreamMaxEncodedSize } from '@netplay/protocol';
import { ManualClock } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { INPUT_CHANNEL, P2PSession, RollbackError } from '../src/index.js';
import {
  blankInputMessage,
  CHECKSUMS_PER_MESSAGE,
  HELD_ALL,
  INPUT_V1,
  inputStreamOf,
  NO_ECHO,
  readInputMessage,
  resolve16,
  writeInputMessageHead,
  writeInputs,
} from '../src/input-message.js';

const messageArb = fc.record({
  near: fc.integer({ min: 0, max: 2_000_000 }),
  frameOffset: fc.integer({ min: -30_000, max: 30_000 }),
  ackOffset: fc.integer({ min: -30_000, max: 30_000 }),
  heldOffset: fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constant(Number.NaN)),
  seq: fc.integer({ min: 0, max: 0xffff }),
  advantage16: fc.integer({ min: -32768, max: 32767 }),
  echo: fc.option(fc.record({ seq: fc.integer({ min: 0, max: 0xffff }), delay: fc.integer({ min: 0, max: 65534 }) })),
  epoch: fc.integer({ min: 0, max: 255 }),
  loss: fc.integer({ min: 0, max: 255 }),
  sums: fc.array(
    fc.record({ back: fc.integer({ min: 0, max: 30_000 }), bytes: fc.uint8Array({ minLength: 8, maxLength: 8 }) }),
    {
      maxLength: CHECKSUMS_PER_MESSAGE,
    },
  ),
  inputs: fc.option(
    fc.record({
      startOffset: fc.integer({ min: -30_000, max: 30_000 }),
      frames: fc.array(fc.uint8Array({ minLength: 2, maxLength: 2 }), { minLength: 1, maxLength: 40 }),
      ref: fc.option(fc.uint8Array({ minLength: 2, maxLength: 2 })),
    }),
  ),
});

describe('INPUT, wire version 2', () => {
  test.prop([messageArb])('round-trips every field (frames resolved near the receiver)', (g) => {
    const m = blankInputMessage();
    const frame = Math.max(0, g.near + g.frameOffset);
    m.seq = g.seq;
    m.frame = frame;
    m.ack = Math.max(0, g.near + g.ackOffset);
    m.held = Number.isNaN(g.heldOffset) ? HELD_ALL : Math.max(0, frame + g.heldOffset);
    m.advantage16 = g.advantage16;
    m.echoSeq = g.echo?.seq ?? 0;
    m.echoDelay = g.echo === null ? NO_ECHO : g.echo.delay;
    m.epoch = g.epoch;
    m.loss = g.loss;
    m.sumCount = g.sums.length;
    m.sumRepairs = g.epoch ^ 0x5a;
    g.sums.forEach((s, i) => {
      m.sumFrames[i] = Math.max(0, g.near - s.back);
      m.sumBytes.set(s.bytes, i * 8);
    });
    const buf = new Uint8Array(4096);
    let n = writeInputMessageHead(buf, m);
    let start = 0;
    if (g.inputs !== null) {
      start = Math.max(1, g.near + g.inputs.startOffset);
      const flat = new Uint8Array(g.inputs.frames.length * 2);
      g.inputs.frames.forEach((f, i) => {
        flat.set(f, i * 2);
      });
      const stream = new Uint8Array(inputStreamMaxEncodedSize(g.inputs.frames.length, 2));
      const sn = encodeInputStream(
        { startFrame: start, frameCount: g.inputs.frames.length, inputSize: 2 },
        flat,
        g.inputs.ref ?? undefined,
        stream,
      );
      n = writeInputs(buf, n, stream, sn);
    }
    const bytes = buf.slice(0, n);
    const back = blankInputMessage();
    readInputMessage(bytes, back, g.near, g.near);
    expect({
      seq: back.seq,
      frame: back.frame,
      ack: back.ack,
      held: back.held,
      advantage16: back.advantage16,
      echo: back.echoDelay === NO_ECHO ? null : { seq: back.echoSeq, delay: back.echoDelay },
      epoch: back.epoch,
      loss: back.loss,
      sums: Array.from({ length: back.sumCount }, (_, i) => [
        back.sumFrames[i],
        [...back.sumBytes.subarray(i * 8, i * 8 + 8)],
      ]),
      repairs: back.sumCount > 0 ? back.sumRepairs : undefined,
    }).toEqual({
      seq: m.seq,
      frame: m.frame,
      ack: m.ack,
      held: m.held,
      advantage16: m.advantage16,
      echo: g.echo,
      epoch: m.epoch,
      loss: m.loss,
      sums: g.sums.map((s, i) => [m.sumFrames[i], [...s.bytes]]),
      repairs: m.sumCount > 0 ? m.sumRepairs : undefined,
    });
    if (g.inputs !== null) {
      expect({ count: back.inputCount, start: back.inputStart, ref: back.inputRef }).toEqual({
        count: g.inputs.frames.length,
        start,
        ref: g.inputs.ref !== null,
      });
      const packet = new Uint8Array(bytes.length + 8);
      const pn = inputStreamOf(bytes, back, 2, packet);
      const out = new Uint8Array(g.inputs.frames.length * 2);
      decodeInputStream(packet.subarray(0, pn), out, { reference: g.inputs.ref ?? undefined });
      expect([...out]).toEqual(g.inputs.frames.flatMap((f) => [...f]));
    } else expect(back.inputCount).toBe(0);
  });

  test.prop([fc.uint8Array({ maxLength: 200 }), fc.nat(), fc.nat()], { numRuns: 500 })(
    'decoding any bytes gives a message or a typed error, writing only into the reused record',
    (bytes, near, ackNear) => {
      const m = blankInputMessage();
      const { sumFrames, sumBytes } = m;
      try {
        readInputMessage(bytes, m, near, ackNear);
        // Bounded: at most 8 checksums, inputs are a range of the given bytes.
        expect(m.sumCount).toBeLessThanOrEqual(CHECKSUMS_PER_MESSAGE);
        expect(m.runsAt).toBeLessThanOrEqual(bytes.length);
        expect(m.inputCount).toBeLessThanOrEqual(255);
      } catch (e) {
        if (e instanceof RollbackError) expect(e.code).toBe('version');
        else expect(e).toBeInstanceOf(DecodeError);
      }
      expect(m.sumFrames).toBe(sumFrames);
      expect(m.sumBytes).toBe(sumBytes);
    },
  );

  test.prop([
    fc.integer({ min: 0, max: 0xffff }),
    fc.integer({ min: 0, max: 5_000_000 }),
    fc.integer({ min: -32767, max: 32767 }),
  ])('a 16-bit frame resolves to the whole frame within ±32767 of the reference', (_x, near, offset) => {
    const whole = near + offset;
    if (whole < 0) return;
    expect(resolve16(whole & 0xffff, near)).toBe(whole);
  });

  it('a version-1 INPUT is reported as a typed version error, not taken', () => {
    const clock = new ManualClock();
    const s = new P2PSession({
      players: 2,
      inputBytes: 1,
      localPlayer: 0,
      remotes: [{ peer: 'b', player: 1 }],
      isHost: true,
      clock,
      send: () => {},
    });
    const errors: unknown[] = [];
    s.on('protocol-error', ({ error }) => errors.push(error));
    const v1 = new Uint8Array(27);
    v1[0] = INPUT_V1;
    v1[1] = 1;
    s.receive('b', INPUT_CHANNEL, v1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RollbackError);
    expect((errors[0] as RollbackError).code).toBe('version');
    expect((errors[0] as RollbackError).message).toMatch(/wire version 1/);
  });
});

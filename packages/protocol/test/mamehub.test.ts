import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  createMameInputState,
  DecodeError,
  decodeMameHubInputPacket,
  decodeMameHubInputPacketInto,
  EncodeError,
  encodeMameHubInputPacket,
  type MameHubInputPacket,
  MameInputShapeError,
  type MameInputState,
  mameHubInputPacketLayout,
  mameHubInputPacketSize,
  mameInputShape,
  mergeMameInputStates,
} from '../src/index.js';

const i32 = fc.integer({ min: -0x80000000, max: 0x7fffffff });
const u32 = fc.integer({ min: 0, max: 0xffffffff });

function stateOf(shape: number[]): fc.Arbitrary<MameInputState> {
  return fc.tuple(
    ...shape.map((analogs) =>
      fc.record({
        defaultMask: u32,
        currentMask: u32,
        analogs: fc.array(
          fc.record({ accumulatedDelta: i32, previousValue: i32, sensitivity: i32, reverse: fc.boolean() }),
          { minLength: analogs, maxLength: analogs },
        ),
      }),
    ),
  );
}

const shapeArb = fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 5 });
const packetArb: fc.Arbitrary<MameHubInputPacket> = shapeArb.chain((shape) =>
  fc.record({ inputId: u32, futureInputTime: fc.maxSafeNat(), state: stateOf(shape) }),
);
/** Several states of one shape, as the clients of one game send them. */
const statesArb = (min: number, max: number) =>
  shapeArb.chain((shape) => fc.tuple(fc.constant(shape), fc.array(stateOf(shape), { minLength: min, maxLength: max })));

function encode(p: MameHubInputPacket): Uint8Array {
  const b = new Uint8Array(mameHubInputPacketSize(p.state));
  expect(encodeMameHubInputPacket(p, b)).toBe(b.length);
  return b;
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

describe('MAMEHub input packet', () => {
  test.prop([packetArb])('writes exactly the bytes of its buffer-layout declaration', (p) => {
    const layout = mameHubInputPacketLayout(mameInputShape(p.state));
    const oracle = new Uint8Array(layout.span);
    const ports = Object.fromEntries(
      p.state.map((port, i) => [
        `p${i}`,
        {
          defaultMask: port.defaultMask,
          currentMask: port.currentMask,
          analogCount: port.analogs.length,
          analogs: port.analogs.map((a) => ({ ...a, reverse: a.reverse ? 1 : 0 })),
        },
      ]),
    );
    layout.encode({ inputId: p.inputId, futureInputTime: p.futureInputTime, portCount: p.state.length, ports }, oracle);
    expect(encode(p)).toEqual(oracle);
  });

  test.prop([packetArb])('round-trips, allocating and into a preshaped packet', (p) => {
    const bytes = encode(p);
    expect(decodeMameHubInputPacket(bytes)).toEqual(p);
    const out: MameHubInputPacket = {
      inputId: 0,
      futureInputTime: 0,
      state: createMameInputState(mameInputShape(p.state)),
    };
    const ports = [...out.state];
    expect(decodeMameHubInputPacketInto(bytes, out)).toBe(out);
    expect(out).toEqual(p);
    for (const [i, port] of out.state.entries()) expect(port).toBe(ports[i]);
  });

  test.prop([fc.uint8Array({ maxLength: 80 })])(
    'valid bytes re-encode identically; others throw DecodeError',
    (bytes) => {
      let p: MameHubInputPacket;
      try {
        p = decodeMameHubInputPacket(bytes);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
        return;
      }
      expect(encode(p)).toEqual(bytes);
    },
  );

  test.prop([
    packetArb,
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
    fc.nat(),
  ])('mutated and truncated packets decode or throw DecodeError', (p, edits, cut) => {
    const bytes = encode(p);
    for (const [at, v] of edits) bytes[at % bytes.length] = v;
    valueOrDecodeError(() => decodeMameHubInputPacket(bytes), bytes.length);
    const out: MameHubInputPacket = {
      inputId: 0,
      futureInputTime: 0,
      state: createMameInputState(mameInputShape(p.state)),
    };
    valueOrDecodeError(() => decodeMameHubInputPacketInto(bytes, out), bytes.length);
    const short = bytes.subarray(0, cut % (bytes.length + 1));
    valueOrDecodeError(() => decodeMameHubInputPacket(short), short.length);
  });

  it('refuses counts the bytes cannot hold before allocating', () => {
    // 255 ports announced, none present.
    const bytes = new Uint8Array(13);
    bytes[12] = 255;
    expect(() => decodeMameHubInputPacket(bytes)).toThrow(expect.objectContaining({ code: 'truncated', offset: 13 }));
    // One port announcing 255 analog devices, none present.
    const one = new Uint8Array(13 + 9);
    one[12] = 1;
    one[21] = 255;
    expect(() => decodeMameHubInputPacket(one)).toThrow(expect.objectContaining({ code: 'truncated', offset: 22 }));
  });

  it('refuses a future input time beyond 2^53 − 1 and a reverse byte other than 0/1', () => {
    const p: MameHubInputPacket = {
      inputId: 1,
      futureInputTime: Number.MAX_SAFE_INTEGER,
      state: createMameInputState([1]),
    };
    const bytes = encode(p);
    bytes[5] = 0x20;
    expect(() => decodeMameHubInputPacket(bytes)).toThrow(expect.objectContaining({ code: 'bad-value', offset: 4 }));
    const ok = encode(p);
    ok[13 + 9 + 12] = 2;
    expect(() => decodeMameHubInputPacket(ok)).toThrow(expect.objectContaining({ code: 'bad-value', offset: 34 }));
    expect(() => encode({ ...p, futureInputTime: 2 ** 53 })).toThrow(EncodeError);
    expect(() => encode({ ...p, inputId: -1 })).toThrow(EncodeError);
  });

  it('refuses a packet of another shape when decoding into a preshaped one, leaving it untouched', () => {
    const bytes = encode({ inputId: 3, futureInputTime: 9, state: createMameInputState([2, 0]) });
    const out: MameHubInputPacket = { inputId: 7, futureInputTime: 7, state: createMameInputState([1, 0]) };
    expect(() => decodeMameHubInputPacketInto(bytes, out)).toThrow(
      expect.objectContaining({ code: 'bad-value', offset: 21 }),
    );
    expect(out.inputId).toBe(7);
  });
});

describe('MAMEHub OR-merge', () => {
  function bytesOf(state: MameInputState): Uint8Array {
    return encode({ inputId: 0, futureInputTime: 0, state });
  }

  test.prop([statesArb(1, 4)])('is the bytewise OR of the encoded states', ([shape, states]) => {
    const merged = mergeMameInputStates(states, createMameInputState(shape));
    const expected = new Uint8Array(bytesOf(merged).length);
    for (const s of states) {
      const b = bytesOf(s);
      for (let i = 0; i < b.length; i++) expected[i] = expected[i]! | b[i]!;
    }
    expect(bytesOf(merged)).toEqual(expected);
  });

  test.prop([statesArb(2, 4)])('does not depend on the order of clients and is idempotent', ([shape, states]) => {
    const forward = mergeMameInputStates(states, createMameInputState(shape));
    const backward = mergeMameInputStates([...states].reverse(), createMameInputState(shape));
    expect(backward).toEqual(forward);
    expect(mergeMameInputStates([forward, forward], createMameInputState(shape))).toEqual(forward);
    expect(mergeMameInputStates([...states, forward], createMameInputState(shape))).toEqual(forward);
  });

  test.prop([statesArb(1, 1)])('leaves the owner of a device intact when the others send zeros', ([shape, [owner]]) => {
    const zeros = createMameInputState(shape);
    expect(mergeMameInputStates([zeros, owner!, zeros], createMameInputState(shape))).toEqual(owner);
  });

  it('ORs digital masks and analog fields as two’s complement, reverse as logical OR', () => {
    const a = createMameInputState([1]);
    const b = createMameInputState([1]);
    a[0]!.currentMask = 0x80000001;
    b[0]!.currentMask = 0x00000002;
    a[0]!.analogs[0] = { accumulatedDelta: -2, previousValue: 4, sensitivity: 8, reverse: false };
    b[0]!.analogs[0] = { accumulatedDelta: 1, previousValue: 1, sensitivity: 8, reverse: true };
    const out = createMameInputState([1]);
    const port = out[0]!;
    mergeMameInputStates([a, b], out);
    expect(out[0]).toBe(port);
    expect(port.currentMask).toBe(0x80000003);
    expect(port.analogs[0]).toEqual({ accumulatedDelta: -1, previousValue: 5, sensitivity: 8, reverse: true });
  });

  it('refuses states of different shapes', () => {
    expect(() => mergeMameInputStates([createMameInputState([1])], createMameInputState([2]))).toThrow(
      MameInputShapeError,
    );
    expect(mergeMameInputStates([], createMameInputState([1]))).toEqual(createMameInputState([1]));
  });
});

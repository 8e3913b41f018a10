import { fc, test } from '@fast-check/vitest';
import { DecodeError } from '@netplay/protocol';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { InputQueue, InputStatus, predictNoInput, RollbackError, repeatLastInput } from '../src/index.js';
import { decodeByteFrameTail, decodeSync, encodeByteFrameTail, encodeSync, PRESENT } from '../src/messages.js';
import { inputPattern, Mesh } from './mesh.js';

describe('InputQueue', () => {
  test.prop([
    fc.array(fc.uint8Array({ minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 80 }),
    fc.integer({ min: 2, max: 40 }),
  ])('keeps the last `capacity` inputs, predicts from the newest, refuses gaps', (inputs, capacity) => {
    const q = new InputQueue(3, capacity);
    const scratch = new Uint8Array(3);
    const out = new Uint8Array(3);
    for (const [f, input] of inputs.entries()) expect(q.add(f, input)).toBe(true);
    expect(q.add(0, inputs[0]!)).toBe(false);
    expect(() => q.add(inputs.length + 1, inputs[0]!)).toThrow(RollbackError);
    const last = inputs.length - 1;
    expect(q.lastFrame).toBe(last);
    expect(q.oldestFrame).toBe(Math.max(0, last - capacity + 1));
    for (let f = 0; f <= last; f++) {
      if (f < q.oldestFrame) expect(q.input(f)).toBeUndefined();
      else {
        expect(q.read(f, out, 0, predictNoInput, 0, scratch)).toBe(InputStatus.Confirmed);
        expect([...out]).toEqual([...inputs[f]!]);
      }
    }
    expect(q.read(last + 5, out, 0, repeatLastInput, 0, scratch)).toBe(InputStatus.Predicted);
    expect([...out]).toEqual([...inputs[last]!]);
    expect(q.read(last + 5, out, 0, predictNoInput, 0, scratch)).toBe(InputStatus.Predicted);
    expect([...out]).toEqual([0, 0, 0]);
  });

  test.prop([fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 60 })])(
    'a player gone from frame g reads zeros from g, drops later inputs, and rejoins at r with zeros between',
    (have, gone, rejoinGap) => {
      const q = new InputQueue(1, 128);
      for (let f = 0; f < have; f++) q.add(f, new Uint8Array([f + 1]));
      q.disconnectAt(gone);
      const scratch = new Uint8Array(1);
      const out = new Uint8Array(1);
      expect(q.read(gone, out, 0, repeatLastInput, 0, scratch)).toBe(InputStatus.Disconnected);
      expect(out[0]).toBe(0);
      expect(q.lastFrame).toBe(Math.min(have, gone) - 1);
      expect(q.add(gone, new Uint8Array([9]))).toBe(false);
      if (have < gone) {
        // Inputs before the leave are still missing: rejoining now is refused.
        expect(() => q.rejoinAt(gone + rejoinGap)).toThrow(RollbackError);
        return;
      }
      expect(q.unreadFrame).toBe(Number.POSITIVE_INFINITY);
      q.rejoinAt(gone + rejoinGap);
      expect(q.unreadFrame).toBe(gone + rejoinGap);
      for (let f = gone; f < gone + rejoinGap; f++) {
        expect(q.read(f, out, 0, predictNoInput, 0, scratch)).toBe(InputStatus.Confirmed);
        expect(out[0]).toBe(0);
      }
      if (gone > 0) {
        expect(q.read(gone - 1, out, 0, predictNoInput, 0, scratch)).toBe(InputStatus.Confirmed);
        expect(out[0]).toBe(gone);
      }
    },
  );
});

describe('session messages', () => {
  test.prop([
    fc.nat(),
    fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
    fc.integer({ min: 1, max: 16 }),
    fc.uint8Array({ maxLength: 64 }),
  ])('SYNC and frame+tail messages round-trip (INPUT: wire-v2.test.ts)', (frame, _sum, players, state) => {
    const disconnectFrames = Array.from({ length: players }, (_, p) => (p % 3 === 0 ? PRESENT : p * 10));
    const sync = { frame, players, inputBytes: 2, disconnectFrames, state };
    expect(decodeSync(encodeSync(sync))).toEqual(sync);
    const m = decodeByteFrameTail(encodeByteFrameTail(7, players, frame, state), 'X');
    expect({ byte: m.byte, frame: m.frame, tail: [...m.tail] }).toEqual({ byte: players, frame, tail: [...state] });
  });

  test.prop([fc.uint8Array({ maxLength: 100 })])('decoders throw only DecodeError on any bytes', (bytes) => {
    for (const decode of [() => decodeSync(bytes), () => decodeByteFrameTail(bytes, 'X')]) {
      try {
        decode();
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
      }
    }
  });
});

describe('SpectatorSession', () => {
  it('catches up two frames per step after lagging, then follows the confirmed frame', () => {
    const mesh = new Mesh({
      players: 2,
      seed: 21,
      makeCore: () => new TestCore({ players: 2 }),
      inputOf: inputPattern(21),
      link: { latencyMs: 20 },
    });
    const watcher = mesh.addSpectator('w');
    mesh.runUntilConfirmed(100, 1000);
    const before = watcher.session.currentFrame!;
    expect(before).toBeGreaterThan(50);
    // The spectator stops stepping for 30 frames while the game goes on.
    const sp = mesh.spectators.splice(0, 1)[0]!;
    for (let i = 0; i < 30; i++) mesh.tick();
    expect(sp.session.framesBehind).toBeGreaterThan(20);
    mesh.spectators.push(sp);
    let maxStep = 0;
    for (let i = 0; i < 60; i++) {
      const f = sp.session.currentFrame!;
      mesh.tick();
      maxStep = Math.max(maxStep, sp.session.currentFrame! - f);
    }
    expect(maxStep).toBe(2);
    expect(sp.session.framesBehind).toBeLessThanOrEqual(4);
    expect(mesh.mismatches).toEqual([]);
  });
});

import { fc, test } from '@fast-check/vitest';
import { DecodeError, decodeFsUaeMessage } from '@netplay/protocol';
import { describe, expect, it } from 'vitest';
import {
  ClientServerClient,
  ClientServerServer,
  decodeFaMessage,
  encodeFaAdvance,
  encodeFaEvent,
  encodeFaLatencyInfo,
  encodeFaPing,
  encodeFaPong,
  FrameAdvancePeer,
  LockstepError,
  MeshPeer,
  PingHistory,
  toMicros,
} from '../src/index.js';

const channels = ['frame', 'frame-u', 'input', 'input-u', 'control', 'chat', 'sched', 'ping', 'join', 'nope'];

describe('hostile bytes', () => {
  test.prop([fc.uint8Array({ maxLength: 64 }), fc.integer({ min: 1, max: 8 })])(
    'decodeFaMessage throws only DecodeError',
    (bytes, inputBytes) => {
      try {
        decodeFaMessage(bytes, inputBytes);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
      }
    },
  );

  test.prop([
    fc.record({
      frame: fc.nat({ max: 0xffffffff }),
      key: fc.nat({ max: 0xffffffff }),
      client: fc.nat({ max: 0xffff }),
      port: fc.nat({ max: 255 }),
      input: fc.uint8Array({ minLength: 2, maxLength: 2 }),
    }),
    fc.nat({ max: 0xffffffff }),
    fc.nat({ max: 0xffffffff }),
    fc.integer({ min: 0, max: 2 ** 40 }),
    fc.double({ min: 0, max: 1e6, noNaN: true }),
  ])('frame-advance messages (FS-UAE codec + latency info) round-trip', (event, frame, seq, us, ms) => {
    expect(decodeFaMessage(encodeFaEvent(event), 2)).toEqual({ type: 'event', event });
    expect(decodeFaMessage(encodeFaAdvance(frame), 2)).toEqual({ type: 'advance', frame });
    expect(decodeFaMessage(encodeFaPing(seq, us / 1000), 2)).toEqual({
      type: 'ping',
      seq,
      sentAtUs: toMicros(us / 1000),
    });
    expect(decodeFaMessage(encodeFaPong(seq, us, ms), 2)).toEqual({
      type: 'pong',
      seq,
      pingSentAtUs: us,
      repliedAtUs: toMicros(ms),
    });
    expect(decodeFaMessage(encodeFaLatencyInfo(ms), 2)).toEqual({ type: 'latency', maxOneWayMs: ms });
    // The event is FS-UAE's input event: the protocol decoder reads it back.
    expect(decodeFsUaeMessage(encodeFaEvent(event))).toMatchObject({
      kind: 'input-event',
      targetFrame: event.frame,
      orderKey: event.key,
      clientId: event.client,
    });
  });

  test.prop([
    fc.array(fc.tuple(fc.nat({ max: 3 }), fc.constantFrom(...channels), fc.uint8Array({ maxLength: 80 })), {
      maxLength: 60,
    }),
  ])('no scheduler throws on garbage from any peer; it drops it', (messages) => {
    const make = () => [
      new ClientServerServer({ id: 0, ports: 4, inputBytes: 1, frameMs: 20 }),
      new ClientServerClient({ id: 1, server: 0, ports: 2, inputBytes: 2, frameMs: 20 }),
      new FrameAdvancePeer({ id: 0, port: 0, peers: [1, 2], ports: 3, inputBytes: 1, frameMs: 20, seed: 1 }),
      new MeshPeer({
        id: 0,
        members: [
          { id: 0, port: 0 },
          { id: 1, port: 1 },
        ],
        ports: 2,
        inputBytes: 2,
        frameMs: 20,
      }),
      new MeshPeer({ id: 5, members: [{ id: 0, port: 0 }], candidate: true, ports: 2, inputBytes: 2, frameMs: 20 }),
    ];
    const schedulers = make();
    (schedulers[0] as ClientServerServer).addClient(1, 1);
    let t = 0;
    for (const [from, channel, data] of messages) {
      for (const s of schedulers) {
        s.receive(from, channel, data, t);
        s.tick(t);
        s.poll(t);
      }
      t += 7;
    }
    expect(t).toBe(messages.length * 7);
  });
});

describe('PingHistory', () => {
  test.prop([
    fc.array(fc.double({ min: 0, max: 1000, noNaN: true }), { minLength: 1, maxLength: 200 }),
    fc.double({ min: 0, max: 1, noNaN: true }),
  ])(
    'the estimate lies between half the smallest kept sample and the largest, and is exact on a steady link',
    (samples, percentile) => {
      const h = new PingHistory({ size: 64, percentile });
      for (const s of samples) h.add(s);
      const kept = samples.slice(-64);
      const min = Math.min(...kept);
      const max = Math.max(...kept);
      expect(h.oneWayMs()).toBeGreaterThanOrEqual(min / 2 - 1e-9);
      expect(h.oneWayMs()).toBeLessThanOrEqual(max + 1e-9);
      const steady = new PingHistory({ percentile });
      for (let i = 0; i < 10; i++) steady.add(samples[0]!);
      expect(steady.oneWayMs()).toBeCloseTo(samples[0]! / 2, 9);
    },
  );

  it('uses the initial estimate until a sample exists, and rejects bad options', () => {
    expect(new PingHistory({ initialOneWayMs: 42 }).oneWayMs()).toBe(42);
    expect(() => new PingHistory({ percentile: 2 })).toThrow(LockstepError);
    expect(() => new PingHistory({ size: 0 })).toThrow(LockstepError);
  });
});

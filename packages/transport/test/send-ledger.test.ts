import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { SendLedger } from '../src/send-ledger.js';

type Op = { t: 'push'; frame: number; payload: number; data: boolean } | { t: 'write'; bytes: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    t: fc.constant('push' as const),
    frame: fc.integer({ min: 1, max: 500 }),
    payload: fc.integer({ min: 0, max: 490 }),
    data: fc.boolean(),
  }),
  fc.record({ t: fc.constant('write' as const), bytes: fc.integer({ min: 0, max: 2000 }) }),
);

describe('SendLedger', () => {
  test.prop([fc.array(opArb, { maxLength: 300 })])(
    'matches a list model: a data frame is queued until the socket wrote its last byte',
    (ops) => {
      const ledger = new SendLedger();
      // Model: a byte stream of frames; `written` bytes have left the socket.
      const frames: Array<{ end: number; payload: number; data: boolean }> = [];
      let position = 0;
      let written = 0;
      for (const op of ops) {
        if (op.t === 'push') {
          position += op.frame;
          frames.push({ end: position, payload: Math.min(op.payload, op.frame), data: op.data });
          ledger.push(op.frame, Math.min(op.payload, op.frame), op.data);
        } else {
          written = Math.min(position, written + op.bytes);
        }
        ledger.update(position - written);
        const queued = frames.filter((f) => f.data && f.end > written);
        expect(ledger.length).toBe(queued.length);
        expect(ledger.queuedBytes).toBe(queued.reduce((s, f) => s + f.payload, 0));
      }
    },
  );
});

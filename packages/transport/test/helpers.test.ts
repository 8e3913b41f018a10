import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  channelSignature,
  decodeCloseReason,
  encodeCloseReason,
  sameChannels,
  truncateCloseReason,
  validateChannels,
} from '../src/channels.js';
import { MAX_CLOSE_REASON_BYTES } from '../src/contract.js';
import { Emitter } from '../src/emitter.js';
import { TransportError } from '../src/errors.js';
import { RttEstimator } from '../src/rtt.js';

describe('close reasons', () => {
  test.prop([fc.string({ unit: 'grapheme', maxLength: 200 })])(
    'encode to at most 120 bytes of valid UTF-8 that is a prefix of the reason',
    (reason) => {
      const bytes = encodeCloseReason(reason);
      expect(bytes.length).toBeLessThanOrEqual(MAX_CLOSE_REASON_BYTES);
      const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      expect(reason.startsWith(text)).toBe(true);
      expect(decodeCloseReason(bytes)).toBe(truncateCloseReason(reason));
      if (new TextEncoder().encode(reason).length <= MAX_CLOSE_REASON_BYTES) expect(text).toBe(reason);
    },
  );
});

describe('channels', () => {
  it('validates names, kinds and count', () => {
    expect(() => validateChannels([])).toThrow(TransportError);
    expect(() => validateChannels([{ name: '', kind: 'reliable' }])).toThrow(/1 to 64/);
    expect(() => validateChannels([{ name: 'a', kind: 'fast' as 'reliable' }])).toThrow(/unknown kind/);
    const ok = validateChannels([
      { name: 'a', kind: 'reliable' },
      { name: 'b', kind: 'unreliable' },
    ]);
    expect(Object.isFrozen(ok)).toBe(true);
    expect(channelSignature(ok)).toBe('r:a,u:b');
    expect(sameChannels(ok, [...ok].reverse())).toBe(false);
    expect(
      sameChannels(
        ok,
        ok.map((c) => ({ ...c })),
      ),
    ).toBe(true);
  });
});

describe('Emitter', () => {
  it('calls handlers in order, unsubscribes, isolates throwing handlers', () => {
    const e = new Emitter<{ x: number }>();
    const log: string[] = [];
    const offA = e.on('x', (n) => log.push(`a${n}`));
    e.on('x', () => {
      throw new Error('boom');
    });
    e.on('x', (n) => log.push(`c${n}`));
    expect(() => e.emit('x', 1)).toThrow('boom');
    offA();
    offA();
    expect(() => e.emit('x', 2)).toThrow('boom');
    expect(log).toEqual(['a1', 'c1', 'c2']);
    expect(e.has('x')).toBe(true);
    e.clear();
    expect(e.has('x')).toBe(false);
  });
});

describe('RttEstimator (RFC 6298)', () => {
  it('initialises from the first sample and smooths later ones with gains 1/8 and 1/4', () => {
    const r = new RttEstimator(1, 60_000, 1000, 1);
    expect(r.rto()).toBe(1000);
    r.sample(100);
    expect([r.srtt, r.rttvar, r.rto()]).toEqual([100, 50, 300]);
    r.sample(200);
    // RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5
    expect([r.srtt, r.rttvar]).toEqual([112.5, 62.5]);
    expect(r.rto()).toBe(112.5 + 4 * 62.5);
    r.sample(-5);
    r.sample(Number.NaN);
    expect(r.samples).toBe(2);
  });

  it('clamps the RTO', () => {
    const r = new RttEstimator(20, 500);
    r.sample(0);
    expect(r.rto()).toBe(20);
    r.sample(10_000);
    expect(r.rto()).toBe(500);
  });
});

import { fc, test } from '@fast-check/vitest';
import { allocationPerCall } from '@netplay/bench-kit';
import { describe, expect, it } from 'vitest';
import { addressKey } from '../src/address-key.js';
import { AdmissionGate, DEFAULT_ADMISSION_LIMITS } from '../src/admission.js';
import { AttemptLimiter, DEFAULT_ATTEMPT_LIMITS } from '../src/attempt-limiter.js';
import { DEFAULT_RATE_LIMITS, RateBudget } from '../src/rate-budget.js';

describe('addressKey', () => {
  it('strips ports, brackets and IPv4-mapped prefixes', () => {
    expect(addressKey('127.0.0.1:5000')).toBe('127.0.0.1');
    expect(addressKey('[::1]:5000')).toBe('::1');
    expect(addressKey('[::ffff:10.0.0.7]:99')).toBe('10.0.0.7');
    expect(addressKey('::ffff:10.0.0.7')).toBe('10.0.0.7');
    expect(addressKey('fe80::1')).toBe('fe80::1');
    expect(addressKey('client-3')).toBe('client-3');
  });
  test.prop([fc.ipV4(), fc.integer({ min: 0, max: 65535 }), fc.integer({ min: 0, max: 65535 })])(
    'two ports of one IPv4 host share a key',
    (ip, a, b) => {
      expect(addressKey(`${ip}:${a}`)).toBe(addressKey(`${ip}:${b}`));
      expect(addressKey(`${ip}:${a}`)).toBe(ip);
    },
  );
});

describe('RateBudget', () => {
  const limits = { messagesPerSecond: 100, bytesPerSecond: 10_000, burstSeconds: 1 };

  test.prop([
    fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 200 })), { maxLength: 400 }),
  ])('a sender that never exceeds the average rate over any window is never refused', (steps) => {
    // Send at most rate × elapsed since start + bucket: here, one 50-byte message every 10 ms exactly
    // meets both rates (100 msg/s, 5,000 B/s), whatever gaps are inserted.
    const b = new RateBudget(limits, 0);
    let now = 0;
    for (const [gap] of steps) {
      now += 10 + gap;
      expect(b.take(50, now)).toBe(true);
    }
  });

  test.prop([fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 1, max: 100 })])(
    'a sender faster than the rate is refused within burst + rate × time, and stays refused',
    (start, bytes) => {
      const b = new RateBudget(limits, start);
      let sent = 0;
      let now = start;
      // Two messages per 10 ms: twice the message rate.
      while (b.take(bytes, now)) {
        sent++;
        if (sent % 2 === 0) now += 10;
        expect(sent).toBeLessThan(10_000);
      }
      const elapsed = (now - start) / 1000;
      expect(sent).toBeLessThanOrEqual(limits.messagesPerSecond * (limits.burstSeconds + elapsed) + 1);
      expect(b.exceeded).toBe(true);
      expect(b.take(0, now + 1_000_000)).toBe(false);
      expect(b.describe()).toMatch(/^flood: /);
    },
  );

  it('allocates nothing per message (it runs for every message received)', () => {
    const b = new RateBudget({ messagesPerSecond: 1e9, bytesPerSecond: 1e12, burstSeconds: 2 }, 0);
    const t = new Float64Array(1);
    const call = () => {
      t[0]! += 0.37;
      b.take(100, t[0]!);
    };
    // The least of three windows: a runtime hiccup in one window is not the code's allocation.
    const least = Math.min(
      allocationPerCall(call, 50_000),
      allocationPerCall(call, 50_000),
      allocationPerCall(call, 50_000),
    );
    expect(least).toBeLessThan(1);
    expect(b.exceeded).toBe(false);
  });

  it('counts bytes too', () => {
    const b = new RateBudget(limits, 0);
    expect(b.take(10_000, 0)).toBe(true);
    expect(b.take(1, 0)).toBe(false);
  });

  it('rejects bad limits naming the field', () => {
    expect(() => new RateBudget({ ...limits, bytesPerSecond: 0 }, 0)).toThrow(/bytesPerSecond/);
    expect(() => new RateBudget({ ...limits, burstSeconds: Number.NaN }, 0)).toThrow(/burstSeconds/);
    expect(DEFAULT_RATE_LIMITS.messagesPerSecond).toBeGreaterThan(16 * 60 * 2);
  });
});

describe('AdmissionGate', () => {
  const limits = { maxPending: 8, maxPendingPerAddress: 3, pendingTimeoutMs: 1000 };

  test.prop([
    fc.constantFrom('refuse' as const, 'evict-oldest' as const),
    fc.array(
      fc.oneof(
        fc.record({ op: fc.constant('admit' as const), addr: fc.integer({ min: 0, max: 5 }), dt: fc.nat(300) }),
        fc.record({ op: fc.constant('release' as const), pick: fc.nat(), dt: fc.nat(300) }),
        fc.record({ op: fc.constant('expire' as const), dt: fc.nat(1500) }),
      ),
      { maxLength: 200 },
    ),
  ])('never holds more than the caps; evicts from the busiest address; expires exactly the old ones', (mode, ops) => {
    const gate = new AdmissionGate<number>({ ...limits, whenAddressFull: mode });
    const model = new Map<number, { addr: string; since: number }>();
    let now = 0;
    let next = 0;
    for (const o of ops) {
      now += o.dt;
      if (o.op === 'admit') {
        const addr = `10.0.0.${o.addr}`;
        const id = next++;
        const mine = [...model.values()].filter((p) => p.addr === addr).length;
        const counts = new Map<string, number>();
        for (const p of model.values()) counts.set(p.addr, (counts.get(p.addr) ?? 0) + 1);
        const most = Math.max(0, ...counts.values());
        const r = gate.admit(addr, id, now);
        if (mine >= limits.maxPendingPerAddress && mode === 'refuse') {
          expect(r).toEqual({ ok: false, reason: 'per-address' });
          continue;
        }
        expect(r.ok).toBe(true);
        if (mine >= limits.maxPendingPerAddress) {
          // evict-oldest: this address's oldest entry makes room.
          const ev = r.ok ? r.evicted! : -1;
          expect(r.ok && r.evictedFor).toBe('per-address');
          expect(model.get(ev)?.addr).toBe(addr);
          for (const [k, p] of model) if (p.addr === addr) expect(k).toBeGreaterThanOrEqual(ev);
          model.delete(ev);
        } else if (model.size >= limits.maxPending) {
          expect(r.ok && r.evicted !== undefined).toBe(true);
          const ev = r.ok ? r.evicted! : -1;
          const victim = model.get(ev)!;
          expect(counts.get(victim.addr)).toBe(most);
          // The oldest entry among the busiest addresses.
          for (const [k, p] of model) if (counts.get(p.addr) === most) expect(k).toBeGreaterThanOrEqual(ev);
          model.delete(ev);
        } else {
          expect(r.ok && r.evicted).toBeUndefined();
        }
        model.set(id, { addr, since: now });
      } else if (o.op === 'release') {
        const keys = [...model.keys()];
        if (keys.length === 0) continue;
        const k = keys[o.pick % keys.length]!;
        gate.release(k);
        model.delete(k);
      } else {
        const out = gate.expire(now, []);
        const want = [...model].filter(([, p]) => now - p.since >= limits.pendingTimeoutMs).map(([k]) => k);
        expect(out.sort((a, b) => a - b)).toEqual(want.sort((a, b) => a - b));
        for (const k of want) model.delete(k);
      }
      expect(gate.pending).toBe(model.size);
      expect(gate.pending).toBeLessThanOrEqual(limits.maxPending);
      for (let a = 0; a <= 5; a++)
        expect(gate.pendingFor(`10.0.0.${a}`)).toBeLessThanOrEqual(limits.maxPendingPerAddress);
    }
  });

  it('a newcomer from a fresh address always gets in during a flood from many others', () => {
    const gate = new AdmissionGate<string>(DEFAULT_ADMISSION_LIMITS);
    let now = 0;
    for (let i = 0; i < 1000; i++) {
      const r = gate.admit(`127.0.0.${2 + (i % 200)}`, `attacker-${i}`, now++);
      expect(r.ok || r.reason === 'per-address').toBe(true);
    }
    const r = gate.admit('127.0.0.1', 'player', now);
    expect(r.ok).toBe(true);
    // Another 63 hostile arrivals cannot evict the player while its address holds the fewest.
    for (let i = 0; i < 63; i++) gate.admit(`127.0.0.${2 + (i % 200)}`, `late-${i}`, now);
    expect(gate.has('player')).toBe(true);
  });

  it('rejects bad limits naming the field', () => {
    expect(() => new AdmissionGate({ ...limits, maxPending: 0 })).toThrow(/maxPending/);
    expect(() => new AdmissionGate({ ...limits, pendingTimeoutMs: -1 })).toThrow(/pendingTimeoutMs/);
  });
});

describe('AttemptLimiter', () => {
  it('lets the free failures through, then doubles the wait up to the cap; success forgets', () => {
    const l = new AttemptLimiter({
      ...DEFAULT_ATTEMPT_LIMITS,
      freeFailures: 2,
      baseBackoffMs: 100,
      maxBackoffMs: 1000,
    });
    expect(l.fail('a', 0)).toBe(0);
    expect(l.fail('a', 0)).toBe(0);
    expect(l.fail('a', 0)).toBe(100);
    expect(l.waitMs('a', 50)).toBe(50);
    expect(l.waitMs('b', 50)).toBe(0);
    expect(l.fail('a', 100)).toBe(200);
    expect(l.fail('a', 300)).toBe(400);
    expect(l.fail('a', 700)).toBe(800);
    expect(l.fail('a', 1500)).toBe(1000);
    l.succeed('a');
    expect(l.waitMs('a', 1500)).toBe(0);
  });

  test.prop([fc.array(fc.tuple(fc.nat(20), fc.nat(100)), { maxLength: 300 })])(
    'remembers at most maxAddresses; waits are never negative nor above the cap',
    (steps) => {
      const l = new AttemptLimiter({
        ...DEFAULT_ATTEMPT_LIMITS,
        maxAddresses: 8,
        baseBackoffMs: 10,
        maxBackoffMs: 500,
      });
      let now = 0;
      for (const [a, dt] of steps) {
        now += dt;
        const w = l.fail(`h${a}`, now);
        expect(w).toBeGreaterThanOrEqual(0);
        expect(w).toBeLessThanOrEqual(500);
        expect(l.size).toBeLessThanOrEqual(8);
      }
    },
  );

  it('forgets an address after forgetMs', () => {
    const l = new AttemptLimiter({ ...DEFAULT_ATTEMPT_LIMITS, freeFailures: 0, forgetMs: 1000 });
    expect(l.fail('a', 0)).toBeGreaterThan(0);
    expect(l.waitMs('a', 1000)).toBe(0);
    expect(l.size).toBe(0);
  });
});

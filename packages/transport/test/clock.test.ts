import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { SystemClock } from '../src/system-clock.js';

describe('ManualClock', () => {
  test.prop([fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 60 }), fc.integer({ min: 0, max: 1200 })])(
    'fires due timers in (time, scheduling order), each seeing its own due time',
    (delays, horizon) => {
      const clock = new ManualClock(100);
      const fired: Array<{ i: number; at: number }> = [];
      delays.forEach((d, i) => {
        clock.setTimer(d, () => fired.push({ i, at: clock.now() }));
      });
      clock.advance(horizon);
      const expected = delays
        .map((d, i) => ({ i, at: 100 + d }))
        .filter((e) => e.at <= 100 + horizon)
        .sort((a, b) => a.at - b.at || a.i - b.i);
      expect(fired).toEqual(expected);
      expect(clock.now()).toBe(100 + horizon);
    },
  );

  test.prop([fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.boolean()), { maxLength: 40 })])(
    'cancelled timers never fire',
    (plan) => {
      const clock = new ManualClock();
      const fired = new Set<number>();
      plan.forEach(([d, cancel], i) => {
        const t = clock.setTimer(d, () => fired.add(i));
        if (cancel) t.cancel();
      });
      clock.advance(100);
      plan.forEach(([, cancel], i) => {
        expect(fired.has(i)).toBe(!cancel);
      });
      expect(clock.pending).toBe(0);
    },
  );

  it('runs timers scheduled by timers, including zero-delay ones, in the same advance', () => {
    const clock = new ManualClock();
    const log: string[] = [];
    clock.setTimer(10, () => {
      log.push(`a@${clock.now()}`);
      clock.setTimer(0, () => log.push(`b@${clock.now()}`));
      clock.setTimer(5, () => log.push(`c@${clock.now()}`));
    });
    clock.advance(14);
    expect(log).toEqual(['a@10', 'b@10']);
    clock.advance(1);
    expect(log).toEqual(['a@10', 'b@10', 'c@15']);
  });

  it('runUntil jumps from timer to timer and stops at the predicate or the budget', () => {
    const clock = new ManualClock();
    let n = 0;
    const tick = () => {
      n++;
      clock.setTimer(100, tick);
    };
    clock.setTimer(100, tick);
    expect(clock.runUntil(() => n === 5, 10_000)).toBe(true);
    expect(clock.now()).toBe(500);
    expect(clock.runUntil(() => n === 1000, 250)).toBe(false);
    expect(clock.now()).toBe(750);
    expect(n).toBe(7);
    expect(clock.nextTimerAt()).toBe(800);
  });

  it('rejects negative advances and treats negative or NaN delays as zero', () => {
    const clock = new ManualClock(5);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    let fired = 0;
    clock.setTimer(-10, () => fired++);
    clock.setTimer(Number.NaN, () => fired++);
    clock.advance(0);
    expect(fired).toBe(2);
  });

  it('stops a runaway zero-delay loop with an error instead of hanging', () => {
    const clock = new ManualClock(0, 1000);
    const loop = () => clock.setTimer(0, loop);
    clock.setTimer(0, loop);
    expect(() => clock.advance(1)).toThrow(/runaway/);
  });
});

describe('SystemClock', () => {
  it('reads monotonic time and runs and cancels real timers', async () => {
    const clock = new SystemClock();
    const t0 = clock.now();
    let fired = false;
    let cancelledFired = false;
    clock.setTimer(1, () => {
      fired = true;
    });
    clock
      .setTimer(1, () => {
        cancelledFired = true;
      })
      .cancel();
    await new Promise((r) => setTimeout(r, 20));
    expect(fired).toBe(true);
    expect(cancelledFired).toBe(false);
    expect(clock.now()).toBeGreaterThan(t0);
  });
});

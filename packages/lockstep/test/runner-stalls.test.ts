// LockstepRunner's stall count: only frames the scheduler held back when due (inputs missing, no
// quorum) for more than half a frame period count; a timer that fires late does not.
import { TestCore } from '@netplay/state/testing';
import { type Clock, ManualClock, type Timer } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { type Envelope, type FrameRequest, LockstepRunner, type LockstepScheduler } from '../src/index.js';

const T = 20;

/** A scheduler whose frame k is due at k·T and released once `available > k` (its inputs are in). */
class GatedScheduler implements LockstepScheduler {
  readonly id = 0;
  readonly port = 0;
  readonly outbox: Envelope[] = [];
  nextFrame = 0;
  available = 0;
  private readonly req = { frame: 0, inputs: new Uint8Array(2), command: 0 };
  receive(): void {}
  setLocalInput(): void {}
  tick(): void {}
  dueAt(): number {
    return this.nextFrame * T;
  }
  nextWakeAt(): number {
    return Number.POSITIVE_INFINITY;
  }
  poll(now: number): FrameRequest | undefined {
    if (now < this.dueAt() || this.nextFrame >= this.available) return undefined;
    this.req.frame = this.nextFrame++;
    return this.req;
  }
}

/** A clock whose timers fire `lateMs` after they are due (a busy event loop). */
function lateClock(inner: ManualClock, lateMs: number): Clock {
  return {
    now: () => inner.now(),
    setTimer: (delay: number, cb: () => void): Timer => inner.setTimer(delay + lateMs, cb),
  };
}

/** A runner on a {@link GatedScheduler} whose first `available` frames have their inputs. */
function setup(lateMs: number, available: number) {
  const manual = new ManualClock(0);
  const scheduler = new GatedScheduler();
  scheduler.available = available;
  const runner = new LockstepRunner({
    clock: lateClock(manual, lateMs),
    scheduler,
    core: new TestCore({ players: 2, inputBytes: 1 }),
  });
  return { manual, scheduler, runner };
}

describe('LockstepRunner stalls', () => {
  it('frames whose inputs were there but whose timer fired late are not stalls', () => {
    const { manual, runner } = setup(7, 1_000);
    manual.advanceTo(100 * T);
    const r = runner.report();
    expect(r.frames).toBeGreaterThan(90);
    expect(r.stalls).toBe(0);
    expect(r.stallMs).toBe(0);
  });

  it('a frame held back for its inputs past half a period is one stall, timed from its due time', () => {
    const { manual, scheduler, runner } = setup(0, 10); // frame 10 (due at 200 ms) waits for its inputs
    manual.advanceTo(10 * T + 15);
    expect(runner.framesRun).toBe(10);
    scheduler.available = 30;
    runner.pump(); // the inputs arrive 15 ms after frame 10 was due: frame 10 runs now
    manual.advanceTo(29 * T);
    const r = runner.report();
    expect(r.frames).toBe(30);
    expect(r.stalls).toBe(1);
    expect(r.stallMs).toBe(15);
  });

  it('a hold shorter than half a period (jitter) is not a stall', () => {
    const { manual, scheduler, runner } = setup(0, 10);
    manual.advanceTo(10 * T + 4);
    scheduler.available = 30;
    runner.pump();
    manual.advanceTo(29 * T);
    expect(runner.report().frames).toBe(30);
    expect(runner.report().stalls).toBe(0);
  });

  it('the burst of frames run right after a long stall counts once', () => {
    const { manual, scheduler, runner } = setup(0, 5);
    manual.advanceTo(20 * T); // frames 5..20 are all due by now
    scheduler.available = 40;
    runner.pump();
    manual.advanceTo(39 * T);
    const r = runner.report();
    expect(r.frames).toBe(40);
    expect(r.stalls).toBe(1);
    expect(r.stallMs).toBe(15 * T);
  });
});

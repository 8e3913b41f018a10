import type { Clock, Timer } from '@netplay/transport';

/**
 * A tick running this much later than it was due means the process was frozen: it looks again
 * after reading its input instead of taking the peer's silence for loss.
 */
const STALL_MS = 20;

/**
 * The periodic timer of a UDP peer: every `tickMs` while anything is in flight, queued or
 * unacknowledged, and only every `idleTickMs` on an idle connection (liveness needs no finer
 * grain); {@link wake} brings the fast tick back at once.
 *
 * The late-tick rule: a tick that fires more than {@link STALL_MS} after it was due means the
 * process was frozen (a loaded machine, a GC pause, a debugger). Whatever the peer sent meanwhile
 * is waiting in the socket, and an event loop runs its due timers before it reads sockets: the tick
 * judges nothing (no RTO, no silence) and looks again at once, after the input has been read. Only
 * once in a row: a process whose every timer runs late still retransmits and times out.
 * @internal
 */
export class TickSchedule {
  private timer: Timer | undefined;
  private idle = false;
  /** When the scheduled tick is due (to tell a timer that ran late). */
  private dueAt = 0;
  /** The last tick was put off because it ran late (the next one judges, late or not). */
  private deferred = false;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly tickMs: number,
    private readonly idleTickMs: number,
    /** The tick's work; it re-arms with {@link next}. */
    private readonly run: () => void,
  ) {}

  /** Schedules the next tick in `delay` ms (replacing a scheduled one). */
  arm(delay: number): void {
    this.timer?.cancel();
    this.idle = delay > this.tickMs;
    this.dueAt = this.clock.now() + delay;
    this.timer = this.clock.setTimer(delay, this.fire);
  }

  /** Schedules the next tick: fast while `busy`, idle otherwise. */
  next(busy: boolean): void {
    this.arm(busy ? this.tickMs : this.idleTickMs);
  }

  /** Wakes the fast tick if the connection was idle. */
  wake(): void {
    if (this.idle && !this.stopped) this.arm(this.tickMs);
  }

  /** Cancels the timer for good. */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** The timer callback, allocated once. */
  private readonly fire = (): void => {
    this.timer = undefined;
    if (this.stopped) return;
    if (!this.deferred && this.clock.now() - this.dueAt > STALL_MS) {
      this.deferred = true;
      this.arm(0);
      return;
    }
    this.deferred = false;
    this.run();
  };
}

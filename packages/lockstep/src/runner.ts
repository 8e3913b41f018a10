import type { Core, DirtyPageSet } from '@netplay/state';
import type { Clock, Connection, Timer } from '@netplay/transport';
import { LockstepError } from './errors.js';
import { defaultCommandHandler, type LoggedFrame, logEntry, runFrame } from './log.js';
import type { PeerReport } from './report.js';
import { type CommandHandler, type FrameRequest, isStateful, type LockstepScheduler } from './types.js';

/** Options of {@link LockstepRunner}. */
export interface LockstepRunnerOptions<C extends Core> {
  /** The clock time comes from (a `ManualClock` in tests, `systemClock` in production). */
  readonly clock: Clock;
  /** The scheduler to drive. */
  readonly scheduler: LockstepScheduler;
  /** The core that runs the frames. */
  readonly core: C;
  /** Applies frame commands (default: reset and power reset the core). */
  readonly onCommand?: CommandHandler<C>;
  /** Keep every frame run in {@link LockstepRunner.log} (default false). */
  readonly log?: boolean;
  /** Called after each frame ran. */
  readonly onFrame?: (req: FrameRequest) => void;
  /**
   * Called after every turn of the runner (a message delivered, the timer, a local input: the
   * scheduler ticked, its frames ran and its outbox went out), outside the turn: the place for a
   * shell to read the scheduler's `events` and `finalFrame` (a message may move them without a
   * frame running). It may call back into the runner.
   */
  readonly onTurn?: () => void;
  /** Most frames run in one turn (bounds catch-up bursts; default 100 000). */
  readonly maxFramesPerTurn?: number;
  /**
   * Connections to start with, by peer id (as {@link LockstepRunner.addPeer}), in place before the
   * runner first wakes the scheduler: what it sends at once reaches them.
   */
  readonly peers?: Iterable<readonly [number, Connection]>;
}

interface Pending {
  t: number;
  frame: number;
  value: Uint8Array;
}

/**
 * The thin shell around a sans-I/O scheduler: delivers the messages of its connections, sends its
 * outbox, wakes it on a {@link Clock}, runs the frames it releases on a {@link Core}, and measures
 * input latency, stalls and traffic. It is the only part that touches a transport or a core.
 */
export class LockstepRunner<C extends Core = Core> {
  /** Every frame run, when the `log` option is on. */
  readonly log: LoggedFrame[] = [];
  private readonly clock: Clock;
  private readonly scheduler: LockstepScheduler;
  private readonly core: C;
  private readonly onCommand: CommandHandler<C>;
  private readonly keepLog: boolean;
  private readonly onFrame: ((req: FrameRequest) => void) | undefined;
  private readonly onTurn: (() => void) | undefined;
  private readonly maxFrames: number;
  private readonly conns = new Map<number, { conn: Connection; off: () => void; base: number }>();
  private readonly retiredWireBytes: number[] = [];
  private timer: Timer | undefined;
  private timerAt = Infinity;
  private readonly startedAt: number;
  private stopped = false;
  private pumping = false;
  /** The core's `pageTracker` checkpoint taken with the first state stored (-1: none yet). */
  private trackMark = -1;
  private frames = 0;
  private lastRunAt = -Infinity;
  private stalls = 0;
  private stallMs = 0;
  /** The frame a poll at or past its due time found held back (-1: none), and when it was due. */
  private blockedFrame = -1;
  private blockedDue = 0;
  private payload = 0;
  private samples = 0;
  private sumFrames = 0;
  private maxFramesLat = 0;
  private sumMs = 0;
  private maxMs = 0;
  private readonly pending: Pending[] = [];
  private lastLocal: Uint8Array | undefined;

  constructor(options: LockstepRunnerOptions<C>) {
    this.clock = options.clock;
    this.scheduler = options.scheduler;
    this.core = options.core;
    this.onCommand = options.onCommand ?? (defaultCommandHandler as CommandHandler<C>);
    this.keepLog = options.log === true;
    this.onFrame = options.onFrame;
    this.onTurn = options.onTurn;
    this.maxFrames = options.maxFramesPerTurn ?? 100_000;
    this.startedAt = this.clock.now();
    for (const [peer, conn] of options.peers ?? []) this.listen(peer, conn);
    this.pump();
  }

  /** The scheduler driven. */
  get schedulerRef(): LockstepScheduler {
    return this.scheduler;
  }

  /** Frames run so far. */
  get framesRun(): number {
    return this.frames;
  }

  /** Starts delivering the messages of `conn` as coming from peer `peer`. */
  addPeer(peer: number, conn: Connection): void {
    this.listen(peer, conn);
    this.pump();
  }

  private listen(peer: number, conn: Connection): void {
    if (this.conns.has(peer)) throw new LockstepError('bad-argument', `peer ${peer} already has a connection`);
    const off = conn.on('message', ({ channel, data }) => {
      if (this.stopped) return;
      this.scheduler.receive(peer, channel, data, this.clock.now());
      this.pump();
    });
    this.conns.set(peer, { conn, off, base: conn.stats.bytesSent });
  }

  /** Stops delivering `peer`'s messages and sending to it (the connection is not closed). */
  removePeer(peer: number): void {
    const c = this.conns.get(peer);
    if (!c) return;
    c.off();
    this.retiredWireBytes.push(c.conn.stats.bytesSent - c.base);
    this.conns.delete(peer);
  }

  /** The local player's input changed (or is sampled): hands it to the scheduler. */
  setLocalInput(input: Uint8Array): void {
    const now = this.clock.now();
    const last = this.lastLocal;
    let changed = last === undefined || last.length !== input.length;
    if (!changed && last) for (let i = 0; i < input.length; i++) if (input[i] !== last[i]) changed = true;
    if (changed) {
      this.lastLocal = input.slice();
      if (this.scheduler.port >= 0)
        this.pending.push({ t: now, frame: this.scheduler.nextFrame - 1, value: input.slice() });
    }
    this.scheduler.setLocalInput(input, now);
    this.pump();
  }

  /** Stops the timer and message delivery. */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    for (const peer of [...this.conns.keys()]) this.removePeer(peer);
  }

  /** Runs the scheduler now: ticks it, runs every frame it releases, sends its messages, rearms the timer. */
  pump(): void {
    if (this.stopped || this.pumping) return;
    this.pumping = true;
    try {
      const s = this.scheduler;
      let now = this.clock.now();
      s.tick(now);
      this.syncState();
      for (let n = 0; n < this.maxFrames; n++) {
        const due = s.dueAt();
        const req = s.poll(now);
        this.flush();
        if (!req) {
          // Due but held back (inputs missing, no quorum): the frame waits from here on.
          if (now >= due && this.blockedFrame !== s.nextFrame) {
            this.blockedFrame = s.nextFrame;
            this.blockedDue = Math.max(due, this.lastRunAt);
          }
          break;
        }
        // A stall is a frame the scheduler held back when it was due (a poll at or past its due
        // time released nothing) for more than half a frame period: from its due time (or the
        // previous frame, if later) until it ran. A frame that ran late only because the timer
        // fired late was never held back, and a hold shorter than half a period (a client-server
        // client's frame arriving a little after its previous one + a frame) is jitter; neither
        // counts. Catch-up frames that run at once after a stall were never held back either.
        if (this.blockedFrame === req.frame) {
          const waited = now - this.blockedDue;
          const period = due - this.lastRunAt;
          if (waited > (Number.isFinite(period) && period > 0 ? period / 2 : 0)) {
            this.stalls++;
            this.stallMs += waited;
          }
          this.blockedFrame = -1;
        }
        this.lastRunAt = now;
        runFrame(this.core, req.inputs, req.command, this.onCommand);
        this.frames++;
        this.measure(req, now);
        if (this.keepLog) this.log.push(logEntry(req));
        this.onFrame?.(req);
        now = this.clock.now();
        s.tick(now);
        this.syncState();
      }
      this.flush();
      this.arm(now);
    } finally {
      this.pumping = false;
    }
    this.onTurn?.();
  }

  /** Input latency, stalls and traffic so far. */
  report(): PeerReport {
    const elapsed = this.clock.now() - this.startedAt;
    let wire = 0;
    for (const b of this.retiredWireBytes) wire += b;
    for (const c of this.conns.values()) wire += c.conn.stats.bytesSent - c.base;
    const n = this.samples;
    return {
      peer: this.scheduler.id,
      port: this.scheduler.port,
      frames: this.frames,
      latencySamples: n,
      meanLatencyFrames: n ? this.sumFrames / n : 0,
      maxLatencyFrames: this.maxFramesLat,
      meanLatencyMs: n ? this.sumMs / n : 0,
      maxLatencyMs: this.maxMs,
      stalls: this.stalls,
      stallMs: this.stallMs,
      payloadBytesSent: this.payload,
      wireBytesSent: wire,
      bytesPerSecond: elapsed > 0 ? (wire * 1000) / elapsed : 0,
      elapsedMs: elapsed,
    };
  }

  private syncState(): void {
    const s = this.scheduler;
    if (!isStateful(s)) return;
    const load = s.takeLoad();
    if (load) {
      this.core.load(load.state);
      // Input changes made before the jump are not latency samples of the frames after it.
      this.pending.length = 0;
      this.lastRunAt = this.clock.now();
      this.flush();
    }
    if (s.wantsState(s.nextFrame)) {
      const buf = new Uint8Array(this.core.stateBytes);
      const n = this.core.saveInto(buf);
      // A core that tracks its pages tells which changed since the first state stored (the base).
      const tracker = this.core.pageTracker;
      let dirty: DirtyPageSet | undefined;
      if (tracker !== undefined) {
        if (this.trackMark < 0) this.trackMark = tracker.checkpoint();
        else dirty = tracker.since(this.trackMark);
      }
      s.storeState(s.nextFrame, n === buf.length ? buf : buf.slice(0, n), dirty);
    }
  }

  private measure(req: FrameRequest, now: number): void {
    const port = this.scheduler.port;
    if (port < 0 || this.pending.length === 0) return;
    const n = this.core.inputBytes;
    const slice = req.inputs.subarray(port * n, port * n + n);
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const p = this.pending[i]!;
      if (p.frame >= req.frame) continue;
      let same = p.value.length === slice.length;
      for (let k = 0; same && k < slice.length; k++) if (p.value[k] !== slice[k]) same = false;
      if (!same) continue;
      // Only the newest matching change counts; older ones were superseded before they applied.
      const frames = req.frame - p.frame;
      const ms = now - p.t;
      this.samples++;
      this.sumFrames += frames;
      this.sumMs += ms;
      if (frames > this.maxFramesLat) this.maxFramesLat = frames;
      if (ms > this.maxMs) this.maxMs = ms;
      this.pending.splice(0, i + 1);
      return;
    }
  }

  private flush(): void {
    const out = this.scheduler.outbox;
    if (out.length === 0) return;
    for (let i = 0; i < out.length; i++) {
      const e = out[i]!;
      const c = this.conns.get(e.to);
      if (!c || c.conn.state === 'closed') continue;
      this.payload += e.data.length;
      c.conn.send(e.channel, e.data);
    }
    // pop(), not `length = 0`: V8 frees an array's storage on `length = 0`, and the next push
    // allocates it again; emptied by pop the outbox keeps its storage and a frame allocates nothing.
    while (out.length > 0) out.pop();
  }

  private arm(now: number): void {
    const s = this.scheduler;
    const due = s.dueAt();
    let at = s.nextWakeAt(now);
    if (due > now && due < at) at = due;
    if (at === this.timerAt && this.timer) return;
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Infinity;
    if (!Number.isFinite(at)) return;
    this.timerAt = at;
    this.timer = this.clock.setTimer(Math.max(0, at - now), () => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.pump();
    });
  }
}

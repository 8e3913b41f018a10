import type { Clock, Timer } from '@netplay/transport';
import type { RawData, WebSocket } from 'ws';

/**
 * A byte budget shared by every link of one relayed room: `bytesPerSecond` on average, at most
 * `burstBytes` at once. Forwarding may take it below zero; the sender is then paused until it
 * refills (shaping, not dropping: relayed sessions run on ordered reliable streams).
 */
export class ByteBucket {
  private tokens: number;
  private last: number;
  constructor(
    /** Average rate the bucket refills at, in bytes per second (> 0). */
    readonly bytesPerSecond: number,
    /** Most bytes the bucket holds (it starts full): the largest burst sent without waiting. */
    readonly burstBytes: number,
    now: number,
  ) {
    this.tokens = burstBytes;
    this.last = now;
  }

  /** Charges `bytes`; returns how many ms to wait before sending more (0: go on). */
  take(bytes: number, now: number): number {
    this.refill(now);
    this.tokens -= bytes;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.bytesPerSecond;
  }

  /** ms until the budget is back to zero or above. */
  waitMs(now: number): number {
    this.refill(now);
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.bytesPerSecond;
  }

  private refill(now: number): void {
    const dt = Math.max(0, now - this.last);
    this.last = now;
    this.tokens = Math.min(this.burstBytes, this.tokens + (dt * this.bytesPerSecond) / 1000);
  }
}

/** Counters of a {@link pipeSockets} pair. */
export interface PipeStats {
  /** Payload bytes copied, both directions. */
  bytes: number;
  /** WebSocket messages copied, both directions. */
  messages: number;
  /** Times a reading side was paused (budget spent or the writing side over its high-water mark). */
  pauses: number;
}

/**
 * Copies every message from `a` to `b` and back, as it came (binary or text), charging `bucket`
 * and pausing the reading side while the budget is negative or the writing side holds more than
 * `highWaterBytes` unsent (so each direction holds at most about `highWaterBytes` + one message).
 * When either side closes, the other is closed with the same code (1000 when it cannot be sent).
 * Each message copied adds its payload bytes to `stats.bytes` and, when given, to `total.bytes`
 * (a counter shared by several pairs, such as `RelayServer.stats`).
 */
export function pipeSockets(
  a: WebSocket,
  b: WebSocket,
  bucket: ByteBucket,
  clock: Clock,
  highWaterBytes: number,
  stats: PipeStats,
  onClose: () => void,
  total?: { bytes: number },
): void {
  let done = false;
  const timers = new Set<Timer>();
  const direction = (src: WebSocket, dst: WebSocket) => {
    let paused = false;
    const check = () => {
      const wait = Math.max(bucket.waitMs(clock.now()), dst.bufferedAmount > highWaterBytes ? 5 : 0);
      if (wait <= 0 || done) {
        paused = false;
        if (!done) src.resume();
        return;
      }
      const t = clock.setTimer(Math.max(1, wait), () => {
        timers.delete(t);
        check();
      });
      timers.add(t);
    };
    src.on('message', (data: RawData, isBinary: boolean) => {
      if (done) return;
      const n = Array.isArray(data) ? data.reduce((s, x) => s + x.length, 0) : (data as Buffer).length;
      stats.bytes += n;
      if (total !== undefined) total.bytes += n;
      stats.messages++;
      dst.send(data, { binary: isBinary });
      const wait = bucket.take(n, clock.now());
      if (!paused && (wait > 0 || dst.bufferedAmount > highWaterBytes)) {
        paused = true;
        stats.pauses++;
        src.pause();
        check();
      }
    });
  };
  direction(a, b);
  direction(b, a);
  const close = (other: WebSocket) => (code: number, reason: Buffer) => {
    if (done) return;
    done = true;
    for (const t of timers) t.cancel();
    timers.clear();
    const sendable = code === 1000 || (code >= 3000 && code <= 4999);
    other.close(sendable ? code : 1000, reason.subarray(0, 120).toString());
    const t = setTimeout(() => other.terminate(), 1000);
    other.once('close', () => clearTimeout(t));
    onClose();
  };
  a.once('close', close(b));
  b.once('close', close(a));
  a.resume();
  b.resume();
}

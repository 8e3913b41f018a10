import type { Socket } from 'node:net';
import { AdmissionGate, type AdmissionLimits, addressKey, type Clock, type Timer } from '@netplay/transport';

/**
 * TCP sockets of the listener's HTTP server that are not authenticated yet (no WebSocket upgrade:
 * silent, or half an HTTP request; or upgraded without an accepted HELLO), counted apart from
 * connections in an `AdmissionGate`: at most `maxPendingPerAddress` per source address and
 * `maxPending` in total, each destroyed when it is still pending after `pendingTimeoutMs`. They
 * count toward nothing else (`maxConnections` counts accepted connections). Node only.
 *
 * When an address already holds its share, its oldest pending socket is destroyed to make room
 * (the gate's `whenAddressFull: 'evict-oldest'`): a client behind the same address as an
 * attacker then needs only to finish its upgrade before that address opens its share again.
 */
export class PendingSockets {
  private readonly gate: AdmissionGate<Socket>;
  private timer: Timer | undefined;
  private readonly expired: Socket[] = [];
  /** Sockets destroyed so far: evicted to make room, or still pending at the timeout. */
  dropped = 0;

  /**
   * @param onDrop Called just before a pending socket is destroyed (to report it); `why` says
   *   whether it was evicted to make room or timed out.
   */
  constructor(
    limits: AdmissionLimits,
    private readonly clock: Clock,
    private readonly onDrop: (socket: Socket, why: 'evicted' | 'timeout') => void = () => {},
  ) {
    this.gate = new AdmissionGate<Socket>({ whenAddressFull: 'evict-oldest', ...limits });
  }

  /** Sockets pending now. */
  get count(): number {
    return this.gate.pending;
  }

  /** Sockets pending now from `address` (host without port). */
  countFor(address: string): number {
    return this.gate.pendingFor(address);
  }

  /** A raw connection arrived: count it as pending (making room as the class says). */
  admit(socket: Socket): void {
    const key = addressKey(socket.remoteAddress ?? '?');
    const now = this.clock.now();
    const result = this.gate.admit(key, socket, now);
    if (!result.ok) {
      socket.destroy();
      this.dropped++;
      return;
    }
    socket.once('close', () => this.release(socket));
    if (result.evicted) this.drop(result.evicted, 'evicted');
    this.arm();
  }

  /** The socket's HELLO was accepted (or it made a plain HTTP request), or it closed: no longer pending. */
  release(socket: Socket): void {
    this.gate.release(socket);
  }

  /** Destroys every pending socket (the listener is closing). */
  drain(): void {
    this.timer?.cancel();
    this.timer = undefined;
    for (const s of this.gate.drain()) s.destroy();
  }

  private drop(socket: Socket, why: 'evicted' | 'timeout'): void {
    this.release(socket);
    this.onDrop(socket, why);
    socket.destroy();
    this.dropped++;
  }

  private arm(): void {
    if (this.timer || this.gate.pending === 0) return;
    const period = Math.max(20, Math.min(500, this.gate.limits.pendingTimeoutMs / 10));
    this.timer = this.clock.setTimer(period, () => {
      this.timer = undefined;
      this.expired.length = 0;
      for (const s of this.gate.expire(this.clock.now(), this.expired)) this.drop(s, 'timeout');
      this.expired.length = 0;
      this.arm();
    });
  }
}

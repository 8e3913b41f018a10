import { encodeAddressed, J_CANDIDATE, J_REJECT } from './mesh-join.js';
import { u32msg } from './mesh-packets.js';
import type { Envelope } from './types.js';

/** A candidate the host accepted, waiting for the host's next packet to carry its join notice. */
export interface NoticeDue {
  readonly cand: number;
  readonly port: number;
}

/**
 * The mesh host's admission of one candidate at a time: it asks every member to connect to the
 * candidate and report, then gives it the port it asked for if that is free, else (none asked)
 * the lowest free port (or rejects: a failed report, no free
 * port, the timeout, a departure) and hands the accepted candidate over as a {@link NoticeDue}.
 */
export class MeshAdmission {
  private pending: { id: number; waiting: Set<number>; deadline: number; port: number | undefined } | undefined;
  private due: NoticeDue | undefined;

  constructor(
    private readonly outbox: Envelope[],
    private readonly timeoutMs: number,
    private readonly ports: number,
  ) {}

  /** When the pending candidate times out (`Infinity`: none pending). */
  get deadline(): number {
    return this.pending?.deadline ?? Infinity;
  }

  /** The candidate pending or due, if any. */
  get candidate(): number | undefined {
    return this.pending?.id ?? this.due?.cand;
  }

  /**
   * A candidate contacted the host at `address`. Rejected at once while another is in progress or
   * when `refuse` (a departure not settled, an id in use); otherwise every one of `members` is asked.
   * `port`: the port the candidate asked for (rejected if it is taken when the vote ends).
   */
  offer(
    cand: number,
    address: string,
    now: number,
    members: Iterable<number>,
    refuse: boolean,
    used: Iterable<number>,
    port?: number,
  ): void {
    if (this.candidate === cand) return;
    if (this.candidate !== undefined || refuse) {
      this.outbox.push({ to: cand, channel: 'join', data: u32msg(J_REJECT, cand) });
      return;
    }
    const waiting = new Set(members);
    this.pending = { id: cand, waiting, deadline: now + this.timeoutMs, port };
    const msg = encodeAddressed(J_CANDIDATE, cand, address);
    for (const p of waiting) this.outbox.push({ to: p, channel: 'join', data: msg });
    this.settle(used);
  }

  /** Member `from`'s report on `cand` (ignored unless awaited); `members` hear of a rejection. */
  report(from: number, cand: number, ok: boolean, members: Iterable<number>, used: Iterable<number>): void {
    const p = this.pending;
    if (!p || p.id !== cand || !p.waiting.has(from)) return;
    if (!ok) {
      this.reject(cand, members);
      return;
    }
    p.waiting.delete(from);
    this.settle(used);
  }

  /** Rejects the pending candidate if its time is up. */
  expire(now: number, members: Iterable<number>): void {
    if (this.pending && now >= this.pending.deadline) this.reject(this.pending.id, members);
  }

  /** Turns down the candidate pending or due (a departure: its acceptance would list the leaver); `members` hear of it. */
  abort(members: Iterable<number>): void {
    const cand = this.candidate;
    if (cand === undefined) return;
    this.pending = undefined;
    this.due = undefined;
    const msg = u32msg(J_REJECT, cand);
    for (const m of members) this.outbox.push({ to: m, channel: 'join', data: msg });
    this.outbox.push({ to: cand, channel: 'join', data: msg });
  }

  /** The accepted candidate whose notice is due, handed over once. */
  takeDue(): NoticeDue | undefined {
    const n = this.due;
    this.due = undefined;
    return n;
  }

  /** Whether a notice is due. */
  get hasDue(): boolean {
    return this.due !== undefined;
  }

  private settle(used: Iterable<number>): void {
    const p = this.pending;
    if (!p || p.waiting.size > 0) return;
    this.pending = undefined;
    const taken = new Set(used);
    let port = 0;
    while (taken.has(port)) port++;
    if (p.port !== undefined) port = taken.has(p.port) ? this.ports : p.port;
    if (port >= this.ports) {
      this.reject(p.id, []);
      return;
    }
    this.due = { cand: p.id, port };
  }

  private reject(cand: number, members: Iterable<number>): void {
    const told = this.pending?.id === cand ? [...members] : [];
    this.pending = undefined;
    const msg = u32msg(J_REJECT, cand);
    for (const m of told) this.outbox.push({ to: m, channel: 'join', data: msg });
    this.outbox.push({ to: cand, channel: 'join', data: msg });
  }
}

/** Caps on connections that have not authenticated yet; see {@link AdmissionGate}. */
export interface AdmissionLimits {
  /** Pending entries in total (default 64). */
  readonly maxPending: number;
  /** Pending entries from one address (host without port; default 8). */
  readonly maxPendingPerAddress: number;
  /** How long an entry may stay pending, in ms, before the caller closes it (default 5000). */
  readonly pendingTimeoutMs: number;
  /**
   * What a newcomer from an address already at `maxPendingPerAddress` gets: `refuse` (default: the
   * newcomer is refused) or `evict-oldest` (that address's oldest pending entry is evicted instead,
   * so silent connections cannot lock out a client sharing their address for longer than it takes
   * `maxPendingPerAddress` newer ones to arrive).
   */
  readonly whenAddressFull?: 'refuse' | 'evict-oldest';
}

/** The defaults for {@link AdmissionLimits}. */
export const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = Object.freeze({
  maxPending: 64,
  maxPendingPerAddress: 8,
  pendingTimeoutMs: 5000,
});

/** Checks an {@link AdmissionLimits} value; returns it, or throws `RangeError` naming the bad field. */
export function validateAdmissionLimits(limits: AdmissionLimits): AdmissionLimits {
  for (const key of ['maxPending', 'maxPendingPerAddress'] as const) {
    const v = limits[key];
    if (!Number.isInteger(v) || v < 1)
      throw new RangeError(`admission ${key} must be an integer ≥ 1, got ${String(v)}`);
  }
  const w = limits.whenAddressFull;
  if (w !== undefined && w !== 'refuse' && w !== 'evict-oldest') {
    throw new RangeError(`admission whenAddressFull must be 'refuse' or 'evict-oldest', got ${String(w)}`);
  }
  const t = limits.pendingTimeoutMs;
  if (typeof t !== 'number' || !(t > 0) || !Number.isFinite(t)) {
    throw new RangeError(`admission pendingTimeoutMs must be a positive finite number, got ${String(t)}`);
  }
  return limits;
}

/** The answer of {@link AdmissionGate.admit}. */
export type AdmitResult<T> =
  /**
   * Admitted. `evicted`, when present, is an older pending entry the caller must close now;
   * `evictedFor` says which cap made room: this address's (`per-address`) or the total (`total`).
   */
  | {
      /** `true`: the entry is now pending (counted against its address and the total). */
      readonly ok: true;
      /** An older pending entry the gate dropped to make room; the caller must close it now. Absent when nothing was evicted. */
      readonly evicted?: T;
      /** Which cap made room: the newcomer's address was full (`per-address`, with `evict-oldest`) or all `maxPending` were taken (`total`). Set exactly when `evicted` is. */
      readonly evictedFor?: 'per-address' | 'total';
    }
  /** Refused: this address already holds `maxPendingPerAddress` pending entries. */
  | {
      /** `false`: the entry was not admitted; the caller closes it. */
      readonly ok: false;
      /** The only refusal: the address is at `maxPendingPerAddress` and `whenAddressFull` is `refuse`. */
      readonly reason: 'per-address';
    };

interface Pending {
  readonly address: string;
  readonly since: number;
}

/**
 * Counts connections that are not authenticated yet (a TCP socket before its WebSocket upgrade, a
 * session before its HELLO is accepted) apart from the admitted ones, so that a flood of half-open
 * connections cannot lock legitimate players out:
 * - one address may hold at most `maxPendingPerAddress` pending entries (more are refused, or
 *   evict that address's oldest with `whenAddressFull: 'evict-oldest'`);
 * - when `maxPending` are pending in total, a new entry evicts the oldest pending entry among the
 *   addresses that hold the most, so a flood from a few addresses evicts itself first; a flood from
 *   `maxPending` or more addresses evicts the oldest entries first, so a newcomer stays pending
 *   until `maxPending` entries arrived after it (at 1,000 hostile arrivals a second and the default
 *   64, a client has 64 ms to authenticate: far more than a handshake on a real link needs);
 * - entries pending longer than `pendingTimeoutMs` are handed back by `expire` to be closed.
 * A client sharing its address with an attacker (same host, same NAT) is protected only by the
 * eviction order, not by the per-address cap. Time comes from the caller (ms, any clock).
 */
export class AdmissionGate<T> {
  private readonly entries = new Map<T, Pending>();
  private readonly perAddress = new Map<string, number>();

  constructor(
    /** The caps this gate enforces, fixed for its life (default {@link DEFAULT_ADMISSION_LIMITS}; checked by {@link validateAdmissionLimits}). */
    readonly limits: AdmissionLimits = DEFAULT_ADMISSION_LIMITS,
  ) {
    validateAdmissionLimits(limits);
  }

  /** Entries pending now. */
  get pending(): number {
    return this.entries.size;
  }

  /** Entries pending now from `address`. */
  pendingFor(address: string): number {
    return this.perAddress.get(address) ?? 0;
  }

  /** Whether `item` is pending. */
  has(item: T): boolean {
    return this.entries.has(item);
  }

  /** Starts counting `item` as pending for `address` at `now`; see the class rules. */
  admit(address: string, item: T, now: number): AdmitResult<T> {
    if (this.entries.has(item)) return { ok: true };
    let evicted: T | undefined;
    let evictedFor: 'per-address' | 'total' = 'total';
    if (this.pendingFor(address) >= this.limits.maxPendingPerAddress) {
      if (this.limits.whenAddressFull !== 'evict-oldest') return { ok: false, reason: 'per-address' };
      evicted = this.evictOldestOf(address);
      evictedFor = 'per-address';
    } else if (this.entries.size >= this.limits.maxPending) {
      evicted = this.evictOne();
    }
    this.entries.set(item, { address, since: now });
    this.perAddress.set(address, this.pendingFor(address) + 1);
    return evicted === undefined ? { ok: true } : { ok: true, evicted, evictedFor };
  }

  /** `item` authenticated or closed: it stops counting. Unknown items are ignored. */
  release(item: T): void {
    const p = this.entries.get(item);
    if (p === undefined) return;
    this.entries.delete(item);
    const n = this.pendingFor(p.address) - 1;
    if (n > 0) this.perAddress.set(p.address, n);
    else this.perAddress.delete(p.address);
  }

  /** Removes the entries pending for `pendingTimeoutMs` or longer at `now` and appends them to `out`. */
  expire(now: number, out: T[]): T[] {
    for (const [item, p] of this.entries) {
      if (now - p.since < this.limits.pendingTimeoutMs) continue;
      this.release(item);
      out.push(item);
    }
    return out;
  }

  /** Removes every entry (e.g. when the server closes) and returns them. */
  drain(): T[] {
    const all = [...this.entries.keys()];
    this.entries.clear();
    this.perAddress.clear();
    return all;
  }

  /** Removes and returns the oldest entry of `address`. */
  private evictOldestOf(address: string): T | undefined {
    for (const [item, p] of this.entries) {
      if (p.address !== address) continue;
      this.release(item);
      return item;
    }
    return undefined;
  }

  /** Removes and returns the oldest entry among the addresses holding the most pending entries. */
  private evictOne(): T | undefined {
    let most = 0;
    for (const n of this.perAddress.values()) if (n > most) most = n;
    for (const [item, p] of this.entries) {
      if (this.pendingFor(p.address) !== most) continue;
      this.release(item);
      return item;
    }
    return undefined;
  }
}

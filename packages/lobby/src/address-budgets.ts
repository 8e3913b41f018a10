import { RateBudget, type RateLimits } from '@netplay/transport';

interface Tracked {
  budget: RateBudget;
  /** Set when the budget ran out: refused until then, then a fresh budget. */
  blockedUntil: number;
}

/**
 * One {@link RateBudget} per source address, for at most `maxAddresses` addresses (the least
 * recently used is forgotten first, so memory is bounded however many addresses appear). An
 * address over its budget is refused for `penaltyMs`, then starts again with a full budget.
 */
export class AddressBudgets {
  private readonly budgets = new Map<string, Tracked>();
  constructor(
    /** The budget each address gets (messages and bytes per second, burst); the same for every address. */
    readonly limits: RateLimits,
    /** Most addresses tracked at once (default 4096); past it the least recently seen is forgotten. */
    readonly maxAddresses = 4096,
    /** How long an address that ran over its budget is refused, in ms (default 1000), before it starts afresh. */
    readonly penaltyMs = 1000,
  ) {}

  /** Charges one message of `bytes` to `address`; false when it is over its budget. */
  take(address: string, bytes: number, now: number): boolean {
    let t = this.budgets.get(address);
    if (t) {
      this.budgets.delete(address);
    } else {
      if (this.budgets.size >= this.maxAddresses) {
        const oldest = this.budgets.keys().next().value;
        if (oldest !== undefined) this.budgets.delete(oldest);
      }
      t = { budget: new RateBudget(this.limits, now), blockedUntil: 0 };
    }
    this.budgets.set(address, t);
    if (t.budget.exceeded) {
      if (now < t.blockedUntil) return false;
      t.budget = new RateBudget(this.limits, now);
    }
    if (t.budget.take(bytes, now)) return true;
    t.blockedUntil = now + this.penaltyMs;
    return false;
  }

  /** What the budget of `address` allows, for refusal reasons. */
  describe(address: string): string {
    return this.budgets.get(address)?.budget.describe() ?? 'over the request budget';
  }

  /** Addresses tracked now. */
  get size(): number {
    return this.budgets.size;
  }
}

import type { Clock } from './clock.js';

/**
 * The argument checks the scheduler builders share (`resolveRollbackOptions` in @netplay/rollback,
 * `resolveLockstepOptions` in @netplay/lockstep): each check returns the value or throws the error
 * the builder's `invalid(option, message)` makes (its own typed error class), with one wording for
 * every builder. A small helper for those packages, not for applications.
 */
export class OptionChecks {
  constructor(
    /** Makes the error a check throws: `option` names the option, `message` says what is wrong. */
    private readonly invalid: (option: string, message: string) => Error,
  ) {}

  /** An integer in `min..max`. */
  integer(option: string, value: unknown, min: number, max: number): number {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
      throw this.invalid(option, `must be an integer in ${min}..${max}, got ${String(value)}`);
    return value;
  }

  /** A finite number ≥ `min`. */
  finite(option: string, value: unknown, min: number): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min)
      throw this.invalid(option, `must be a finite number ≥ ${min}, got ${String(value)}`);
    return value;
  }

  /** A boolean. */
  boolean(option: string, value: unknown): boolean {
    if (typeof value !== 'boolean') throw this.invalid(option, `must be a boolean, got ${String(value)}`);
    return value;
  }

  /**
   * A function or `undefined`.
   * @typeParam F - The option's function type; only `typeof value === 'function'` is checked.
   */
  optionalFunction<F extends (...args: never[]) => unknown>(option: string, value: F | undefined): F | undefined {
    if (value !== undefined && typeof value !== 'function') throw this.invalid(option, 'must be a function');
    return value;
  }

  /** An object with a `now` method. */
  clock(option: string, value: Clock): Clock {
    if (typeof value !== 'object' || value === null || typeof value.now !== 'function')
      throw this.invalid(option, 'must be a Clock');
    return value;
  }
}

/** `value`, or `fallback` when it is undefined (null is kept, and refused by the checks). */
export function withDefault<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}

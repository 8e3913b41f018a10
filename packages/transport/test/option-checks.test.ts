import { describe, expect, it } from 'vitest';
import { ManualClock, OptionChecks, withDefault } from '../src/index.js';

class BadOption extends Error {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(`${option}: ${message}`);
  }
}

const check = new OptionChecks((option, message) => new BadOption(option, message));

function thrown(f: () => unknown): BadOption {
  try {
    f();
  } catch (e) {
    if (e instanceof BadOption) return e;
    throw e;
  }
  throw new Error('did not throw');
}

describe('OptionChecks', () => {
  it('returns good values unchanged', () => {
    expect(check.integer('n', 5, 0, 5)).toBe(5);
    expect(check.finite('ms', 0, 0)).toBe(0);
    expect(check.boolean('b', false)).toBe(false);
    const f = () => 1;
    expect(check.optionalFunction('f', f)).toBe(f);
    expect(check.optionalFunction('f', undefined)).toBeUndefined();
    const clock = new ManualClock();
    expect(check.clock('clock', clock)).toBe(clock);
  });

  it('throws the caller’s error, naming the option and what was wrong', () => {
    expect(thrown(() => check.integer('players', 17, 2, 16)).message).toBe(
      'players: must be an integer in 2..16, got 17',
    );
    expect(thrown(() => check.integer('players', 2.5, 2, 16)).option).toBe('players');
    expect(thrown(() => check.finite('frameMs', Number.NaN, 0)).message).toBe(
      'frameMs: must be a finite number ≥ 0, got NaN',
    );
    expect(thrown(() => check.finite('ms', -1, 0)).option).toBe('ms');
    expect(thrown(() => check.boolean('log', 'yes')).message).toBe('log: must be a boolean, got yes');
    expect(thrown(() => check.optionalFunction('onFrame', 3 as never)).message).toBe('onFrame: must be a function');
    expect(thrown(() => check.clock('clock', null as never)).message).toBe('clock: must be a Clock');
  });

  it('withDefault fills undefined only', () => {
    expect(withDefault(undefined, 4)).toBe(4);
    expect(withDefault(0, 4)).toBe(0);
    expect(withDefault<number | null>(null, 4)).toBeNull();
  });
});

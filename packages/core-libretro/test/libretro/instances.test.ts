// Two instances of one core in one process do not interfere (each runs a private copy of the .so).
// They start from one shared power-on state: Nestopia 1.52 leaves a byte of its triangle channel's
// REG chunk uninitialized at power-on, so a fresh instance's power-on state depends on the heap it
// lands on (seen here: the third live instance in a process differed in that byte).
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadNestopia, scriptedRun } from './fixtures.js';

describe('two Nestopia instances in one process', () => {
  it('interleaved runs with different input equal the runs made alone', () => {
    const solo = loadNestopia();
    const start = solo.powerOnState();
    const aloneA = scriptedRun(solo, 21, 600);
    solo.reset();
    const aloneB = scriptedRun(solo, 22, 600);
    solo.close();
    const a = loadNestopia({ startState: start });
    const b = loadNestopia({ startState: start });
    try {
      expect(a.privateDir).not.toBe(b.privateDir);
      const ra: string[] = [];
      const rb: string[] = [];
      for (let i = 0; i < 10; i++) {
        ra.push(...scriptedRun(a, 21, 60));
        rb.push(...scriptedRun(b, 22, 60));
      }
      expect(ra).toEqual(aloneA);
      expect(rb).toEqual(aloneB);
      expect(ra).not.toEqual(rb);
    } finally {
      a.close();
      b.close();
    }
  });

  it('instances started from one shared state agree frame by frame, whatever their heap', () => {
    const first = loadNestopia();
    const others = [loadNestopia(), loadNestopia(), loadNestopia()];
    const start = first.powerOnState();
    const shared = [first, ...others.map(() => loadNestopia({ startState: start }))];
    try {
      const power = shared.map((c) => c.checksum());
      expect(new Set(power).size).toBe(1);
      const runs = shared.map((c) => scriptedRun(c, 23, 300));
      for (const r of runs) expect(r).toEqual(runs[0]);
    } finally {
      for (const c of [...others, ...shared]) c.close();
    }
  });

  it('close() deletes the private copy and is idempotent; use after close is a typed error', () => {
    const c = loadNestopia();
    const dir = c.privateDir;
    expect(existsSync(dir)).toBe(true);
    c.close();
    expect(existsSync(dir)).toBe(false);
    c.close();
    expect(c.closed).toBe(true);
    expect(() => c.advance()).toThrow(expect.objectContaining({ code: 'closed' }));
  });
});

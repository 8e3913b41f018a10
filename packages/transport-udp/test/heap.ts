import { measureAllocation } from '@netplay/bench-kit';

/**
 * Bytes allocated while `fn` runs once, as @netplay/bench-kit measures them (V8's GC profiler:
 * what every collection during the run freed counts, `ArrayBuffer` backing stores count, and code
 * V8 compiles meanwhile does not). A bare `heapUsed` difference would let a scavenge in the middle
 * hide what was allocated before it, and a tier-up of the measured code would add its machine code.
 */
export function allocatedBytes(fn: () => void): number {
  const a = measureAllocation(fn, 1, 0);
  return a.heapBytes + a.externalBytes;
}

/**
 * Bytes allocated per call of `run(n)`'s unit, as the least of `windows` measurements of `run(n)`
 * (each divided by `n`). What the code allocates per message is in every window; what the runtime
 * adds now and then (a deoptimisation and re-tiering, a background task's allocation) inflates
 * one window, not all, so the least is the figure to bound.
 */
export function leastBytesPer(windows: number, n: number, run: (n: number) => void): number {
  let least = Infinity;
  for (let w = 0; w < windows; w++) least = Math.min(least, allocatedBytes(() => run(n)) / n);
  return least;
}

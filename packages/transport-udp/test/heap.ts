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

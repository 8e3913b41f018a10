/**
 * Bytes allocated per call, garbage included.
 *
 * A bare difference of `heapUsed` before and after a loop only shows what is still alive at the end:
 * every collection during the loop hides what it freed, so an allocating function can read close
 * to 0 B/op. Here V8's GC profiler reports the used heap before and after every collection in the
 * window, so
 *
 *     allocated = (used at end − used at start) + Σ (used before a GC − used after it)
 *
 * which holds whatever the collector does, because the used heap only grows by allocation and only
 * shrinks in a collection. The same sum over V8's external memory counts `ArrayBuffer` backing stores
 * (a `Uint8Array` longer than 64 bytes keeps its bytes outside the JS heap). For that sum to be
 * exact, backing stores must be freed inside the GC pause rather than by a background sweeper, so
 * concurrent array-buffer sweeping is switched off for the window only, and a forced young-generation
 * collection just before it finishes any sweep still running from an earlier collection. Machine
 * code that V8 installs during the window is the compiler's allocation, not the function's: the
 * code spaces are left out of every reading.
 */
import { GCProfiler, getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** What {@link measureAllocation} saw over one window of calls. */
export interface Allocation {
  /** Calls of the function in the window. */
  calls: number;
  /**
   * Bytes allocated on the JS heap in the window (collected garbage included), less the harness's
   * own and less compiled code.
   */
  heapBytes: number;
  /**
   * Bytes of machine code V8 installed in the code spaces during the window (a function optimised
   * or re-optimised by a background compile that finished there); not part of `bytesPerCall`.
   */
  codeBytes: number;
  /** Bytes of `ArrayBuffer` backing stores and other external memory allocated in the window. */
  externalBytes: number;
  /** `(heapBytes + externalBytes) / calls`. */
  bytesPerCall: number;
  /** Garbage collections V8 ran during the window (scavenges, incremental marking steps, full GCs). */
  collections: number;
}

type GcFn = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async' }) => void;

let exposedGc: GcFn | undefined;

/**
 * A young-generation collection. Every collection first completes the array-buffer sweep that an
 * earlier one may have left running in the background; a minor one does it without the cost of a
 * full collection of a large heap. V8's `gc` is the global one under `--expose-gc`, else exposed
 * at run time (vitest workers, for example, do not start with the flag).
 */
function minorGc(): void {
  if (!exposedGc) {
    const global = (globalThis as { gc?: GcFn }).gc;
    if (global) exposedGc = global;
    else {
      setFlagsFromString('--expose-gc');
      exposedGc = runInNewContext('gc') as GcFn;
    }
  }
  exposedGc({ type: 'minor', execution: 'sync' });
}

interface Window {
  heap: number;
  code: number;
  external: number;
  collections: number;
}

/**
 * The one loop that calls the measured function, for the warm-up and the window alike: if the
 * warm-up ran another loop, this one would be compiled (and its call site re-specialised for `fn`)
 * inside the window, and that code would be counted as allocated by `fn`.
 */
function repeat(fn: () => void, calls: number): void {
  for (let i = 0; i < calls; i++) fn();
}

/** Spaces that hold compiled code: V8's compiler allocates there, the measured function does not. */
const codeSpaces = new Set(['code_space', 'code_large_object_space']);

/** Bytes used in the code spaces, from `v8.getHeapSpaceStatistics()`. */
function codeUsed(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (codeSpaces.has(space.space_name)) used += space.space_used_size;
  return used;
}

/** The same from a GC profiler record (camel-cased fields). */
function codeUsedIn(spaces: readonly { spaceName: string; spaceUsedSize: number }[]): number {
  let used = 0;
  for (const space of spaces) if (codeSpaces.has(space.spaceName)) used += space.spaceUsedSize;
  return used;
}

/** Runs `fn` `calls` times inside one profiled window and returns the raw byte sums. */
function profiledWindow(fn: () => void, calls: number): Window {
  setFlagsFromString('--no-concurrent-array-buffer-sweeping');
  try {
    minorGc();
    const profiler = new GCProfiler();
    profiler.start();
    // Code first: the objects that read returns are then part of the used heap read next.
    const code0 = codeUsed();
    const start = getHeapStatistics();
    repeat(fn, calls);
    const end = getHeapStatistics();
    const code1 = codeUsed();
    const { statistics } = profiler.stop();
    let code = code1 - code0;
    let heap = end.used_heap_size - start.used_heap_size;
    let external = end.external_memory - start.external_memory;
    for (const s of statistics) {
      const before = s.beforeGC;
      const after = s.afterGC;
      heap += before.heapStatistics.usedHeapSize - after.heapStatistics.usedHeapSize;
      external += before.heapStatistics.externalMemory - after.heapStatistics.externalMemory;
      code += codeUsedIn(before.heapSpaceStatistics) - codeUsedIn(after.heapSpaceStatistics);
    }
    return { heap: heap - code, code, external, collections: statistics.length };
  } finally {
    setFlagsFromString('--concurrent-array-buffer-sweeping');
  }
}

function idle(): void {}

let overhead: number | undefined;

/**
 * The heap bytes one window costs by itself (mostly the heap-statistics object read at its start,
 * a few hundred bytes), which does not depend on the number of calls: the median of a few windows
 * of no calls, taken once the harness's own code is compiled.
 */
function windowOverhead(): number {
  if (overhead === undefined) {
    for (let i = 0; i < 4; i++) {
      repeat(idle, 20_000);
      profiledWindow(idle, 20_000);
      profiledWindow(idle, 0);
    }
    const zero: number[] = [];
    for (let i = 0; i < 7; i++) zero.push(profiledWindow(idle, 0).heap);
    zero.sort((a, b) => a - b);
    overhead = zero[3] ?? 0;
  }
  return overhead;
}

/**
 * Measures what `fn` allocates: `warmup` calls first (default `min(calls, 20 000)`, enough for V8 to
 * optimise `fn` and the calling loop, so that neither is compiled inside the window and the figure
 * is the steady state's), then `calls` calls in one profiled window. Allocations that die inside
 * the window count as much as those still alive at its end.
 */
export function measureAllocation(fn: () => void, calls = 20_000, warmup = Math.min(calls, 20_000)): Allocation {
  if (!Number.isSafeInteger(calls) || calls < 1) throw new RangeError(`calls must be a positive integer, got ${calls}`);
  if (!Number.isSafeInteger(warmup) || warmup < 0)
    throw new RangeError(`warmup must be a natural number, got ${warmup}`);
  const fixed = windowOverhead();
  repeat(fn, warmup);
  const w = profiledWindow(fn, calls);
  const heapBytes = w.heap - fixed;
  return {
    calls,
    heapBytes,
    codeBytes: w.code,
    externalBytes: w.external,
    bytesPerCall: (heapBytes + w.external) / calls,
    collections: w.collections,
  };
}

/** Bytes allocated per call of `fn` over `n` calls, collected garbage and `ArrayBuffer` backing stores included. */
export function allocationPerCall(fn: () => void, n = 20_000): number {
  return measureAllocation(fn, n).bytesPerCall;
}

/** The harness's floor: what {@link allocationPerCall} reads for an empty function over `n` calls. */
export function allocationFloor(n = 20_000): number {
  return allocationPerCall(() => {}, n);
}

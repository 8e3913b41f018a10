import { GCProfiler, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
/** V8's collector, exposed at run time (vitest workers do not start with --expose-gc). */
const gc = runInNewContext('gc') as () => void;

/**
 * Heap bytes allocated while `fn` runs: the growth of the used heap between a forced GC and the
 * end, plus what every collection during the run freed (reported by V8's GC profiler). Unlike a
 * bare `heapUsed` difference, a scavenge in the middle does not hide what was allocated before it.
 */
export function allocatedBytes(fn: () => void): number {
  gc();
  const profiler = new GCProfiler();
  profiler.start();
  const before = getHeapStatistics().used_heap_size;
  fn();
  const after = getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  let freed = 0;
  for (const s of statistics) freed += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
  return after - before + freed;
}

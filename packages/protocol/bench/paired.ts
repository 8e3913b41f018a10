/**
 * The paired ratio of the codec benches: time(baseline) / time(subject), each round timing both
 * back to back, the median over many rounds. What makes it steady:
 *
 * - Neither closure is inlined into the timing loop. The loop's two call sites are made
 *   megamorphic (several dummy functions) before its first use, so V8 compiles each measured
 *   closure on its own, in every run alike. Before, the first pair a bench measured was often
 *   inlined into the harness and the later ones were not (the first call site saw one target
 *   until the second pair came), which made ratios bimodal from run to run.
 * - Warm-up rounds (discarded) until both closures run optimized code.
 * - The order alternates every round (baseline first, then subject first), so a drift in machine
 *   load over a round hits both alike; the median of the rounds' ratios is reported.
 */

/** Rounds timed per ratio (odd, for a median). */
export const PAIRED_ROUNDS = 101;
const WARMUP_ROUNDS = 20;
const CALLS_PER_ROUND = 20;

function timeCalls(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < CALLS_PER_ROUND; k++) fn();
  return Number(process.hrtime.bigint() - t0);
}

// Megamorphic from the start: distinct functions through the one call site of timeCalls.
for (let j = 0; j < 8; j++) {
  const dummy = new Function(`return function dummy${j}() { return ${j}; }`)() as () => void;
  timeCalls(dummy);
}

/** Median over {@link PAIRED_ROUNDS} rounds of time(baseline) / time(subject). */
export function pairedRatio(baseline: () => void, subject: () => void): number {
  for (let r = 0; r < WARMUP_ROUNDS; r++) {
    timeCalls(baseline);
    timeCalls(subject);
  }
  const ratios: number[] = [];
  for (let r = 0; r < PAIRED_ROUNDS; r++) {
    let b: number;
    let s: number;
    if ((r & 1) === 0) {
      b = timeCalls(baseline);
      s = timeCalls(subject);
    } else {
      s = timeCalls(subject);
      b = timeCalls(baseline);
    }
    ratios.push(b / s);
  }
  ratios.sort((x, y) => x - y);
  return ratios[PAIRED_ROUNDS >> 1]!;
}

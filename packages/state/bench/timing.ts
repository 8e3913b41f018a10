// Timing helpers for operations too large for BenchSuite.measure's sampling (a 64 MiB copy takes
// milliseconds). Benchmarks may read wall time.

function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Median calls per second of `fn` over `samples` samples of at least `sampleMs` each. */
export function opsPerSecond(fn: () => void, sampleMs = 80, samples = 5): number {
  fn();
  fn();
  const rates: number[] = [];
  for (let s = 0; s < samples; s++) {
    let calls = 0;
    const t0 = now();
    let dt = 0;
    do {
      fn();
      calls++;
      dt = now() - t0;
    } while (dt < sampleMs);
    rates.push((calls * 1000) / dt);
  }
  rates.sort((a, b) => a - b);
  return rates[Math.floor(rates.length / 2)]!;
}

/** Milliseconds of one call of `fn`, the median of `runs` runs. */
export function msPerCall(fn: () => void, runs = 3): number {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = now();
    fn();
    times.push(now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** A seeded xorshift32 filler (benchmarks need reproducible, incompressible bytes). */
export function fillPseudoRandom(bytes: Uint8Array, seed: number): void {
  let s = seed >>> 0 || 1;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  for (let i = 0; i < words.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    words[i] = s >>> 0;
  }
  for (let i = words.length * 4; i < bytes.length; i++) bytes[i] = i & 0xff;
}

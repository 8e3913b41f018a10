/**
 * @netplay/bench-kit: the harness behind `npm run bench`.
 *
 * Every figure is printed next to a baseline measured in the same run (for example a raw
 * `DataView` loop), as a ratio, plus its absolute value. Results are also written to
 * `bench-results/<suite>.json` at the repository root, which `scripts/bench-table.ts`
 * joins into one table. Benchmarks may read wall time; library code may not.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allocationFloor, measureAllocation } from './allocation.js';

export { type Allocation, allocationFloor, allocationPerCall, measureAllocation } from './allocation.js';

/** One row of the benchmark table. */
export interface BenchRow {
  /** The suite (usually the package and topic), e.g. `protocol/codec`. */
  suite: string;
  /** What was measured. */
  name: string;
  /** The absolute figure. */
  value: number;
  /** Its unit, e.g. `ops/s`, `MB/s`, `bytes`, `ms`. */
  unit: string;
  /** The row this one is compared with, when there is one. */
  baseline?: string;
  /** value / baseline value (for throughput; higher is better). */
  ratio?: number;
  /**
   * Bytes allocated per operation, when measured: on the JS heap (garbage collected during the
   * measurement included) plus `ArrayBuffer` backing stores. See {@link measureAllocation}.
   */
  bytesPerOp?: number;
  /** A goal or remark printed beside the row. */
  note?: string;
}

/** Options for {@link BenchSuite.measure}. */
export interface MeasureOptions {
  /** How many logical operations one call of `fn` performs (default 1). */
  batch?: number;
  /** Row to compare with (by name); its ratio is printed. */
  baseline?: string;
  /** Minimum time per sample in milliseconds (default 60). */
  sampleMs?: number;
  /** Number of samples; the median is reported (default 7). */
  samples?: number;
  /** A goal or remark printed beside the row. */
  note?: string;
  /**
   * Calls in the allocation window (default: as many as fill one sample, at least 100 and at
   * most 20 000). Their bytes are divided by `calls × batch` for the B/op column.
   */
  allocationCalls?: number;
}

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** A group of measurements printed as one table and saved for the combined report. */
export class BenchSuite {
  readonly rows: BenchRow[] = [];
  constructor(readonly suite: string) {}

  /** Measures the throughput of `fn` and records a row in ops/s. */
  measure(name: string, fn: () => void, options: MeasureOptions = {}): BenchRow {
    const batch = options.batch ?? 1;
    const sampleMs = options.sampleMs ?? 60;
    const samples = options.samples ?? 7;
    // Warm up and calibrate how many calls fill one sample.
    let calls = 1;
    for (;;) {
      const t0 = now();
      for (let i = 0; i < calls; i++) fn();
      const dt = now() - t0;
      if (dt >= sampleMs / 4) {
        calls = Math.max(1, Math.ceil((calls * sampleMs) / Math.max(dt, 1e-3)));
        break;
      }
      calls *= 4;
    }
    const rates: number[] = [];
    for (let s = 0; s < samples; s++) {
      const t0 = now();
      for (let i = 0; i < calls; i++) fn();
      const dt = now() - t0;
      rates.push((calls * batch * 1000) / dt);
    }
    rates.sort((a, b) => a - b);
    const value = rates[Math.floor(rates.length / 2)] ?? 0;
    // As many calls as fill one sample (at least 100, at most 20 000), after as many again to warm
    // up the harness's loop for this function.
    const allocationCalls = options.allocationCalls ?? Math.min(20_000, Math.max(100, calls));
    const allocation = measureAllocation(fn, allocationCalls);
    const row: BenchRow = { suite: this.suite, name, value, unit: 'ops/s' };
    row.bytesPerOp = allocation.bytesPerCall / batch;
    if (options.note) row.note = options.note;
    if (options.baseline) this.relate(row, options.baseline);
    this.rows.push(row);
    return row;
  }

  /** Records a figure measured by the caller (sizes, latencies, custom timings). */
  record(row: Omit<BenchRow, 'suite'>): BenchRow {
    const full: BenchRow = { suite: this.suite, ...row };
    if (row.baseline && row.ratio === undefined) this.relate(full, row.baseline);
    this.rows.push(full);
    return full;
  }

  private relate(row: BenchRow, baseline: string): void {
    const base = this.rows.find((r) => r.name === baseline);
    if (!base) throw new Error(`baseline row "${baseline}" has not been measured in suite ${this.suite}`);
    row.baseline = baseline;
    row.ratio = row.value / base.value;
  }

  /** Prints the suite's table and writes `bench-results/<suite>.json`. */
  finish(): void {
    console.log(formatTable(this.rows));
    if (this.rows.some((r) => r.bytesPerOp !== undefined)) console.log(allocationNote());
    const dir = join(repoRoot, 'bench-results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${this.suite.replace(/[^\w.-]+/g, '_')}.json`), `${JSON.stringify(this.rows, null, 2)}\n`);
  }
}

/**
 * The line printed under a table with B/op figures: what they count and the harness's floor (what
 * it reads for an empty function over 20 000 calls).
 */
export function allocationNote(): string {
  const floor = allocationFloor();
  return `B/op: bytes allocated per op, garbage collected during the measurement and ArrayBuffer backing stores included (V8 GC profiler); floor (empty function): ${floor.toFixed(2)} B/op`;
}

/** Formats a number with three significant digits and SI suffixes. */
export function formatValue(v: number): string {
  const abs = Math.abs(v);
  if (abs >= 1e9) return `${(v / 1e9).toFixed(2)}G`;
  if (abs >= 1e6) return `${(v / 1e6).toFixed(2)}M`;
  if (abs >= 1e4) return `${(v / 1e3).toFixed(1)}k`;
  if (abs >= 100) return v.toFixed(0);
  if (abs >= 1) return v.toFixed(2);
  return v.toPrecision(3);
}

/** Renders rows as a fixed-width table. */
export function formatTable(rows: readonly BenchRow[]): string {
  const header = ['suite', 'case', 'value', 'unit', 'ratio', 'vs baseline', 'B/op', 'note'];
  const body = rows.map((r) => [
    r.suite,
    r.name,
    formatValue(r.value),
    r.unit,
    r.ratio === undefined ? '' : r.ratio.toFixed(2),
    r.baseline ?? '',
    r.bytesPerOp === undefined ? '' : r.bytesPerOp.toFixed(1),
    r.note ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

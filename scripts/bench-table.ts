// Joins bench-results/*.json (written by @netplay/bench-kit during this run) into one table.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { type BenchRow, formatTable } from '@netplay/bench-kit';

const dir = new URL('../bench-results/', import.meta.url);
const rows: BenchRow[] = existsSync(dir)
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .flatMap((f) => JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as BenchRow[])
  : [];
console.log('\n== netplay benchmarks (each ratio is to a baseline measured in the same run) ==');
console.log(formatTable(rows));

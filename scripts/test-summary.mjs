// Totals the per-package vitest JSON reports into one closing line: "N passed, N failed".
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const dir = new URL('../test-results/', import.meta.url);
let passed = 0;
let failed = 0;
let skipped = 0;
const rows = [];
const failures = [];
if (existsSync(dir)) {
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const r = JSON.parse(readFileSync(new URL(file, dir), 'utf8'));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    skipped += r.numPendingTests + (r.numTodoTests ?? 0);
    for (const suite of r.testResults ?? []) {
      for (const t of suite.assertionResults ?? []) {
        if (t.status === 'failed') {
          const where = suite.name.replace(/^.*?\/(packages|apps|tools|examples)\//, '$1/');
          const why = (t.failureMessages?.[0] ?? '').split('\n').slice(0, 6).join('\n    ');
          failures.push(`FAILED ${where} > ${t.fullName}\n    ${why}`);
        }
      }
    }
    rows.push(
      `${file.replace(/\.json$/, '').padEnd(16)} ${String(r.numPassedTests).padStart(5)} passed ${String(r.numFailedTests).padStart(3)} failed`,
    );
  }
}
console.log(rows.join('\n'));
if (failures.length > 0) console.log(failures.join('\n'));
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);

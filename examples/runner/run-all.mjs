// Runs every example (each workspace under examples/ with a `start` script) to completion, one
// after the other, and checks that each exits 0 and ends with its "ok:" line (every example ends
// with an assertion). `node run-all.mjs [name...]` runs only those.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const examplesDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The example workspaces (directories with a package.json whose `start` script exists), runner excluded. */
export function listExamples() {
  return readdirSync(examplesDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'runner')
    .map((d) => d.name)
    .filter((name) => {
      const pkg = join(examplesDir, name, 'package.json');
      return existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).scripts?.start !== undefined;
    })
    .sort();
}

/**
 * Runs one example's `start` command (from its package.json) in its directory; resolves to
 * `{ name, code, output, ms }`. Killed after `timeoutMs`.
 */
export function runExample(name, timeoutMs = 60_000) {
  const cwd = join(examplesDir, name);
  const start = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8')).scripts.start;
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(start, { cwd, shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ name, code: code ?? signal, output, ms: performance.now() - t0 });
    });
  });
}

/** Whether a run passed: exit code 0 and a last non-empty line starting with "ok:". */
export function passed(run) {
  const lines = run.output.trim().split('\n');
  return run.code === 0 && /^ok:/.test(lines[lines.length - 1] ?? '');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = process.argv.slice(2);
  const names = wanted.length > 0 ? wanted : listExamples();
  let failures = 0;
  for (const name of names) {
    console.log(`\n== ${name}`);
    const run = await runExample(name);
    process.stdout.write(run.output);
    const ok = passed(run);
    if (!ok) failures++;
    console.log(`== ${name}: ${ok ? 'passed' : `FAILED (exit ${run.code})`} in ${(run.ms / 1000).toFixed(1)} s`);
  }
  console.log(`\n${names.length - failures} of ${names.length} examples passed`);
  process.exit(failures > 0 ? 1 : 0);
}

#!/usr/bin/env node
// netplay-lobby: runs the built server (dist/); inside the workspace without a build it runs the
// TypeScript sources through tsx (a child Node process with the @netplay/source condition).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = new URL('../dist/main.js', import.meta.url);
if (existsSync(dist)) {
  await import(dist.href);
} else {
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--conditions=@netplay/source', '--import', 'tsx', main, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => child.kill(s));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

#!/usr/bin/env node
// Runs Biome 2.6.8's native binary. The npm registry reachable from this project's machines serves
// only Biome's linux-x64 build, and a lockfile that names `@biomejs/biome` (whose optional
// platform packages it cannot resolve) fails `npm ci`. So the root installs the linux-x64 binary
// package as an optional dependency and this shim runs it; elsewhere it runs the same version
// through npx.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
let bin;
try {
  bin = require.resolve(`@biomejs/cli-${process.platform}-${process.arch}/biome`);
} catch {
  bin = undefined;
}
const r = bin
  ? spawnSync(bin, args, { stdio: 'inherit' })
  : spawnSync('npx', ['--yes', '@biomejs/biome@2.6.8', ...args], {
      stdio: 'inherit',
      shell: process.platform === 'win32',
    });
if (r.error) {
  console.error(`biome: ${r.error.message}`);
  process.exit(2);
}
process.exit(r.status ?? 1);

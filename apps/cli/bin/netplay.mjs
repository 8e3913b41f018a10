#!/usr/bin/env node
// The netplay command. Runs the built CLI (dist/); inside the workspace without a build it falls back
// to the TypeScript sources through tsx.
import { existsSync } from 'node:fs';

const dist = new URL('../dist/main.js', import.meta.url);
if (existsSync(dist)) {
  await import(dist.href);
} else {
  console.error('netplay: the CLI is not built; run `npm run build` at the repository root first.');
  process.exit(2);
}

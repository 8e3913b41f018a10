import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Builds the wasm modules when `build/` is missing (a fresh clone running vitest directly). */
export default function setup(): void {
  const pkg = new URL('../', import.meta.url);
  if (!existsSync(new URL('build/chip8.wasm', pkg)) || !existsSync(new URL('build/toy.wasm', pkg))) {
    execFileSync(process.execPath, [new URL('scripts/build-wasm.mjs', pkg).pathname], { stdio: 'inherit' });
  }
}

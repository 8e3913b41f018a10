// Builds test/fixtures/fake-core.c with the system C compiler (installed by .ci/setup-libretro.sh).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../fixtures/fake-core.c', import.meta.url));
const built: string[] = [];

/** Deletes the folders of the fake cores built so far (call from afterAll). */
export function removeFakeCores(): void {
  for (const d of built.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** Compiles the fake core with `defines` (e.g. `ABORT_ON_LOAD`) and returns the .so path. */
export function buildFakeCore(name: string, defines: readonly string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'core-libretro-fake-'));
  built.push(dir);
  const out = join(dir, `${name}_libretro.so`);
  try {
    execFileSync('cc', ['-shared', '-fPIC', '-O1', ...defines.map((d) => `-D${d}`), '-o', out, source], {
      stdio: 'pipe',
    });
  } catch (e) {
    throw new Error(
      `cannot build the fake core (is a C compiler installed? run .ci/setup-libretro.sh): ${(e as Error).message}`,
    );
  }
  return out;
}

/**
 * @netplay/state/node: the Node-only NVRAM file adapter. Kept out of the main entry so that
 * `@netplay/state` stays free of `node:` imports and runs in browsers.
 * @packageDocumentation
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { StateRegistry } from './registry.js';

/**
 * Writes the registry's NVRAM blob to `path`, atomically: it is written to `path + '.tmp'` and
 * renamed over `path`, so a crash never leaves a half-written file.
 */
export async function saveNvramFile(registry: StateRegistry, path: string): Promise<void> {
  const blob = registry.saveNvram();
  const tmp = `${path}.tmp`;
  await writeFile(tmp, blob);
  await rename(tmp, path);
}

/**
 * Loads the NVRAM blob at `path` into the registry, as on power-on.
 * @returns false, changing nothing, when the file does not exist (first power-on: the entries
 *   keep their initial values).
 * @throws SnapshotError when the file is not a valid blob for this registry (nothing is loaded),
 *   or the file system error for anything but a missing file.
 */
export async function loadNvramFile(registry: StateRegistry, path: string): Promise<boolean> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  registry.loadNvram(bytes);
  return true;
}

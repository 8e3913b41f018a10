import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import { type Child, spawnCli } from './child.js';

/**
 * What the end-to-end tests of real `netplay` processes share: a temporary directory for their
 * `--finals` files (removed after the file's tests) and a `cli` that spawns a process killed after
 * each test. Call once at the top of a test file.
 */
export function finalsScope(prefix: string): {
  cli(args: string[], timeoutMs?: number): Child;
  finalsPath(name: string): string;
} {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const children: Child[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) c.kill();
  });
  return {
    cli(args, timeoutMs = 60_000) {
      const c = spawnCli(args, timeoutMs);
      children.push(c);
      return c;
    },
    finalsPath: (name) => join(dir, `${name}.finals`),
  };
}

/** A finals file's hashes by frame (`FRAME CRC32` lines; `#` lines skipped). */
export function readFinals(path: string): Map<number, number> {
  const hashes = new Map<number, number>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\d+) ([0-9a-f]{8})$/.exec(line);
    expect(m, `a FRAME CRC32 line in ${path}: ${JSON.stringify(line)}`).not.toBeNull();
    hashes.set(Number(m![1]), Number.parseInt(m![2]!, 16));
  }
  return hashes;
}

/**
 * Frames two peers both hold, those of them where their hashes differ, and the span both cover
 * (from the later first frame to the earlier last one): every frame of it is final on both, so
 * `common` must equal `span` (how many frames that is depends on the machine's speed; that none is
 * missing does not).
 */
export function compareFinals(a: ReadonlyMap<number, number>, b: ReadonlyMap<number, number>) {
  let common = 0;
  const differing: number[] = [];
  for (const [f, h] of a) {
    const other = b.get(f);
    if (other === undefined) continue;
    common++;
    if (other !== h) differing.push(f);
  }
  const first = Math.max(Math.min(...a.keys()), Math.min(...b.keys()));
  const last = Math.min(Math.max(...a.keys()), Math.max(...b.keys()));
  return { common, differing, span: Math.max(0, last - first + 1), last };
}

/** Every process's output, for an assertion's message. */
export const output = (...cs: Child[]) => cs.map((c) => `${c.stdout()}${c.stderr()}`).join('\n----\n');

import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const packagesDir = resolve(here, '../..');

/** Removes comments (roughly: enough for import scanning and global-name checks). */
function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Every module specifier of a TypeScript source: static imports/exports (type-only too) and dynamic imports. */
function specifiers(source: string): string[] {
  const out: string[] = [];
  const re =
    /\b(?:import|export)\s*(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of stripComments(source).matchAll(re)) out.push((m[1] ?? m[2])!);
  return out;
}

/** Resolves a workspace package specifier through its `@netplay/source` export condition. */
function resolveWorkspace(spec: string): string | undefined {
  const m = /^@netplay\/([^/]+)(\/.*)?$/.exec(spec);
  if (!m) return undefined;
  const dir = join(packagesDir, m[1]!);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    exports: Record<string, Record<string, string>>;
  };
  const entry = pkg.exports[m[2] ? `.${m[2]}` : '.']?.['@netplay/source'];
  return entry ? join(dir, entry) : undefined;
}

interface Graph {
  files: string[];
  /** Specifiers that are neither relative nor a workspace package. */
  external: Array<{ from: string; spec: string }>;
}

/** Walks the module graph reachable from `entry` (bounded to 500 files). */
function walk(entry: string): Graph {
  const seen = new Set<string>();
  const external: Graph['external'] = [];
  const todo = [entry];
  while (todo.length > 0 && seen.size < 500) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
        expect(existsSync(target), `${file} imports missing ${spec}`).toBe(true);
        todo.push(target);
      } else {
        const ws = resolveWorkspace(spec);
        if (ws) todo.push(ws);
        else external.push({ from: file, spec });
      }
    }
  }
  return { files: [...seen], external };
}

const nodeBuiltins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const NODE_GLOBALS = /\bBuffer\b|\bprocess\.|\brequire\(|\b__dirname\b|\b__filename\b|\bsetImmediate\b/;

describe('the browser entry (@netplay/lobby: the room-list client apps/web uses)', () => {
  const graph = walk(resolve(here, '../src/index.ts'));

  it('reaches the client and @netplay/transport', () => {
    expect(graph.files.some((f) => f.endsWith('lobby/src/client.ts'))).toBe(true);
    expect(graph.files.some((f) => f.endsWith('transport/src/index.ts'))).toBe(true);
  });

  it('imports nothing outside the workspace (no node:, ws, @redis/client) and uses no Node global', () => {
    expect(graph.external).toEqual([]);
    const offenders = graph.files
      .filter((f) => NODE_GLOBALS.test(stripComments(readFileSync(f, 'utf8'))))
      .map((f) => f.slice(packagesDir.length + 1));
    expect(offenders).toEqual([]);
  });

  it('the scanner sees the Node imports of /node (it is not blind)', () => {
    const node = walk(resolve(here, '../src/node.ts'));
    const specs = node.external.map((e) => e.spec);
    expect(specs).toContain('ws');
    expect(specs).toContain('@redis/client');
    expect(specs.some((s) => nodeBuiltins.has(s))).toBe(true);
  });
});

/**
 * A module-graph scanner for tests that a browser entry never reaches a Node module: it walks the
 * static and dynamic imports of TypeScript sources from an entry file. Node only (it reads files);
 * exported from `@netplay/transport/conformance` for transport packages' own tests.
 */
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/** What {@link walkModuleGraph} found. */
export interface ModuleGraph {
  /** Every source file reached, the entry first. */
  readonly files: readonly string[];
  /** Specifiers that are neither relative nor resolved by `resolvePackage` (npm packages, `node:`…). */
  readonly external: ReadonlyArray<{
    /** Path of the source file that imports it. */
    readonly from: string;
    /** The specifier as written in that file (e.g. `node:fs`, `ws`). */
    readonly spec: string;
  }>;
  /** Relative imports whose `.ts` file does not exist. */
  readonly missing: ReadonlyArray<{
    /** Path of the source file that imports it. */
    readonly from: string;
    /** The relative specifier as written (with its `.js` extension), whose `.ts` counterpart is absent. */
    readonly spec: string;
  }>;
}

/** Options of {@link walkModuleGraph}. */
export interface ModuleGraphOptions {
  /** Maps a bare specifier to a source file to follow, or `undefined` to record it as external. */
  readonly resolvePackage?: (spec: string) => string | undefined;
  /** Most files walked (default 500). */
  readonly maxFiles?: number;
}

/** Removes comments (roughly: enough for import scanning and global-name checks). */
export function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Every module specifier of a TypeScript source: static imports/exports (type-only too) and dynamic imports. */
export function moduleSpecifiers(source: string): string[] {
  const out: string[] = [];
  const re =
    /\b(?:import|export)\s*(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of stripComments(source).matchAll(re)) out.push((m[1] ?? m[2])!);
  return out;
}

/**
 * Resolves `<scope>/<name>[/<subpath>]` to `<packagesDir>/<name>`'s export of that subpath under
 * `condition` (a monorepo whose packages export their sources under a condition).
 */
export function workspaceSourceResolver(
  packagesDir: string,
  scope = '@netplay',
  condition = '@netplay/source',
): (spec: string) => string | undefined {
  return (spec) => {
    if (!spec.startsWith(`${scope}/`)) return undefined;
    const [name, ...rest] = spec.slice(scope.length + 1).split('/');
    const dir = join(packagesDir, name!);
    if (!existsSync(join(dir, 'package.json'))) return undefined;
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      exports?: Record<string, Record<string, string> | undefined>;
    };
    const entry = pkg.exports?.[rest.length > 0 ? `./${rest.join('/')}` : '.']?.[condition];
    return entry ? join(dir, entry) : undefined;
  };
}

/** Walks the module graph reachable from `entry` (relative `.js` imports are read as `.ts`). */
export function walkModuleGraph(entry: string, options: ModuleGraphOptions = {}): ModuleGraph {
  const maxFiles = options.maxFiles ?? 500;
  const seen = new Set<string>();
  const external: Array<{ from: string; spec: string }> = [];
  const missing: Array<{ from: string; spec: string }> = [];
  const todo = [entry];
  while (todo.length > 0 && seen.size < maxFiles) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of moduleSpecifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
        if (existsSync(target)) todo.push(target);
        else missing.push({ from: file, spec });
      } else {
        const followed = options.resolvePackage?.(spec);
        if (followed) todo.push(followed);
        else external.push({ from: file, spec });
      }
    }
  }
  return { files: [...seen], external, missing };
}

const nodeBuiltins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/** Whether `spec` names a Node built-in module (`fs`, `node:fs`, `node:fs/promises`…). */
export function isNodeBuiltin(spec: string): boolean {
  return spec.startsWith('node:') || nodeBuiltins.has(spec);
}

/** Node globals a browser does not have: `Buffer`, `process.`, `require(`, `__dirname`, `__filename`, `setImmediate`. */
export const NODE_GLOBALS: RegExp = /\bBuffer\b|\bprocess\.|\brequire\(|\b__dirname\b|\b__filename\b|\bsetImmediate\b/;

/** The files among `files` whose code (comments stripped) uses one of {@link NODE_GLOBALS}. */
export function nodeGlobalUsers(files: readonly string[]): string[] {
  return files.filter((f) => NODE_GLOBALS.test(stripComments(readFileSync(f, 'utf8'))));
}

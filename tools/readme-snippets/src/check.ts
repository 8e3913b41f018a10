import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import type { Snippet } from './extract.js';

/** The outcome of one block. */
export interface SnippetResult {
  readonly snippet: Snippet;
  /** The file the block was compiled as (virtual: it is never written to disk). */
  readonly virtualPath: string;
  /** Its full text: the context (if a fragment) and then the block. */
  readonly text: string;
  /** Errors, each `README:line:col TSnnnn: message` (lines inside a context say so). */
  readonly diagnostics: readonly string[];
}

/** Where the checker finds things. */
export interface CheckOptions {
  /** The repository root (holds tsconfig.base.json and node_modules). */
  readonly root: string;
  /** The folder of `NAME.ts` context files. */
  readonly contextsDir: string;
  /**
   * The folder of the virtual files of blocks whose `file` is not a file under `root` (the checker's
   * own test blocks). A README's blocks live next to the README, as if saved there: relative imports
   * and the nearest package.json (`"type": "module"`) are the README's.
   */
  readonly virtualDir: string;
}

/**
 * The compiler options of a user's strict TypeScript 6 project, with the repository's base settings
 * (strict, noUncheckedIndexedAccess, nodenext, verbatimModuleSyntax) and workspace packages resolved to
 * their sources through the `@netplay/source` export condition (no build needed).
 */
export function snippetCompilerOptions(root: string): ts.CompilerOptions {
  const base = ts.readConfigFile(join(root, 'tsconfig.base.json'), ts.sys.readFile);
  if (base.error) throw new Error(ts.flattenDiagnosticMessageText(base.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(base.config, ts.sys, root);
  return {
    ...parsed.options,
    strict: true,
    noEmit: true,
    composite: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    incremental: false,
    moduleDetection: ts.ModuleDetectionKind.Force,
    customConditions: ['@netplay/source'],
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
  };
}

/**
 * Type-checks every snippet in one Program: a fragment is compiled after its context file, a block
 * without `fragment=` exactly as written. Each block is its own module.
 */
export function checkSnippets(snippets: readonly Snippet[], opts: CheckOptions): SnippetResult[] {
  const options = snippetCompilerOptions(opts.root);
  const virtual = new Map<string, { text: string; snippet: Snippet; contextLines: number }>();
  const used = new Map<string, number>();
  const missing: string[] = [];
  for (const s of snippets) {
    let context = '';
    if (s.fragment !== undefined) {
      const path = join(opts.contextsDir, `${s.fragment}.ts`);
      if (existsSync(path)) context = `${readFileSync(path, 'utf8').trimEnd()}\n`;
      else missing.push(`${s.file}:${s.line - 1}: no context file ${path}`);
    }
    const real = existsSync(join(opts.root, s.file));
    const dir = real ? dirname(join(opts.root, s.file)) : opts.virtualDir;
    const base = basename(s.file).replace(/[^A-Za-z0-9]+/g, '-');
    const name = join(dir, `.snippet-${base}-L${s.line}`);
    const n = (used.get(name) ?? 0) + 1;
    used.set(name, n);
    const path = resolve(`${n > 1 ? `${name}-${n}` : name}.ts`).replaceAll('\\', '/');
    const contextLines = context === '' ? 0 : context.split('\n').length - 1;
    virtual.set(path, { text: `${context}${s.code}\n`, snippet: s, contextLines });
  }

  const host = ts.createCompilerHost(options, true);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const v = virtual.get(fileName);
    return v
      ? ts.createSourceFile(fileName, v.text, languageVersion, true)
      : getSourceFile(fileName, languageVersion, onError, shouldCreate);
  };
  host.fileExists = (fileName) => virtual.has(fileName) || fileExists(fileName);
  host.readFile = (fileName) => virtual.get(fileName)?.text ?? readFile(fileName);
  const program = ts.createProgram({ rootNames: [...virtual.keys()], options, host });

  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map((d) =>
    ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  );
  if (global.length > 0) throw new Error(`the snippet program is misconfigured:\n${global.join('\n')}`);

  const results: SnippetResult[] = [];
  for (const [path, v] of virtual) {
    const sf = program.getSourceFile(path);
    if (!sf) throw new Error(`${path} is not in the program`);
    const diags = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
    const s = v.snippet;
    const lines = diags.map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      if (d.start === undefined) return `${s.file}:${s.line} TS${d.code}: ${text}`;
      const pos = sf.getLineAndCharacterOfPosition(d.start);
      if (pos.line < v.contextLines) {
        return `${s.file}:${s.line} (context ${s.fragment}.ts:${pos.line + 1}:${pos.character + 1}) TS${d.code}: ${text}`;
      }
      return `${s.file}:${s.line + pos.line - v.contextLines}:${pos.character + 1} TS${d.code}: ${text}`;
    });
    const problem = missing.find((m) => m.startsWith(`${s.file}:${s.line - 1}:`));
    results.push({ snippet: s, virtualPath: path, text: v.text, diagnostics: problem ? [problem, ...lines] : lines });
  }
  return results;
}

/** The repository root: the nearest folder above `from` with a tsconfig.base.json. */
export function findRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'tsconfig.base.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no tsconfig.base.json above ${from}`);
    dir = up;
  }
  return dir;
}

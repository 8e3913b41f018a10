import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSnippets, findRoot, type SnippetResult } from '../src/check.js';
import { extractSnippets, type Snippet, SnippetSyntaxError } from '../src/extract.js';
import { readmeSnippets } from '../src/readmes.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = findRoot(here);
const contextsDir = fileURLToPath(new URL('../contexts/', import.meta.url));
const virtualDir = fileURLToPath(new URL('../.snippets/', import.meta.url));

const readme = readmeSnippets(root);

// Blocks that must NOT compile, checked in the same Program: the checker is not vacuous.
const selfTest = (line: number, code: string, fragment?: string): Snippet => ({
  file: '(self-test)',
  line,
  lang: 'ts',
  fragment,
  code,
});
const broken: Snippet[] = [
  selfTest(
    1,
    "import { StateRegistry } from '@netplay/state';\nnew StateRegistry().register('a', 0, 'b', { type: 'u8', get: () => 0, set: (v) => {} });",
  ),
  selfTest(2, "import { Prng } from '@netplay/transport';\nconst n: string = new Prng(1).nextU32();"),
  selfTest(3, "import { NoSuchThing } from '@netplay/transport';"),
  selfTest(4, 'session.advanceFrame();'),
  selfTest(5, 'core.advance();', 'no-such-context'),
];
const sound = selfTest(
  6,
  "import { Prng } from '@netplay/transport';\nexport const n: number = new Prng(1).nextU32();",
);

let results: Map<Snippet, SnippetResult>;

beforeAll(() => {
  results = new Map(
    checkSnippets([...readme, ...broken, sound], { root, contextsDir, virtualDir }).map((r) => [r.snippet, r]),
  );
}, 300_000);

afterAll(() => {
  const fragments = readme.filter((s) => s.fragment !== undefined);
  const contexts = new Set(fragments.map((s) => s.fragment));
  console.log(
    `README ts blocks: ${readme.length} (${readme.length - fragments.length} as written, ${fragments.length} fragments in ${contexts.size} contexts)`,
  );
});

describe('every ts block of the READMEs compiles under strict TypeScript', () => {
  it('finds the blocks', () => {
    expect(readme.length).toBeGreaterThanOrEqual(30);
  });
  for (const s of readme) {
    it(`${s.file}:${s.line}${s.fragment === undefined ? '' : ` (fragment=${s.fragment})`}`, () => {
      const r = results.get(s)!;
      expect(r.diagnostics, `compiled as ${r.virtualPath}:\n${r.text}`).toEqual([]);
    });
  }
  it('every context file is used by a block', () => {
    const used = new Set(readme.map((s) => s.fragment));
    const files = readdirSync(contextsDir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.slice(0, -3));
    expect(files.filter((f) => !used.has(f))).toEqual([]);
  });
});

describe('the checker', () => {
  it('reports implicit any, type errors, unknown exports, free names and missing contexts', () => {
    const codes = broken.map((s) => results.get(s)!.diagnostics.join('\n'));
    expect(codes[0]).toMatch(/TS7006/);
    expect(codes[1]).toMatch(/TS2322/);
    expect(codes[2]).toMatch(/TS2305/);
    expect(codes[3]).toMatch(/TS2304/);
    expect(codes[4]).toMatch(/no context file/);
  });
  it('passes a sound block', () => {
    expect(results.get(sound)!.diagnostics).toEqual([]);
  });
  it('reads fences: languages, fragment names, indentation, longer fences', () => {
    const md = [
      '```ts',
      'a();',
      '```',
      '```sh',
      'npm i',
      '```',
      '  ```typescript fragment=x-1',
      '  b();',
      '  ```',
      '````ts',
      '```',
      '````',
    ].join('\n');
    const got = extractSnippets(md, 'r.md');
    expect(got.map((s) => [s.line, s.lang, s.fragment, s.code])).toEqual([
      [2, 'ts', undefined, 'a();'],
      [8, 'typescript', 'x-1', 'b();'],
      [11, 'ts', undefined, '```'],
    ]);
    expect(() => extractSnippets('```ts fragmnet=x\n```', 'r.md')).toThrow(SnippetSyntaxError);
  });
});

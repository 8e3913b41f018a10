/** One fenced TypeScript block of a Markdown file. */
export interface Snippet {
  /** The Markdown file, relative to the repository root (forward slashes). */
  readonly file: string;
  /** 1-based line of the block's first code line in `file`. */
  readonly line: number;
  /** The fence's language word (`ts`, `typescript`, ...). */
  readonly lang: string;
  /**
   * The context the block is compiled in (```` ```ts fragment=NAME ````): the file
   * `contexts/NAME.ts` of this workspace is put before the block. Absent: the block compiles as written.
   */
  readonly fragment: string | undefined;
  /** The block's code, indentation of the fence removed. */
  readonly code: string;
}

/** Thrown when a block's info string is malformed (an unknown attribute, a bad fragment name). */
export class SnippetSyntaxError extends Error {
  override readonly name = 'SnippetSyntaxError';
  readonly code = 'snippet-syntax';
}

/** The fence languages treated as TypeScript. */
export const TS_LANGS: ReadonlySet<string> = new Set(['ts', 'typescript', 'mts', 'cts']);

const OPEN = /^([ \t]*)(`{3,}|~{3,})[ \t]*([^\s`]*)(.*)$/;
const NAME = /^[a-z0-9][a-z0-9-]*$/;

/** Returns every fenced TypeScript block of `markdown` (other languages are ignored). */
export function extractSnippets(markdown: string, file: string): Snippet[] {
  const lines = markdown.split(/\r?\n/);
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = OPEN.exec(lines[i]!);
    if (!m) continue;
    const indent = m[1]!.length;
    const fence = m[2]!;
    const lang = m[3]!.toLowerCase();
    const info = m[4]!.trim();
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j]!;
      const t = l.trim();
      if (t.length >= fence.length && t === fence[0]!.repeat(t.length)) break;
      body.push(l.slice(Math.min(indent, l.length - l.trimStart().length)));
    }
    if (TS_LANGS.has(lang)) {
      out.push({ file, line: i + 2, lang, fragment: parseFragment(info, file, i + 1), code: body.join('\n') });
    }
    i = j;
  }
  return out;
}

function parseFragment(info: string, file: string, line: number): string | undefined {
  if (info === '') return undefined;
  let fragment: string | undefined;
  for (const word of info.split(/\s+/)) {
    const eq = word.indexOf('=');
    const key = eq < 0 ? word : word.slice(0, eq);
    const value = eq < 0 ? '' : word.slice(eq + 1);
    if (key !== 'fragment') throw new SnippetSyntaxError(`${file}:${line}: unknown fence attribute "${word}"`);
    if (!NAME.test(value)) throw new SnippetSyntaxError(`${file}:${line}: bad fragment name "${value}"`);
    fragment = value;
  }
  return fragment;
}

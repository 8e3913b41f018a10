import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractSnippets, type Snippet } from './extract.js';

/** The READMEs whose blocks must compile: the root one and every package's and app's. */
export function readmePaths(root: string): string[] {
  const out = existsSync(join(root, 'README.md')) ? ['README.md'] : [];
  for (const group of ['packages', 'apps']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const rel = `${group}/${name}/README.md`;
      if (existsSync(join(root, rel))) out.push(rel);
    }
  }
  return out;
}

/** Every TypeScript block of every README of {@link readmePaths}. */
export function readmeSnippets(root: string): Snippet[] {
  return readmePaths(root).flatMap((rel) => extractSnippets(readFileSync(join(root, rel), 'utf8'), rel));
}

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractSnippets, type Snippet } from './extract.js';

/** The READMEs whose blocks must compile: the root one, every package's, app's and example's. */
export function readmePaths(root: string): string[] {
  const out = ['README.md', 'examples/README.md'].filter((f) => existsSync(join(root, f)));
  for (const group of ['packages', 'apps', 'examples']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      if (name === 'node_modules') continue;
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

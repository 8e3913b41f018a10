#!/usr/bin/env node
// `npm run pack`: builds every workspace (turbo), then writes the tarball of every public package
// (packages/*, apps/* and tools/* without "private": true) to dist-packages/, and checks each one:
// no .tsbuildinfo, no test files, every `exports` / `bin` target present, `engines` and `repository` set.
// `--no-build` skips the build (the dist/ folders must be current). Prints one line per tarball.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist-packages');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The public workspaces: { name, dir, manifest }. */
export function publicPackages() {
  const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const found = [];
  for (const pattern of rootManifest.workspaces) {
    const base = pattern.endsWith('/*') ? pattern.slice(0, -2) : pattern;
    const dirs = pattern.endsWith('/*')
      ? readdirSync(join(root, base), { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => `${base}/${d.name}`)
      : [base];
    for (const dir of dirs.sort()) {
      const path = join(root, dir, 'package.json');
      if (!existsSync(path)) continue;
      const manifest = JSON.parse(readFileSync(path, 'utf8'));
      if (manifest.private !== true) found.push({ name: manifest.name, dir, manifest });
    }
  }
  return found;
}

/** Every file an `exports` or `bin` field points at (patterns with `*` are skipped). */
function targets(manifest) {
  const files = new Set();
  const walk = (v, key) => {
    if (typeof v === 'string') {
      if (key !== '@netplay/source' && !v.includes('*')) files.add(v.replace(/^\.\//, ''));
    } else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(manifest.exports);
  if (typeof manifest.bin === 'string') files.add(manifest.bin.replace(/^\.\//, ''));
  else if (manifest.bin) for (const b of Object.values(manifest.bin)) files.add(b.replace(/^\.\//, ''));
  return files;
}

const TEST_FILE = /(^|\/)(test|tests|__tests__|bench)\/|\.(test|spec|bench)\.[cm]?[jt]sx?$/;

/** Checks one `npm pack --json` entry; returns the problems found. */
export function problemsOf(entry, manifest) {
  const paths = entry.files.map((f) => f.path);
  const have = new Set(paths);
  const problems = [];
  for (const p of paths) {
    if (p.endsWith('.tsbuildinfo')) problems.push(`ships ${p}`);
    if (TEST_FILE.test(p)) problems.push(`ships the test file ${p}`);
  }
  for (const t of targets(manifest)) if (!have.has(t)) problems.push(`exports/bin target ${t} is missing`);
  if (!manifest.engines?.node) problems.push('no engines.node');
  if (!manifest.repository?.url) problems.push('no repository');
  if (!have.has('README.md')) problems.push('no README.md');
  return problems;
}

/**
 * `tsc -b` trusts a package's .tsbuildinfo and rebuilds nothing when dist/ lost its files (a clean
 * that spared the dot file): drop the build info of every public package whose exports are missing.
 */
function forgetStaleBuilds(pkgs) {
  for (const p of pkgs) {
    const missing = [...targets(p.manifest)].some((t) => t.startsWith('dist/') && !existsSync(join(root, p.dir, t)));
    const info = join(root, p.dir, 'dist', '.tsbuildinfo');
    if (missing && existsSync(info)) {
      console.log(`${p.name}: dist/ is incomplete; removing its stale .tsbuildinfo so the build runs`);
      rmSync(info);
    }
  }
}

function main() {
  const pkgs = publicPackages();
  if (!process.argv.includes('--no-build')) {
    forgetStaleBuilds(pkgs);
    execFileSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' });
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const args = ['pack', '--json', '--pack-destination', out, ...pkgs.flatMap((p) => ['-w', p.name])];
  const entries = JSON.parse(
    execFileSync(npm, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }),
  );
  let failed = false;
  for (const entry of entries) {
    const pkg = pkgs.find((p) => p.name === entry.name);
    const problems = pkg ? problemsOf(entry, pkg.manifest) : ['not a public workspace'];
    const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
    console.log(
      `${entry.filename.padEnd(40)} ${String(entry.entryCount).padStart(4)} files ${kb(entry.size).padStart(10)} packed ${kb(entry.unpackedSize).padStart(11)} unpacked`,
    );
    for (const p of problems) console.error(`  ${entry.name}: ${p}`);
    failed ||= problems.length > 0;
  }
  if (entries.length !== pkgs.length) {
    console.error(`packed ${entries.length} tarballs for ${pkgs.length} public packages`);
    failed = true;
  }
  if (failed) process.exit(1);
  console.log(`${entries.length} tarballs in dist-packages/`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();

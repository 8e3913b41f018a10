#!/usr/bin/env node
// `npm run test:pack`: what a user gets from the tarballs. Runs `npm run pack` (build + pack + checks),
// then, in an empty project in the OS temp folder (outside the workspace), installs every tarball of
// dist-packages/ plus TypeScript (`npm install --prefer-offline`: the registry's packages come from npm's
// cache when it has them), and
//   1. type-checks pack-test/two-peer-rollback.ts with strict TypeScript (nodenext) against the
//      tarballs' .d.ts, emits it and runs it: two rollback peers over the simulated network whose
//      final frames must equal an offline replay (the program exits 1 otherwise);
//   2. require()s every package from CommonJS (require(esm), Node >= 20.19);
//   3. runs the packed CLI's bin: `netplay --version`;
//   4. copies examples/message-channel-transport/src (a new transport and the conformance kit run on it)
//      into the project, type-checks it against the tarballs and runs it: the kit's subpath export
//      `@netplay/transport/conformance` as a user gets it (the example asserts that every test passes).
// `--no-pack` reuses dist-packages/ as it is; `--keep` leaves the temp project for inspection.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const here = fileURLToPath(new URL('./pack-test/', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const TYPESCRIPT = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies.typescript;

function run(cmd, args, cwd, capture = false) {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  return execFileSync(cmd, args, { cwd, stdio: capture ? ['ignore', 'pipe', 'inherit'] : 'inherit', encoding: 'utf8' });
}

function fail(message) {
  console.error(`test:pack FAILED: ${message}`);
  process.exit(1);
}

if (!process.argv.includes('--no-pack')) run(process.execPath, [join(root, 'scripts/pack.mjs')], root);

const tarDir = join(root, 'dist-packages');
const tarballs = readdirSync(tarDir)
  .filter((f) => f.endsWith('.tgz'))
  .map((f) => join(tarDir, f));
if (tarballs.length === 0) fail('no tarballs in dist-packages/ (run npm run pack)');

const dir = mkdtempSync(join(tmpdir(), 'netplay-pack-test-'));
try {
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'netplay-pack-test', private: true, type: 'module' }, null, 2)}\n`,
  );
  writeFileSync(
    join(dir, 'tsconfig.json'),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: 'es2022',
          lib: ['es2023'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          types: ['node'],
          strict: true,
          noUncheckedIndexedAccess: true,
          verbatimModuleSyntax: true,
          skipLibCheck: false,
          outDir: 'out',
        },
        rootDir: '.',
        include: ['two-peer-rollback.ts', 'mc/*.ts'],
      },
      null,
      2,
    )}\n`,
  );
  copyFileSync(join(here, 'two-peer-rollback.ts'), join(dir, 'two-peer-rollback.ts'));
  copyFileSync(join(here, 'require-all.cjs'), join(dir, 'require-all.cjs'));
  const example = join(root, 'examples/message-channel-transport/src');
  mkdirSync(join(dir, 'mc'));
  for (const f of readdirSync(example).filter((f) => f.endsWith('.ts')))
    copyFileSync(join(example, f), join(dir, 'mc', f));
  const nodeTypes = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies['@types/node'];
  run(
    npm,
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--save-exact',
      ...tarballs,
      `typescript@${TYPESCRIPT}`,
      `@types/node@${nodeTypes}`,
    ],
    dir,
  );

  const installed = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies;
  const names = Object.keys(installed).filter((n) => n.startsWith('@netplay/'));
  if (names.length !== tarballs.length)
    fail(`installed ${names.length} @netplay packages from ${tarballs.length} tarballs`);
  for (const n of names) {
    if (!String(installed[n]).startsWith('file:')) fail(`${n} did not come from a tarball: ${installed[n]}`);
  }

  run(process.execPath, [join(dir, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], dir);
  const out = run(process.execPath, ['out/two-peer-rollback.js'], dir, true);
  process.stdout.write(out);
  if (!out.includes('OK two-peer rollback agrees with the offline replay')) fail('the rollback program did not agree');

  const req = run(process.execPath, ['require-all.cjs', JSON.stringify(names)], dir, true);
  process.stdout.write(req);
  if (!req.includes(`OK require() of ${names.length} packages`)) fail('require() of the packages');

  if (names.includes('@netplay/cli')) {
    const version = run(process.execPath, ['node_modules/@netplay/cli/bin/netplay.mjs', '--version'], dir, true);
    process.stdout.write(version);
    if (!/\d+\.\d+\.\d+/.test(version)) fail('netplay --version printed no version');
  }
  const mc = run(process.execPath, ['out/mc/main.js'], dir, true);
  process.stdout.write(mc);
  if (!/passes the conformance kit/.test(mc)) fail('the MessageChannel example did not pass the conformance kit');

  console.log(`test:pack OK: ${tarballs.length} tarballs installed into ${dir}, type-checked and run`);
} finally {
  if (process.argv.includes('--keep')) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

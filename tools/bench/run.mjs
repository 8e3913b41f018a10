// Runs every bench/*.bench.ts of the package in the current directory, one Node process each,
// with workspace packages resolved to their sources and GC exposed for allocation figures.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

const files = existsSync('bench')
  ? readdirSync('bench')
      .filter((f) => f.endsWith('.bench.ts'))
      .sort()
  : [];
if (files.length === 0) {
  console.log('no benchmarks in this package yet');
  process.exit(0);
}
let status = 0;
for (const f of files) {
  console.log(`\n# ${process.env.npm_package_name ?? ''} bench/${f}`);
  const r = spawnSync(
    process.execPath,
    ['--conditions=@netplay/source', '--expose-gc', '--import', 'tsx', `bench/${f}`],
    {
      stdio: 'inherit',
    },
  );
  if (r.status !== 0) status = r.status ?? 1;
}
process.exit(status);

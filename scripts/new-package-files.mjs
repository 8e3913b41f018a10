// One-off scaffolding helper kept for contributors adding a package: writes the standard
// package.json / tsconfig / vitest config for packages/<name> when they are missing.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [, , name, description = '', depsArg = ''] = process.argv;
if (!name) {
  console.error('usage: node scripts/new-package-files.mjs <folder> [description] [dep,dep]');
  process.exit(2);
}
const dir = join('packages', name);
mkdirSync(join(dir, 'src'), { recursive: true });
mkdirSync(join(dir, 'test'), { recursive: true });
mkdirSync(join(dir, 'bench'), { recursive: true });
const deps = depsArg ? depsArg.split(',') : [];
const write = (file, text) => {
  const p = join(dir, file);
  if (!existsSync(p)) writeFileSync(p, text);
};
write(
  'package.json',
  `${JSON.stringify(
    {
      name: `@netplay/${name}`,
      version: '0.0.0',
      description,
      license: 'MIT',
      type: 'module',
      sideEffects: false,
      exports: {
        '.': {
          '@netplay/source': './src/index.ts',
          types: './dist/index.d.ts',
          default: './dist/index.js',
        },
      },
      files: ['dist', 'src', 'README.md'],
      scripts: {
        build: 'tsc -b',
        typecheck: 'tsc -p tsconfig.test.json',
        test: 'vitest run',
        bench: 'node ../../tools/bench/run.mjs',
      },
      dependencies: Object.fromEntries(deps.map((d) => [d, '0.0.0'])),
    },
    null,
    2,
  )}\n`,
);
write(
  'tsconfig.json',
  `${JSON.stringify(
    {
      extends: '../../tsconfig.base.json',
      compilerOptions: { rootDir: 'src', outDir: 'dist', tsBuildInfoFile: 'dist/.tsbuildinfo' },
      include: ['src'],
      references: deps.map((d) => ({ path: `../${d.replace('@netplay/', '')}` })),
    },
    null,
    2,
  )}\n`,
);
write(
  'tsconfig.test.json',
  `${JSON.stringify(
    {
      extends: '../../tsconfig.base.json',
      compilerOptions: { composite: false, noEmit: true, rootDir: '.', declaration: false, declarationMap: false },
      include: ['src', 'test', 'bench'],
    },
    null,
    2,
  )}\n`,
);
write(
  'vitest.config.ts',
  `import { packageConfig } from '../../vitest.shared.js';\n\nexport default packageConfig('${name}');\n`,
);

import { fileURLToPath } from 'node:url';
import { defineConfig, type ViteUserConfig } from 'vitest/config';

/** Resolve workspace packages to their TypeScript sources, so tests never need a prior build. */
const conditions = ['@netplay/source', 'module', 'node', 'import', 'default'];
const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The vitest configuration every package uses. Each package writes a JSON report to
 * `test-results/<name>.json` at the repository root; `scripts/test-summary.mjs` totals them.
 */
export function packageConfig(name: string): ViteUserConfig {
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ['@netplay/source'] } },
    test: {
      include: ['test/**/*.test.ts'],
      environment: 'node',
      passWithNoTests: true,
      testTimeout: 60_000,
      hookTimeout: 60_000,
      reporters: ['default', 'json'],
      outputFile: { json: `${root}test-results/${name}.json` },
    },
  });
}

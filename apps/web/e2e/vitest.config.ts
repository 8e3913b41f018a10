import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The browser end-to-end tests: not part of `npm test` (they need Debian's chromium, which
// .ci/setup-chromium.sh installs); run with `npm run test:e2e`.
const conditions = ['@netplay/source', 'module', 'node', 'import', 'default'];
const root = fileURLToPath(new URL('../../..', import.meta.url));

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@netplay/source'] } },
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['e2e/**/*.test.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    reporters: ['default', 'json'],
    outputFile: { json: `${root}test-results/web-e2e.json` },
  },
});

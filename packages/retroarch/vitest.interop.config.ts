import { defineConfig } from 'vitest/config';
import { packageConfig } from '../../vitest.shared.js';

const base = packageConfig('retroarch-interop');

/** Interop tests against a real RetroArch (`npm run test:interop`; needs `.ci/setup-retroarch.sh`). */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['interop/**/*.test.ts'],
    passWithNoTests: false,
    fileParallelism: false,
    testTimeout: 90_000,
  },
});

import { mergeConfig } from 'vitest/config';
import { packageConfig } from '../../vitest.shared.js';

// The CLI's tests mostly wait on wall time (real sockets, 60 fps pacing, child processes), not on
// the CPU, so three test files run at once even on a 2-core machine. The real-core tests
// (test/libretro, Debian's libretro cores) run with `npm run test:libretro` after .ci/setup-libretro.sh.
export default mergeConfig(packageConfig('cli'), {
  test: { maxWorkers: 3, exclude: ['test/libretro/**', 'node_modules/**'] },
});

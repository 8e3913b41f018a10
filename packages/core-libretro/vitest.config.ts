import { mergeConfig } from 'vitest/config';
import { packageConfig } from '../../vitest.shared.js';

// The default suite needs no libretro core; the real-core tests (test/libretro) run with
// `npm run test:libretro` after .ci/setup-libretro.sh.
export default mergeConfig(packageConfig('core-libretro'), {
  test: { exclude: ['test/libretro/**', 'node_modules/**'] },
});

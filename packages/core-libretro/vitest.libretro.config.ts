import { mergeConfig } from 'vitest/config';
import { packageConfig } from '../../vitest.shared.js';

// Real cores (Debian's libretro-nestopia, ...) and the efp ROM: run .ci/setup-libretro.sh first.
// Files run one after the other: each loads native libraries and the machine is small.
export default mergeConfig(packageConfig('core-libretro-real'), {
  test: { include: ['test/libretro/**/*.test.ts'], fileParallelism: false },
});

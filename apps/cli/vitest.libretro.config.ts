import { packageConfig } from '../../vitest.shared.js';

// Real cores (Debian's libretro-nestopia) and the efp ROM: run .ci/setup-libretro.sh first.
// Files run one after the other: each loads native libraries or runs CLI processes, and the machine is small.
const config = packageConfig('cli-libretro');
config.test = { ...config.test, include: ['test/libretro/**/*.test.ts'], fileParallelism: false };
export default config;

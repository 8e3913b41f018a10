import { packageConfig } from '../../vitest.shared.js';

// Real cores (Debian's libretro-nestopia, ...) and the efp ROM: run .ci/setup-libretro.sh first.
// Files run one after the other: each loads native libraries and the machine is small.
// The globalSetup assembles our own GB and GBA test ROMs (test-roms/) into test-roms/out/ first:
// it needs Debian's sdcc and binutils-arm-none-eabi and fails naming them when they are missing.
const config = packageConfig('core-libretro-real');
config.test = {
  ...config.test,
  include: ['test/libretro/**/*.test.ts'],
  fileParallelism: false,
  globalSetup: ['./scripts/build-test-roms.ts'],
};
export default config;

import { mergeConfig } from 'vitest/config';
import { packageConfig } from '../../vitest.shared.js';

export default mergeConfig(packageConfig('core-wasm'), { test: { globalSetup: ['./test/global-setup.ts'] } });

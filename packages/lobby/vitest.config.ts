import { packageConfig } from '../../vitest.shared.js';

const config = packageConfig('lobby');
// Tests that start redis-server run with `npm run test:redis` (vitest.redis.config.ts).
export default { ...config, test: { ...config.test, exclude: ['test/**/*.redis.test.ts'] } };

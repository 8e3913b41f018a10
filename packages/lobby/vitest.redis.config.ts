import { packageConfig } from '../../vitest.shared.js';

const config = packageConfig('lobby-redis');
/** `npm run test:redis`: the tests that start their own redis-server (Debian package `redis-server`). */
export default { ...config, test: { ...config.test, include: ['test/**/*.redis.test.ts'] } };

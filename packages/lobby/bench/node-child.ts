/**
 * One lobby node in its own process for the bench: `node-child.ts REDIS_URL|- PREFIX NODE_ID`.
 * Sends `{ url }` once listening; answers `'mem'` with its heap after a GC. Caps and budgets are
 * lifted (the bench is the only client).
 */
import { startLobby } from '../src/node.js';

const [redis, prefix, nodeId] = process.argv.slice(2);
const lobby = await startLobby({
  ...(redis && redis !== '-' ? { redis, redisPrefix: prefix } : {}),
  nodeId: nodeId ?? 'n',
  maxConnectionsPerAddress: 100_000,
  api: { rateLimits: false, maxRooms: 1e9, maxRoomsPerAddress: 1e9 },
  signaling: {
    rateLimits: false,
    maxSockets: 100_000,
    maxPeersPerAddress: 100_000,
    maxRoomsPerAddress: 100_000,
    maxRooms: 100_000,
    admission: { maxPending: 10_000, maxPendingPerAddress: 10_000 },
  },
  relay: { bytesPerSecond: 1 << 30, burstBytes: 1 << 30 },
});
process.send?.({ url: lobby.url });
process.on('message', (m) => {
  if (m === 'mem') {
    (globalThis as { gc?: () => void }).gc?.();
    process.send?.({ heap: process.memoryUsage().heapUsed });
  } else if (m === 'exit') {
    void lobby.close().then(() => process.exit(0));
  }
});

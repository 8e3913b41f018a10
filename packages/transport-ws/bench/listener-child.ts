/**
 * A netplay-ws listener alone in its process, for bench/memory.bench.ts: the parent reads this
 * process's RSS while it attacks the listener. argv[2]: JSON of extra listen options. Sends
 * `{ port }` once listening; on any message, answers `{ rss, receiveBufferBytes, sockets }` after a GC.
 */
import { listen } from '../src/server.js';

const extra = JSON.parse(process.argv[2] ?? '{}') as Record<string, unknown>;
const listener = await listen({ channels: [{ name: 'control', kind: 'reliable' }], ...extra });
listener.on('error', () => {});
const send = (m: unknown) => process.send?.(m);
process.on('message', () => {
  (globalThis as { gc?: () => void }).gc?.();
  send({
    rss: process.memoryUsage().rss,
    receiveBufferBytes: listener.receiveBufferBytes,
    sockets: listener.socketCount,
    paused: listener.pausedSocketCount,
  });
});
process.on('disconnect', () => {
  listener.close();
  process.exit(0);
});
send({ port: listener.port });

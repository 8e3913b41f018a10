/**
 * A netplay-ws listener alone in its process, for bench/memory.bench.ts: the parent reads this
 * process's RSS while it attacks the listener. argv[2]: JSON of extra listen options. Sends
 * `{ port }` once listening; on any message, answers `{ rss, receiveBufferBytes, sockets, paused,
 * cpuMicros, messages }` after a GC (CPU: user + system since the start; messages: delivered).
 */
import { listen } from '../src/server.js';

const extra = JSON.parse(process.argv[2] ?? '{}') as Record<string, unknown>;
const listener = await listen({ channels: [{ name: 'control', kind: 'reliable' }], ...extra });
listener.on('error', () => {});
const send = (m: unknown) => process.send?.(m);
let messages = 0;
listener.on('connection', (c) => c.on('message', () => messages++));
process.on('message', () => {
  (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  send({
    rss: process.memoryUsage().rss,
    receiveBufferBytes: listener.receiveBufferBytes,
    sockets: listener.socketCount,
    paused: listener.pausedSocketCount,
    cpuMicros: cpu.user + cpu.system,
    messages,
  });
});
process.on('disconnect', () => {
  listener.close();
  process.exit(0);
});
send({ port: listener.port });

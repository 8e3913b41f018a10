import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, Socket } from 'node:net';

/*
 * A redis-server of the test's own (Debian's `redis-server`) on a free loopback port, without
 * persistence. The same shape as packages/lobby/test/redis-server.ts, which is not part of the
 * lobby package's exports.
 */

/** The path of redis-server (`REDIS_SERVER` or /usr/bin/redis-server), or a thrown error naming the Debian package. */
export function requireRedisServer(): string {
  for (const p of [process.env.REDIS_SERVER, '/usr/bin/redis-server']) if (p && existsSync(p)) return p;
  throw new Error(
    'redis-server not found: install the Debian package `redis-server` (apt-get install redis-server) or set REDIS_SERVER',
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.once('error', () => done(false));
    s.once('data', (d) => done(d.toString().startsWith('+PONG')));
    s.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
  });
}

export interface RedisServer {
  /** `redis://127.0.0.1:PORT`. */
  readonly url: string;
  /** Kills it (SIGKILL) and waits for its exit. */
  kill(): Promise<void>;
}

/** Starts redis-server on a free loopback port and waits until it answers PING. */
export async function startRedisServer(): Promise<RedisServer> {
  const bin = requireRedisServer();
  const port = await freePort();
  const child: ChildProcess = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: 'ignore' },
  );
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  };
  const end = Date.now() + 10_000;
  while (!(await ping(port))) {
    if (Date.now() > end || child.exitCode !== null) {
      await kill();
      throw new Error(`redis-server (${bin}) did not start on port ${port}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { url: `redis://127.0.0.1:${port}`, kill };
}

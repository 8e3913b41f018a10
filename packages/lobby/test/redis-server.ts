import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, Socket } from 'node:net';

/** Where redis-server is: `REDIS_SERVER`, /usr/bin/redis-server, or undefined. */
export function findRedisServer(): string | undefined {
  for (const p of [process.env.REDIS_SERVER, '/usr/bin/redis-server', '/usr/local/bin/redis-server']) {
    if (p && existsSync(p)) return p;
  }
  return undefined;
}

/** The path of redis-server, or a thrown error naming the Debian package to install. */
export function requireRedisServer(): string {
  const p = findRedisServer();
  if (!p) {
    throw new Error(
      'redis-server not found: install the Debian package `redis-server` (apt-get install redis-server) or set REDIS_SERVER',
    );
  }
  return p;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

async function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.once('error', () => done(false));
    s.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
    s.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** A redis-server of our own on a free loopback port, without persistence. */
export class RedisProcess {
  private child: ChildProcess | undefined;
  private constructor(
    readonly bin: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<RedisProcess> {
    const r = new RedisProcess(requireRedisServer(), await freePort());
    await r.spawn();
    return r;
  }

  /** Kills it hard (SIGKILL), as a crash would. */
  async kill(): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  }

  /** Kills it and starts a fresh, empty one on the same port. */
  async restart(): Promise<void> {
    await this.kill();
    await this.spawn();
  }

  private async spawn(): Promise<void> {
    this.child = spawn(
      this.bin,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      { stdio: 'ignore' },
    );
    const end = Date.now() + 10_000;
    while (!(await ping(this.port))) {
      if (Date.now() > end || this.child.exitCode !== null)
        throw new Error(`redis-server did not start on ${this.port}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../src/index.js';

const bin = fileURLToPath(new URL('../bin/netplay-lobby.mjs', import.meta.url));
let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

describe('netplay-lobby options', () => {
  it('parses every option and refuses bad ones naming them', () => {
    const o = parseArgs([
      '--port',
      '9000',
      '--host',
      '0.0.0.0',
      '--redis',
      'redis://r:6379',
      '--redis-prefix',
      'x:',
      '--node-id',
      'n1',
      '--ttl',
      '5000',
      '--no-signal',
      '--relay-port',
      '9001',
      '--relay-rate',
      '65536',
      '--quiet',
    ]);
    expect(o).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      redis: 'redis://r:6379',
      redisPrefix: 'x:',
      nodeId: 'n1',
      ttlMs: 5000,
      signal: false,
      relay: true,
      relayPort: 9001,
      relayRate: 65536,
      quiet: true,
    });
    expect(parseArgs([])).toMatchObject({ port: 8787, host: '127.0.0.1', signal: true, relay: true, ttlMs: 30000 });
    for (const [argv, word] of [
      [['--port', 'x'], '--port'],
      [['--port', '70000'], '--port'],
      [['--redis', 'http://x'], '--redis'],
      [['--ttl', '10'], '--ttl'],
      [['--host'], '--host'],
      [['--frobnicate'], '--frobnicate'],
    ] as const) {
      expect(() => parseArgs(argv)).toThrow(UsageError);
      expect(() => parseArgs(argv)).toThrow(word);
    }
  });
});

describe('the netplay-lobby command (real process)', () => {
  it('starts with one command, prints what it does, serves rooms and stops on SIGTERM', async () => {
    child = spawn(process.execPath, [bin, '--port', '0', '--ttl', '2000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d.toString();
    });
    child.stderr?.on('data', (d) => {
      out += d.toString();
    });
    const until = async (re: RegExp) => {
      const end = Date.now() + 30_000;
      while (!re.test(out)) {
        if (Date.now() > end) throw new Error(`no ${re} in output:\n${out}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return re.exec(out) as RegExpExecArray;
    };
    const m = await until(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const base = m[1] as string;
    await until(/relay: +ws:\/\/127\.0\.0\.1:\d+\/relay/);
    expect(out).toContain('store:     in memory');
    expect(out).toContain(`signaling: ${base.replace('http', 'ws')}/signal`);
    const body = {
      name: 'cli room',
      game: 'g',
      core: 'chip8',
      mode: 'rollback',
      hasPassword: true,
      players: 1,
      slots: 2,
      endpoints: [],
    };
    const res = await fetch(`${base}/rooms`, { method: 'POST', body: JSON.stringify(body) });
    expect(res.status).toBe(201);
    const { room } = (await res.json()) as { room: { id: string } };
    await until(new RegExp(`room ${room.id} "cli room" g/chip8 rollback 1/2 password`));
    await until(new RegExp(`room ${room.id} expired`));
    const exited = new Promise<number | null>((r) => child?.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('exits 2 with the reason on a bad option', async () => {
    const c = spawn(process.execPath, [bin, '--port', 'nope'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    let err = '';
    c.stderr?.on('data', (d) => {
      err += d.toString();
    });
    const code = await new Promise<number | null>((r) => c.on('exit', (x) => r(x)));
    expect(code).toBe(2);
    expect(err).toContain('--port needs a whole number');
  });
});

/**
 * `netplay-lobby --retroarch-port`: the RetroArch tunnel relay next to the lobby, in the real
 * command (a child process) and through `runLobby`, with a fake RetroArch host speaking RATS.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs, type RunningLobby, runLobby } from '../src/index.js';

const bin = fileURLToPath(new URL('../bin/netplay-lobby.mjs', import.meta.url));
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const RATS = Buffer.from('RATS', 'latin1');
const RATL = Buffer.from('RATL', 'latin1');

/** A raw TCP peer on 127.0.0.1 that keeps what it receives. */
async function peer(port: number): Promise<{ socket: Socket; received: () => Buffer; closed: Promise<void> }> {
  const socket = connect({ port, host: '127.0.0.1' });
  cleanup.push(() => socket.destroy());
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => Buffer.concat(chunks), closed };
}

async function until<T>(get: () => T | undefined, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A fake RetroArch host: asks for a session (`RATS` + 12 zeros) and returns the id the relay gives. */
async function fakeHost(port: number): Promise<{ id: Buffer; host: Awaited<ReturnType<typeof peer>> }> {
  const host = await peer(port);
  host.socket.write(Buffer.concat([RATS, Buffer.alloc(12)]));
  const reply = await until(() => (host.received().length >= 16 ? host.received() : undefined), 'the session id');
  expect(reply.length).toBe(16);
  expect(reply.subarray(0, 4)).toEqual(RATS);
  const id = Buffer.from(reply.subarray(4, 16));
  expect(id.equals(Buffer.alloc(12))).toBe(false);
  return { id, host };
}

interface SessionsBody {
  sessions: Array<{ id: string; address: string; waiting: number; links: number }>;
  stats: { sessions: number; sessionsCreated: number; connections: number };
}

async function sessions(base: string): Promise<SessionsBody> {
  const res = await fetch(`${base}/retroarch/sessions`);
  expect(res.status).toBe(200);
  return (await res.json()) as SessionsBody;
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

describe('netplay-lobby --retroarch-port', () => {
  it('parses --retroarch-port (off by default) and refuses a bad one', () => {
    expect(parseArgs([]).retroarchPort).toBeUndefined();
    expect(parseArgs(['--retroarch-port', '55435']).retroarchPort).toBe(55435);
    expect(parseArgs(['--retroarch-port', '0']).retroarchPort).toBe(0);
    expect(() => parseArgs(['--retroarch-port', 'x'])).toThrow('--retroarch-port');
    expect(() => parseArgs(['--retroarch-port', '65536'])).toThrow('--retroarch-port');
  });

  it("the real command runs the relay, prints the RetroArch lines, lists a fake host's session, closes the port on SIGTERM", async () => {
    const child: ChildProcess = spawn(process.execPath, [bin, '--port', '0', '--retroarch-port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanup.push(() => child.kill('SIGKILL'));
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d.toString();
    });
    child.stderr?.on('data', (d) => {
      out += d.toString();
    });
    const line = (re: RegExp) => until(() => re.exec(out) ?? undefined, `${re} in:\n${out}`, 30_000);
    const base = (await line(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1] as string;
    const port = Number((await line(/netplay_custom_mitm_server = "127\.0\.0\.1\|(\d+)"/))[1]);
    expect(port).toBeGreaterThan(0);
    expect(out).toContain('netplay_use_mitm_server = "true"');
    expect(out).toContain('netplay_mitm_server = "custom"');
    expect(out).toContain(`retroarch: tunnel relay on 127.0.0.1:${port}, sessions at ${base}/retroarch/sessions`);
    expect(await sessions(base)).toMatchObject({ sessions: [], stats: { sessions: 0, sessionsCreated: 0 } });

    const { id, host } = await fakeHost(port);
    const hex = id.toString('hex');
    const listed = await sessions(base);
    expect(listed.sessions).toEqual([expect.objectContaining({ id: hex, address: '127.0.0.1', waiting: 0, links: 0 })]);
    expect(listed.stats).toMatchObject({ sessions: 1, sessionsCreated: 1 });
    // The relay's events are printed.
    await line(new RegExp(`retroarch: tunnel session .*${hex}`));

    // A client asking for the session is announced to the host (RATL + client id).
    const client = await peer(port);
    client.socket.write(Buffer.concat([RATS, id]));
    const ratl = await until(
      () => (host.received().length >= 32 ? host.received().subarray(16, 32) : undefined),
      'RATL to the host',
    );
    expect(ratl.subarray(0, 4)).toEqual(RATL);
    expect((await sessions(base)).sessions[0]).toMatchObject({ id: hex, waiting: 1 });

    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await host.closed;
    await client.closed;
    expect(await refused(port)).toBe(true);
  });

  it('runLobby: the relay on its port, the sessions route, close() frees the port; without the option no route', async () => {
    const lines: string[] = [];
    const running: RunningLobby = await runLobby(parseArgs(['--port', '0', '--retroarch-port', '0', '--quiet']), (l) =>
      lines.push(l),
    );
    let closed = false;
    cleanup.push(() => (closed ? undefined : running.close()));
    const port = running.retroarch?.port as number;
    expect(running.retroarchAddress).toBe(`127.0.0.1|${port}`);
    expect(lines).toContain(`      netplay_custom_mitm_server = "127.0.0.1|${port}"`);
    const { id } = await fakeHost(port);
    expect((await sessions(running.lobby.url)).sessions.map((s) => s.id)).toEqual([id.toString('hex')]);
    await running.close();
    closed = true;
    expect(await refused(port)).toBe(true);

    const plain = await runLobby(parseArgs(['--port', '0', '--quiet']), () => undefined);
    cleanup.push(() => plain.close());
    expect(plain.retroarch).toBeUndefined();
    const res = await fetch(`${plain.lobby.url}/retroarch/sessions`);
    expect(res.status).toBe(404);
  });
});

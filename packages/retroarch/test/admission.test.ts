/** Admission of the RetroArch host listener on real TCP loopback: half-open floods, password attempts, rate limits. */
import { type AddressInfo, connect, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, expect, it } from 'vitest';
import type { RetroArchErrorCode, RetroArchHostEvent } from '../src/index.js';
import { connectRetroArch, type ListenRetroArchHostOptions, listenRetroArchHost } from '../src/node.js';

const INFO = { contentCrc: 1, coreName: 'Nestopia', coreVersion: 'x' };

let server: Server | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function until(pred: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = performance.now() + ms;
  while (!pred() && performance.now() < end) await new Promise((r) => setTimeout(r, 5));
  if (!pred()) throw new Error(`timed out waiting for ${what}`);
}

/** A host listener; returns its port and the error codes of every closed connection. */
async function listen(
  extra: Partial<ListenRetroArchHostOptions> = {},
): Promise<{ port: number; closed: Array<RetroArchErrorCode | 'clean'>; joined: string[] }> {
  const closed: Array<RetroArchErrorCode | 'clean'> = [];
  const joined: string[] = [];
  server = await listenRetroArchHost({
    port: 0,
    host: { info: INFO },
    onEvent: (_c, e: RetroArchHostEvent) => {
      if (e.type === 'closed') closed.push(e.error?.code ?? 'clean');
      if (e.type === 'joined') joined.push(e.nick);
    },
    ...extra,
  });
  return { port: (server.address() as AddressInfo).port, closed, joined };
}

/** A TCP connection that never says anything, from `localAddress`; resolves once connected (or closed). */
function silent(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1', localAddress });
    sockets.push(s);
    s.on('error', () => undefined);
    s.once('connect', () => resolve(s));
    s.once('close', () => resolve(s));
  });
}

function connections(): Promise<number> {
  return new Promise((resolve, reject) => server?.getConnections((e, n) => (e ? reject(e) : resolve(n))));
}

it('silent sockets are closed after the pending timeout (51 sockets, 300 ms)', async () => {
  const { port, closed } = await listen({ admission: { pendingTimeoutMs: 300 } });
  const socks = await Promise.all(Array.from({ length: 51 }, (_, i) => silent(port, `127.0.0.${2 + (i % 7)}`)));
  const start = performance.now();
  let gone = 0;
  for (const s of socks) s.once('close', () => gone++);
  await until(() => gone === 51, 'every silent socket to be closed', 3000);
  // Each was closed by the timeout (at most a sweep period late), none before it.
  expect(performance.now() - start).toBeLessThan(300 + 250 + 500);
  expect(closed.filter((c) => c === 'timeout').length).toBe(51 - closed.filter((c) => c === 'full').length);
  expect(await connections()).toBe(0);
});

it('the connection handshake timeout fires on a timer for a client that never speaks', async () => {
  // No admission limit in the way: only the connection's own handshakeTimeoutMs.
  const { port, closed } = await listen({
    host: { info: INFO, handshakeTimeoutMs: 200 },
    admission: { pendingTimeoutMs: 60_000 },
  });
  const s = await silent(port, '127.0.0.2');
  await until(() => s.destroyed || s.readableEnded, 'the socket to close', 2000);
  expect(closed).toEqual(['timeout']);
});

it('1,000 half-open connections from other addresses: a RetroArch client joins within 1 s', async () => {
  const { port, joined, closed } = await listen();
  const attackers = (i: number): string => `127.0.0.${2 + (i % 20)}`;
  let opened = 0;
  const flood = async (n: number): Promise<void> => {
    // In batches of 50, each batch connected (or refused) before the next: bounded.
    for (let b = 0; b < n; b += 50) {
      await Promise.all(Array.from({ length: Math.min(50, n - b) }, () => silent(port, attackers(opened++))));
    }
  };
  await flood(300);
  const start = performance.now();
  let joinedAt: number | undefined;
  const legit = connectRetroArch({
    port,
    nick: 'alice',
    localAddress: '127.0.0.1',
    onEvent: (e) => {
      if (e.type === 'synced') joinedAt ??= performance.now();
    },
  });
  await flood(700);
  const conn = await legit;
  sockets.push(conn.socket);
  await until(() => conn.client.state === 'spectating', 'alice to be synced', 2000);
  expect(joinedAt! - start).toBeLessThan(1000);
  expect(joined).toContain('alice');
  expect(opened).toBe(1000);
  // The flood is held to the caps: once the server has accepted every attacker, all but 64 pending
  // ones were refused per address (full) or evicted (timeout); alice is the 65th connection.
  await until(() => closed.length >= 1000 - 64, 'the server to accept the whole flood', 5000);
  expect(closed.every((c) => c === 'full' || c === 'timeout')).toBe(true);
  expect(await connections()).toBe(64 + 1);
  conn.close();
});

it('wrong passwords back off per address (too-many-attempts, unchecked); another address gets in', async () => {
  const { port, closed, joined } = await listen({ host: { info: INFO, password: 'pw', salt: 0x1234 } });
  for (let i = 0; i < 12; i++) {
    const c = await connectRetroArch({ port, nick: `m${i}`, password: 'nope', localAddress: '127.0.0.5' });
    await c.closed;
  }
  // 3 free failures, then the 4th starts a 1 s back-off: everything after is refused unchecked.
  expect(closed.slice(0, 4)).toEqual([
    'password-rejected',
    'password-rejected',
    'password-rejected',
    'password-rejected',
  ]);
  expect(closed.slice(4).every((c) => c === 'too-many-attempts')).toBe(true);
  // The right password from the blocked address is refused too (not checked)…
  const right = await connectRetroArch({ port, nick: 'm', password: 'pw', localAddress: '127.0.0.5' });
  await right.closed;
  expect(closed.at(-1)).toBe('too-many-attempts');
  // …while another address gets in at once.
  const ok = await connectRetroArch({ port, nick: 'alice', password: 'pw', localAddress: '127.0.0.6' });
  await until(() => ok.client.state === 'spectating', 'alice to be synced', 2000);
  expect(joined).toEqual(['alice']);
  ok.close();
});

it('a client over its rate budget is closed with flood', async () => {
  const { port, closed } = await listen({
    rateLimits: { messagesPerSecond: 200, bytesPerSecond: 1e6, burstSeconds: 1 },
  });
  const c = await connectRetroArch({ port, nick: 'flooder' });
  await until(() => c.client.state === 'spectating', 'synced', 2000);
  // 2,000 PING_REQUEST frames (command 0x0022, no payload) at once.
  const ping = new Uint8Array(8 * 2000);
  const v = new DataView(ping.buffer);
  for (let i = 0; i < 2000; i++) v.setUint32(i * 8, 0x0022);
  c.socket.write(ping);
  await c.closed;
  await until(() => closed.length > 0, 'the host to close it', 2000);
  expect(closed).toEqual(['flood']);
});

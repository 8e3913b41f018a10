/**
 * The RetroArch tunnel relay against fake hosts and clients over real TCP on loopback: sessions,
 * links, address replies, byte copying, the outdated answer, pings, caps and fuzzed bytes.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { afterEach, expect, it } from 'vitest';
import {
  decodeTunnelMessage,
  encodeTunnelMessage,
  type RetroArchTunnelErrorCode,
  type TunnelMessage,
  tunnelAddressText,
  tunnelIdHex,
} from '../src/index.js';
import {
  connectRetroArch,
  type ListenRetroArchTunnelOptions,
  listenRetroArchHost,
  listenRetroArchTunnel,
  type RetroArchTunnel,
  type RetroArchTunnelEvents,
} from '../src/node.js';

let relay: RetroArchTunnel | undefined;
const cleanup: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
  await relay?.close();
  relay = undefined;
});

async function until(pred: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = performance.now() + ms;
  while (!pred() && performance.now() < end) await new Promise((r) => setTimeout(r, 5));
  if (!pred()) throw new Error(`timed out waiting for ${what}`);
}

/** A relay on a free port that records every event. */
async function start(options: Partial<ListenRetroArchTunnelOptions> = {}) {
  relay = await listenRetroArchTunnel({ port: 0, ...options });
  const events: Array<{ type: keyof RetroArchTunnelEvents; e: RetroArchTunnelEvents[keyof RetroArchTunnelEvents] }> =
    [];
  for (const type of ['session', 'sessionClosed', 'client', 'address', 'link', 'unlink', 'ping', 'refused'] as const) {
    relay.events.on(type, (e) => events.push({ type, e }));
  }
  const refused = (): RetroArchTunnelErrorCode[] =>
    events.flatMap((x) => (x.type === 'refused' ? [(x.e as RetroArchTunnelEvents['refused']).error.code] : []));
  return { relay, port: relay.port, events, refused };
}

/** A raw TCP peer that keeps what it receives. */
interface Peer {
  readonly socket: Socket;
  received(): Buffer;
  readonly closed: Promise<void>;
  isClosed(): boolean;
  /** Tunnel messages decoded from the relay so far (from offset 0 of what was received). */
  messages(): TunnelMessage[];
}

function peer(port: number, localAddress?: string): Promise<Peer> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', ...(localAddress !== undefined ? { localAddress } : {}) });
    cleanup.push(() => {
      socket.destroy();
    });
    const chunks: Buffer[] = [];
    let closed = false;
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => undefined);
    const p: Peer = {
      socket,
      received: () => Buffer.concat(chunks),
      closed: new Promise((r) =>
        socket.once('close', () => {
          closed = true;
          r();
        }),
      ),
      isClosed: () => closed,
      messages: () => {
        const b = Buffer.concat(chunks);
        const out: TunnelMessage[] = [];
        for (let at = 0; ; ) {
          const r = decodeTunnelMessage(b, at, 'relay');
          if (r.kind !== 'message') return out;
          out.push(r.message);
          at += r.size;
        }
      },
    };
    socket.once('connect', () => resolve(p));
    socket.once('close', () => resolve(p));
  });
}

const ZERO = new Uint8Array(12);

/** A fake RetroArch host: opens a session and returns its id. */
async function fakeHost(port: number): Promise<{ host: Peer; session: string; id: Uint8Array }> {
  const host = await peer(port);
  host.socket.write(encodeTunnelMessage({ type: 'session', id: ZERO }));
  await until(() => host.messages().length > 0, 'the session id');
  const m = host.messages()[0]!;
  if (m.type !== 'session') throw new Error(`expected RATS, got ${m.type}`);
  return { host, session: tunnelIdHex(m.id), id: m.id };
}

it('gives a host a non-zero session id and lists the session', async () => {
  const { relay, port, events } = await start();
  const { session, id } = await fakeHost(port);
  expect(id.some((b) => b !== 0)).toBe(true);
  expect(events).toContainEqual({ type: 'session', e: { session, address: '127.0.0.1' } });
  expect(relay.sessions()).toEqual([
    { id: session, address: '127.0.0.1', waiting: 0, links: 0, bytesToHost: 0, bytesToClients: 0, unansweredPings: 0 },
  ]);
  // A second host gets another id.
  const other = await fakeHost(port);
  expect(other.session).not.toBe(session);
  expect(relay.stats().sessions).toBe(2);
});

it('links a client: RATL to the host, RATA with its address, the link, then bytes both ways', async () => {
  const { relay, port, events } = await start();
  const { host, session, id } = await fakeHost(port);
  const client = await peer(port, '127.0.0.3');
  // The client's netplay header follows its RATS in the same write: the relay keeps it for the link.
  client.socket.write(Buffer.concat([encodeTunnelMessage({ type: 'session', id }), Buffer.from('RANP-early')]));
  await until(() => host.messages().length === 2, 'RATL');
  const ratl = host.messages()[1]!;
  expect(ratl.type).toBe('link');
  if (ratl.type !== 'link') return;
  const clientId = ratl.id;
  expect(tunnelIdHex(clientId)).not.toBe(session);
  expect(relay.sessions()[0]).toMatchObject({ waiting: 1, links: 0 });

  host.socket.write(encodeTunnelMessage({ type: 'address', id: clientId }));
  await until(() => host.messages().length === 3, 'RATA reply');
  const rata = host.messages()[2]!;
  expect(rata.type === 'address' && tunnelIdHex(rata.id)).toBe(tunnelIdHex(clientId));
  expect(rata.type === 'address' && rata.address !== undefined && tunnelAddressText(rata.address)).toBe('127.0.0.3');
  expect(host.received().subarray(32, 64).toString('hex')).toBe(
    `52415441${tunnelIdHex(clientId)}${'00'.repeat(10)}ffff7f000003`,
  );

  const link = await peer(port);
  link.socket.write(encodeTunnelMessage({ type: 'link', id: clientId }));
  await until(() => link.received().length >= 10, 'the early bytes on the link');
  expect(link.received().toString()).toBe('RANP-early');
  expect(relay.sessions()[0]).toMatchObject({ waiting: 0, links: 1 });

  // 1 MiB each way, in pieces, arrives intact and in order.
  const up = randomBytes(1 << 20);
  const down = randomBytes(1 << 20);
  for (let i = 0; i < up.length; i += 40_000) client.socket.write(up.subarray(i, i + 40_000));
  for (let i = 0; i < down.length; i += 33_333) link.socket.write(down.subarray(i, i + 33_333));
  await until(
    () => link.received().length === 10 + up.length && client.received().length === down.length,
    'the copied bytes',
    10_000,
  );
  expect(link.received().subarray(10).equals(up)).toBe(true);
  expect(client.received().equals(down)).toBe(true);
  expect(relay.sessions()[0]).toMatchObject({ bytesToHost: 10 + up.length, bytesToClients: down.length });
  expect(relay.stats()).toMatchObject({ links: 1, linksMade: 1, bytesToHosts: 10 + up.length });

  // The client leaves: its link is closed too; the session stays.
  client.socket.end();
  await link.closed;
  await until(() => events.some((x) => x.type === 'unlink'), 'unlink');
  expect(events.find((x) => x.type === 'unlink')?.e).toEqual({
    session,
    client: tunnelIdHex(clientId),
    bytesToHost: 10 + up.length,
    bytesToClient: down.length,
    error: undefined,
  });
  expect(relay.sessions()).toHaveLength(1);
  expect(host.isClosed()).toBe(false);
});

it("answers RATA for an unknown client with a zero id and address, and a client's RATS for a gone session with a close", async () => {
  const { port, refused } = await start();
  const { host, id } = await fakeHost(port);
  host.socket.write(encodeTunnelMessage({ type: 'address', id: randomBytes(12) }));
  await until(() => host.messages().length === 2, 'RATA reply');
  expect(host.received().subarray(16).toString('hex')).toBe(`52415441${'00'.repeat(28)}`);

  const stranger = await peer(port);
  stranger.socket.write(encodeTunnelMessage({ type: 'session', id: randomBytes(12) }));
  await stranger.closed;
  const linker = await peer(port);
  linker.socket.write(encodeTunnelMessage({ type: 'link', id: randomBytes(12) }));
  await linker.closed;
  // A host can't be linked to itself (its session id is no waiting client).
  const self = await peer(port);
  self.socket.write(encodeTunnelMessage({ type: 'link', id }));
  await self.closed;
  expect(refused()).toEqual(['no-session', 'no-peer', 'no-peer']);
  expect(stranger.received().length + linker.received().length).toBe(0);
});

it('answers a client that opens with RANP with RANP and 20 zero bytes, then closes', async () => {
  const { port, refused } = await start();
  const old = await peer(port);
  old.socket.write(Buffer.from('52414e50000400080000000100000006000000050000046900', 'hex'));
  await old.closed;
  expect(old.received().toString('hex')).toBe(`52414e50${'00'.repeat(20)}`);
  expect(refused()).toEqual(['outdated']);
});

it('pings a silent host every interval; a host that answers stays, one that does not is dropped after 3', async () => {
  const { relay, port, events } = await start({ pingIntervalMs: 100 });
  const answering = await fakeHost(port);
  answering.host.socket.on('data', (d: Buffer) => {
    if (d.includes(Buffer.from('RATP'))) answering.host.socket.write(encodeTunnelMessage({ type: 'ping' }));
  });
  const silent = await fakeHost(port);
  await silent.host.closed;
  const pings = (s: string) =>
    events.filter((x) => x.type === 'ping' && (x.e as RetroArchTunnelEvents['ping']).session === s);
  // Exactly 3 pings (16 + 3 × 4 bytes received), then the drop with its reason.
  expect(silent.host.received().length).toBe(16 + 12);
  expect(silent.host.received().subarray(16).toString()).toBe('RATPRATPRATP');
  expect(pings(silent.session).map((x) => (x.e as RetroArchTunnelEvents['ping']).unanswered)).toEqual([1, 2, 3]);
  const closed = events.find((x) => x.type === 'sessionClosed')?.e as RetroArchTunnelEvents['sessionClosed'];
  expect(closed.session).toBe(silent.session);
  expect(closed.error?.code).toBe('ping-timeout');
  await until(() => pings(answering.session).length >= 5, 'five answered pings');
  expect(answering.host.isClosed()).toBe(false);
  expect(pings(answering.session).every((x) => (x.e as RetroArchTunnelEvents['ping']).unanswered === 1)).toBe(true);
  expect(relay.sessions().map((s) => s.id)).toEqual([answering.session]);
});

it('closes silent sockets after the pending timeout (1 s) and refuses past the per-address cap', async () => {
  const { relay, port, refused } = await start({
    admission: { pendingTimeoutMs: 1000, maxPendingPerAddress: 3, maxPending: 5 },
  });
  const silent = await Promise.all([1, 2, 3, 4].map(() => peer(port, '127.0.0.5')));
  await until(() => refused().includes('full'), 'the 4th refused');
  await Promise.all(silent.map((s) => s.closed));
  await until(() => refused().filter((c) => c === 'timeout').length === 3, 'timeouts');
  expect(refused().sort()).toEqual(['full', 'timeout', 'timeout', 'timeout']);
  // A flood from many addresses evicts its own oldest, never holds more than maxPending.
  const flood = await Promise.all(Array.from({ length: 12 }, (_, i) => peer(port, `127.0.1.${1 + (i % 6)}`)));
  expect(relay.stats().pending).toBeLessThanOrEqual(5);
  const ok = await fakeHost(port);
  expect(ok.session).toMatch(/^[0-9a-f]{24}$/);
  for (const f of flood) f.socket.destroy();
});

it('caps sessions per address and in total, clients per session, and total connections', async () => {
  const { port, refused } = await start({ maxSessionsPerAddress: 2, maxClientsPerSession: 2, maxConnections: 8 });
  const a = await fakeHost(port);
  await fakeHost(port);
  const third = await peer(port);
  third.socket.write(encodeTunnelMessage({ type: 'session', id: ZERO }));
  await third.closed;
  expect(refused()).toEqual(['sessions-full']);
  for (let i = 0; i < 2; i++) (await peer(port)).socket.write(encodeTunnelMessage({ type: 'session', id: a.id }));
  await until(() => a.host.messages().length === 3, 'two RATL');
  const extra = await peer(port);
  extra.socket.write(encodeTunnelMessage({ type: 'session', id: a.id }));
  await extra.closed;
  expect(refused()).toEqual(['sessions-full', 'session-full']);
  // 2 hosts + 2 clients open; 4 more fill 8; the 9th is closed at once.
  const fill = await Promise.all([1, 2, 3, 4].map((i) => peer(port, `127.0.2.${i}`)));
  const over = await peer(port, '127.0.2.9');
  await over.closed;
  expect(refused()).toContain('full');
  for (const f of fill) expect(f.isClosed()).toBe(false);
});

it('bounds what a client may send before its link, times out an unlinked client, and floods out a chatty host', async () => {
  const { port, refused, events } = await start({ maxPendingBytes: 1000, linkTimeoutMs: 150 });
  const { host, id } = await fakeHost(port);
  const greedy = await peer(port);
  greedy.socket.write(encodeTunnelMessage({ type: 'session', id }));
  greedy.socket.write(randomBytes(5000));
  await greedy.closed;
  const patient = await peer(port);
  patient.socket.write(encodeTunnelMessage({ type: 'session', id }));
  await patient.closed;
  const codes = events.flatMap((x) =>
    x.type === 'unlink' ? [(x.e as RetroArchTunnelEvents['unlink']).error?.code] : [],
  );
  expect(codes).toEqual(['overflow', 'link-timeout']);
  expect(refused()).toEqual([]);
  // 200 pings at once: over 20/s with a 5 s burst (100).
  host.socket.write(Buffer.from('RATP'.repeat(200)));
  await host.closed;
  const closed = events.find((x) => x.type === 'sessionClosed')?.e as RetroArchTunnelEvents['sessionClosed'];
  expect(closed.error?.code).toBe('flood');
});

it("closes a link that overdraws its session's bandwidth cap, and a host that sends other magics", async () => {
  const { port, events } = await start({
    sessionRateLimits: { messagesPerSecond: 1000, bytesPerSecond: 10_000, burstSeconds: 1 },
  });
  const { host, id } = await fakeHost(port);
  const client = await peer(port);
  client.socket.write(encodeTunnelMessage({ type: 'session', id }));
  await until(() => host.messages().length === 2, 'RATL');
  const ratl = host.messages()[1]!;
  const link = await peer(port);
  link.socket.write(encodeTunnelMessage({ type: 'link', id: (ratl as { id: Uint8Array }).id }));
  await until(() => events.some((x) => x.type === 'link'), 'link');
  client.socket.write(randomBytes(50_000));
  await Promise.all([client.closed, link.closed]);
  const unlink = events.find((x) => x.type === 'unlink')?.e as RetroArchTunnelEvents['unlink'];
  expect(unlink.error?.code).toBe('bandwidth');
  expect(unlink.bytesToHost).toBeLessThanOrEqual(10_000);
  expect(host.isClosed()).toBe(false);
  host.socket.write(encodeTunnelMessage({ type: 'session', id: ZERO }));
  await host.closed;
  const closed = events.find((x) => x.type === 'sessionClosed')?.e as RetroArchTunnelEvents['sessionClosed'];
  expect(closed.error?.code).toBe('unknown-magic');
});

it('our RetroArch client joins our host through the relay with { relay, session }', async () => {
  const { port } = await start();
  const server = await listenRetroArchHost({
    port: 0,
    host: { info: { contentCrc: 1, coreName: 'Nestopia', coreVersion: 'x' } },
    frame: () => 42,
  });
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  const hostPort = (server.address() as { port: number }).port;
  // A RetroArch-like host: on RATL it asks RATA, opens a link, sends RATL + id and pipes the link
  // into our netplay host.
  const { host, session } = await fakeHost(port);
  let seen = 1;
  host.socket.on('data', () => {
    const ms = host.messages();
    for (; seen < ms.length; seen++) {
      const m = ms[seen]!;
      if (m.type !== 'link') continue;
      host.socket.write(encodeTunnelMessage({ type: 'address', id: m.id }));
      void peer(port).then((link) => {
        link.socket.write(encodeTunnelMessage({ type: 'link', id: m.id }));
        const upstream = connect({ port: hostPort, host: '127.0.0.1' });
        cleanup.push(() => {
          upstream.destroy();
        });
        link.socket.pipe(upstream).pipe(link.socket);
      });
    }
  });
  const conn = await connectRetroArch({ relay: `127.0.0.1:${port}`, session, nick: 'via-relay' });
  cleanup.push(() => {
    conn.socket.destroy();
  });
  await until(() => conn.client.state === 'spectating', 'SYNC through the relay');
  expect(conn.client.hostFrame).toBe(42);
  await expect(connectRetroArch({ relay: `127.0.0.1:${port}`, nick: 'x' })).rejects.toThrow(/session id/);
  await expect(connectRetroArch({ relay: 'nowhere', session, nick: 'x' })).rejects.toThrow(/host:port/);
});

it('survives fuzzed bytes from every role: typed refusals or closes, no crash, bounded holdings', async () => {
  const { relay, port } = await start({ maxPendingBytes: 4096, admission: { pendingTimeoutMs: 300 } });
  const { host, id } = await fakeHost(port);
  const prefixes = [
    Buffer.alloc(0),
    Buffer.from(encodeTunnelMessage({ type: 'session', id: ZERO })),
    Buffer.from(encodeTunnelMessage({ type: 'session', id })),
    Buffer.from('RATL'),
    Buffer.from('RATA'),
    Buffer.from('RATP'),
    Buffer.from('RANP'),
  ];
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...prefixes),
      fc.uint8Array({ maxLength: 9000 }),
      fc.integer({ min: 1, max: 64 }),
      async (prefix, tail, cut) => {
        const p = await peer(port);
        const bytes = Buffer.concat([prefix, tail]);
        for (let i = 0; i < bytes.length; i += cut * 97) p.socket.write(bytes.subarray(i, i + cut * 97));
        await new Promise((r) => setTimeout(r, 5));
        p.socket.destroy();
        await p.closed;
      },
    ),
    { numRuns: 40 },
  );
  // Fuzzed hosts' sessions and fuzzed clients are gone with their sockets; the first host lives on
  // (a fuzzed client's RATL reached it) and a new host still gets a session.
  await until(() => relay.stats().connections === 1, 'only the first host left');
  expect(host.isClosed()).toBe(false);
  expect(relay.sessions().map((s) => s.waiting)).toEqual([0]);
  const again = await fakeHost(port);
  expect(again.session).toMatch(/^[0-9a-f]{24}$/);
  const errs = relay.stats().errors;
  for (const code of Object.keys(errs)) {
    // Whatever the bytes, a typed reason (timing under load may add caps and timeouts).
    expect([
      'unknown-magic',
      'outdated',
      'no-session',
      'no-peer',
      'overflow',
      'flood',
      'sessions-full',
      'session-full',
      'full',
      'timeout',
    ]).toContain(code);
  }
});

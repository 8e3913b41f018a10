import {
  type ChannelSpec,
  type CloseEvent,
  type Connection,
  type MessageEvent,
  TransportError,
} from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { connect } from '../src/index.js';
import {
  connectNode,
  encodeHello,
  encodeReliable,
  encodeWelcome,
  FrameType,
  listen,
  type WebSocketConstructor,
  WsCloseCode,
  type WsConnection,
  type WsListener,
  type WsListenOptions,
} from '../src/server.js';
import { makePair } from './harness.js';

const CHANNELS: readonly ChannelSpec[] = [
  { name: 'control', kind: 'reliable' },
  { name: 'bulk', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function echoServer(
  extra: Partial<WsListenOptions> = {},
): Promise<{ listener: WsListener; errors: TransportError[] }> {
  const listener = await listen({ channels: CHANNELS, ...extra });
  const errors: TransportError[] = [];
  listener.on('error', (e) => errors.push(e));
  listener.on('connection', (c) => {
    c.on('message', (m) => {
      if (c.state === 'open') c.send(m.channel, m.data);
    });
  });
  cleanups.push(async () => {
    listener.close();
    await listener.whenClosed();
  });
  return { listener, errors };
}

function track(conn: Connection): { messages: MessageEvent[]; closed?: CloseEvent } {
  const r: { messages: MessageEvent[]; closed?: CloseEvent } = { messages: [] };
  conn.on('message', (m) => r.messages.push(m));
  conn.on('close', (e) => {
    r.closed = e;
  });
  cleanups.push(() => conn.close());
  return r;
}

async function openClient(url: string, channels = CHANNELS): Promise<WsConnection> {
  const c = connectNode(url, { channels });
  cleanups.push(() => c.close());
  await pollUntil(() => c.state !== 'connecting', 5000);
  expect(c.state).toBe('open');
  return c;
}

/** Checks that an echo connection still works. */
async function echoes(conn: WsConnection): Promise<void> {
  const r = track(conn);
  const payload = new Uint8Array([9, 8, 7, 6]);
  conn.send('control', payload);
  expect(await pollUntil(() => r.messages.length > 0, 5000)).toBe(true);
  expect(r.messages[0]!.data).toEqual(payload);
}

interface RawPeer {
  readonly ws: WebSocket;
  readonly frames: Uint8Array[];
  closed?: { code: number; reason: string };
}

/** A plain `ws` client speaking raw frames, optionally after a valid HELLO. */
async function rawPeer(url: string, hello: boolean): Promise<RawPeer> {
  const ws = new WebSocket(url);
  const peer: RawPeer = { ws, frames: [] };
  ws.on('error', () => {});
  ws.on('message', (d) => peer.frames.push(new Uint8Array(d as Buffer)));
  ws.on('close', (code, reason) => {
    peer.closed = { code, reason: reason.toString() };
  });
  cleanups.push(() => ws.terminate());
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  if (hello) {
    ws.send(encodeHello({ maxMessageBytes: 1 << 20, maxUnreliableBytes: 1 << 16, channels: CHANNELS }));
    expect(await pollUntil(() => peer.frames.some((f) => f[0] === FrameType.welcome), 5000)).toBe(true);
  }
  return peer;
}

describe('handshake and limits over real sockets', () => {
  it('refuses a client whose channel list differs, with a clear reason', async () => {
    const { listener, errors } = await echoServer();
    const c = connectNode(listener.url, { channels: [...CHANNELS, { name: 'extra', kind: 'reliable' }] });
    const r = track(c);
    expect(await pollUntil(() => r.closed !== undefined, 5000)).toBe(true);
    expect(r.closed?.code).toBe('refused');
    expect(r.closed?.error).toBeInstanceOf(TransportError);
    expect(r.closed?.error?.code).toBe('refused');
    expect(r.closed?.reason).toBe('channel mismatch: server has r:control,r:bulk,u:state');
    expect(await pollUntil(() => errors.length > 0, 2000)).toBe(true);
    expect(errors[0]?.code).toBe('refused');
    expect(listener.connections.length).toBe(0);
  });

  it('refuses clients past maxConnections and keeps serving the others', async () => {
    const { listener, errors } = await echoServer({ maxConnections: 2 });
    const a = await openClient(listener.url);
    const b = await openClient(listener.url);
    const c = connectNode(listener.url, { channels: CHANNELS });
    const r = track(c);
    expect(await pollUntil(() => r.closed !== undefined, 5000)).toBe(true);
    expect(r.closed?.code).toBe('refused');
    expect(r.closed?.reason).toBe('listener full (2 connections)');
    expect(errors.map((e) => e.code)).toContain('limit');
    await echoes(a);
    await echoes(b);
    expect(listener.connections.length).toBe(2);
  });

  it('closes a socket that never sends HELLO after connectMs, with code 4000', async () => {
    const { listener, errors } = await echoServer({ timeouts: { connectMs: 200 } });
    const raw = await rawPeer(listener.url, false);
    expect(await pollUntil(() => raw.closed !== undefined, 5000)).toBe(true);
    expect(raw.closed?.code).toBe(WsCloseCode.timeout);
    expect(errors.map((e) => e.code)).toContain('timeout');
    expect(listener.socketCount).toBe(0);
  });

  it('a burst of 20 clients against maxConnections 3: 3 open, 17 refused, no crash', async () => {
    const { listener, errors } = await echoServer({ maxConnections: 3 });
    const clients = Array.from({ length: 20 }, () => connectNode(listener.url, { channels: CHANNELS }));
    for (const c of clients) cleanups.push(() => c.close());
    const records = clients.map((c) => ({ c, closed: undefined as CloseEvent | undefined }));
    for (const r of records) r.c.on('close', (e) => (r.closed = e));
    expect(await pollUntil(() => clients.every((c) => c.state !== 'connecting'), 10_000)).toBe(true);
    const open = clients.filter((c) => c.state === 'open');
    expect(open.length).toBe(3);
    expect(records.filter((r) => r.closed?.code === 'refused').length).toBe(17);
    expect(errors.filter((e) => e.code === 'limit').length).toBe(17);
    for (const c of open) await echoes(c);
  });

  it('reports refused when nobody listens', async () => {
    const { listener } = await echoServer();
    const url = listener.url;
    listener.close();
    await listener.whenClosed();
    const c = connectNode(url, { channels: CHANNELS });
    const r = track(c);
    expect(await pollUntil(() => r.closed !== undefined, 5000)).toBe(true);
    expect(r.closed?.code).toBe('refused');
    expect(r.closed?.error?.code).toBe('refused');
  });

  it('throws a typed too-large error on oversized sends, and the connection stays open', async () => {
    const { listener } = await echoServer({ maxMessageBytes: 4096, maxUnreliableBytes: 256 });
    // The client allows more, but the handshake settles on the server's smaller limits.
    const c = await openClient(listener.url);
    expect(c.limits).toEqual({ maxMessageBytes: 4096, maxUnreliableBytes: 256 });
    expect(() => c.send('bulk', new Uint8Array(4097))).toThrow(TransportError);
    try {
      c.send('state', new Uint8Array(257));
    } catch (e) {
      expect((e as TransportError).code).toBe('too-large');
    }
    expect(c.state).toBe('open');
    await echoes(c);
  });

  it('disconnects a raw peer that sends past maxPayload, and only that peer', async () => {
    const { listener } = await echoServer({ maxMessageBytes: 4096 });
    const good = await openClient(listener.url);
    const raw = await rawPeer(listener.url, true);
    expect(await pollUntil(() => listener.connections.length === 2, 5000)).toBe(true);
    const serverSide = listener.connections[1]!;
    const sr = track(serverSide);
    // Past ws's maxPayload (the larger limit plus the header): ws itself refuses it with 1009.
    raw.ws.send(encodeReliable(1, new Uint8Array(1 << 20)));
    expect(await pollUntil(() => raw.closed !== undefined && sr.closed !== undefined, 5000)).toBe(true);
    expect(raw.closed?.code).toBe(1009);
    expect(sr.closed?.code).toBe('error');
    expect(sr.closed?.error?.code).toBe('too-large');
    await echoes(good);
    expect(listener.connections).toEqual([listener.connections[0]]);
  });

  it('disconnects a raw peer that sends past the agreed limit (under maxPayload) with 4003', async () => {
    const { listener } = await echoServer({ maxMessageBytes: 4096 });
    const good = await openClient(listener.url);
    const raw = await rawPeer(listener.url, true);
    expect(await pollUntil(() => listener.connections.length === 2, 5000)).toBe(true);
    const sr = track(listener.connections[1]!);
    raw.ws.send(encodeReliable(1, new Uint8Array(4097)));
    expect(await pollUntil(() => raw.closed !== undefined && sr.closed !== undefined, 5000)).toBe(true);
    expect(raw.closed?.code).toBe(WsCloseCode.tooLarge);
    expect(raw.closed?.reason).toMatch(/received 4097 bytes on "bulk" \(limit 4096\)/);
    expect(sr.closed?.error?.code).toBe('too-large');
    await echoes(good);
  });
});

describe('bad frames from a raw ws client', () => {
  const cases: Array<{ what: string; hello: boolean; send: (ws: WebSocket) => void; reason: RegExp }> = [
    {
      what: 'garbage bytes instead of a HELLO',
      hello: false,
      send: (ws) => ws.send(new Uint8Array([0xde, 0xad, 0xbe, 0xef])),
      reason: /unknown frame type 0xde/,
    },
    {
      what: 'a HELLO without the magic',
      hello: false,
      send: (ws) => ws.send(new Uint8Array([FrameType.hello, 1, 2, 3, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
      reason: /not a netplay-ws peer/,
    },
    {
      what: 'data on an unknown channel',
      hello: true,
      send: (ws) => ws.send(encodeReliable(42, new Uint8Array([1]))),
      reason: /unknown reliable channel index 42/,
    },
    {
      what: 'a text frame',
      hello: true,
      send: (ws) => ws.send('hello?'),
      reason: /text frames/,
    },
  ];
  for (const c of cases) {
    it(`${c.what}: that peer is closed with code 4002 and a reason, others keep running`, async () => {
      const { listener, errors } = await echoServer();
      const good = await openClient(listener.url);
      const raw = await rawPeer(listener.url, c.hello);
      c.send(raw.ws);
      expect(await pollUntil(() => raw.closed !== undefined, 5000)).toBe(true);
      expect(raw.closed?.code).toBe(WsCloseCode.protocol);
      expect(raw.closed?.reason).toMatch(c.reason);
      if (!c.hello) expect(errors.map((e) => e.code)).toContain('protocol');
      expect(good.state).toBe('open');
      await echoes(good);
      expect(listener.connections.length).toBe(1);
    });
  }
});

describe('backpressure over a real socket', () => {
  it('keeps only the newest unreliable message while the socket is backed up', async () => {
    const pair = await makePair(CHANNELS, {});
    cleanups.push(() => pair.dispose());
    const got = track(pair.server);
    pair.relay.pause();
    const chunk = new Uint8Array(1 << 20);
    let bulkSent = 0;
    // Fill the kernel buffers until the client's socket holds at least 1 MiB itself (bounded).
    for (let i = 0; i < 48 && pair.client.bufferedAmount <= 1 << 20; i++) {
      pair.client.send('bulk', chunk);
      bulkSent++;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(pair.client.bufferedAmount).toBeGreaterThan(1 << 20);
    const n = 50;
    for (let i = 0; i < n; i++) pair.client.send('state', new Uint8Array([i, 0, 0, 0]));
    expect(pair.client.stats.staleDropped).toBe(n - 1);
    expect(pair.client.stats.sendQueueLength).toBeGreaterThanOrEqual(1);
    pair.relay.resume();
    const ok = await pollUntil(
      () =>
        got.messages.filter((m) => m.channel === 'bulk').length === bulkSent &&
        got.messages.some((m) => m.channel === 'state'),
      20_000,
    );
    expect(ok).toBe(true);
    await pollUntil(() => false, 100);
    const states = got.messages.filter((m) => m.channel === 'state').map((m) => m.data[0]);
    expect(states).toEqual([n - 1]);
    expect(await pollUntil(() => pair.client.stats.sendQueueLength === 0, 5000)).toBe(true);
  });
});

/** A raw `ws` server that answers HELLO with WELCOME (1 MiB limits) and then sends `after`. */
async function rawServer(
  after: Uint8Array | string,
): Promise<{ url: string; closes: Array<{ code: number; reason: string }> }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const closes: Array<{ code: number; reason: string }> = [];
  wss.on('connection', (ws) => {
    ws.on('error', () => {});
    ws.on('close', (code, reason) => closes.push({ code, reason: reason.toString() }));
    ws.once('message', () => {
      ws.send(encodeWelcome({ maxMessageBytes: 1 << 20, maxUnreliableBytes: 1 << 16 }));
      ws.send(after);
    });
  });
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  );
  const addr = wss.address();
  if (addr === null || typeof addr === 'string') throw new Error('no address');
  return { url: `ws://127.0.0.1:${addr.port}`, closes };
}

describe('a misbehaving server', () => {
  const whatwg = WebSocket as unknown as WebSocketConstructor;

  it('the browser client refuses a message above its own limit (no maxPayload there) with 4003', async () => {
    const server = await rawServer(encodeReliable(1, new Uint8Array(5000)));
    const c = connect(server.url, { channels: CHANNELS, maxMessageBytes: 4096, WebSocket: whatwg });
    const r = track(c);
    expect(await pollUntil(() => r.closed !== undefined && server.closes.length > 0, 5000)).toBe(true);
    expect(r.closed?.code).toBe('error');
    expect(r.closed?.error?.code).toBe('too-large');
    expect(server.closes[0]?.code).toBe(WsCloseCode.tooLarge);
  });

  it('the Node client has maxPayload too: ws cuts an oversized frame with 1009', async () => {
    const server = await rawServer(encodeReliable(1, new Uint8Array(1 << 20)));
    const c = connectNode(server.url, { channels: CHANNELS, maxMessageBytes: 4096, maxUnreliableBytes: 256 });
    const r = track(c);
    expect(await pollUntil(() => r.closed !== undefined && server.closes.length > 0, 5000)).toBe(true);
    expect(r.closed?.error?.code).toBe('too-large');
    expect(server.closes[0]?.code).toBe(1009);
  });

  for (const [what, frame] of [
    ['garbage', new Uint8Array([0xff, 0, 1])],
    ['a text frame', 'not binary'],
  ] as const) {
    it(`a client receiving ${what} closes with a protocol error and tells the server (4002)`, async () => {
      const server = await rawServer(frame);
      const c = connect(server.url, { channels: CHANNELS, WebSocket: whatwg });
      const r = track(c);
      expect(await pollUntil(() => r.closed !== undefined && server.closes.length > 0, 5000)).toBe(true);
      expect(r.closed?.code).toBe('error');
      expect(r.closed?.error?.code).toBe('protocol');
      expect(server.closes[0]?.code).toBe(WsCloseCode.protocol);
    });
  }
});

describe('the browser-safe client', () => {
  it('works against the ws server with a WHATWG WebSocket class', async () => {
    const { listener } = await echoServer();
    const serverClosed: CloseEvent[] = [];
    listener.on('connection', (c) => c.on('close', (e) => serverClosed.push(e)));
    const c = connect(listener.url, {
      channels: CHANNELS,
      WebSocket: WebSocket as unknown as WebSocketConstructor,
    });
    cleanups.push(() => c.close());
    expect(await pollUntil(() => c.state === 'open', 5000)).toBe(true);
    const r = track(c);
    const sent = [new Uint8Array([1, 2, 3]), new Uint8Array(100_000).fill(7)];
    c.send('control', sent[0]!);
    c.send('bulk', sent[1]!);
    c.send('state', new Uint8Array([5]));
    expect(await pollUntil(() => r.messages.length === 3, 5000)).toBe(true);
    expect(r.messages.find((m) => m.channel === 'control')?.data).toEqual(sent[0]);
    expect(r.messages.find((m) => m.channel === 'bulk')?.data).toEqual(sent[1]);
    expect(await pollUntil(() => c.stats.rttSamples > 0, 5000)).toBe(true);
    c.close('bye from the browser');
    expect(await pollUntil(() => serverClosed.length > 0, 5000)).toBe(true);
    expect(serverClosed[0]).toEqual({ code: 'remote', reason: 'bye from the browser' });
  });

  it('says what to do when no global WebSocket exists', () => {
    if ('WebSocket' in globalThis) return; // Node ≥ 22 and browsers have one
    expect(() => connect('ws://127.0.0.1:1', { channels: CHANNELS })).toThrow(/no global WebSocket/);
  });

  it('a listener close reason reaches every client', async () => {
    const { listener } = await echoServer();
    const a = track(await openClient(listener.url));
    const b = track(await openClient(listener.url));
    listener.close('server shutting down');
    expect(await pollUntil(() => a.closed !== undefined && b.closed !== undefined, 5000)).toBe(true);
    for (const r of [a, b]) expect(r.closed).toEqual({ code: 'remote', reason: 'server shutting down' });
  });
});

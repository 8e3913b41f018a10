import { fc } from '@fast-check/vitest';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import {
  listenSignaling,
  SignalingCloseCode,
  type SignalingServer,
  type SignalingServerOptions,
} from '../src/server.js';
import { RawClient } from './raw-client.js';

const REFUSAL_CODES = [
  'bad-json',
  'bad-message',
  'version',
  'too-large',
  'not-joined',
  'already-joined',
  'room-full',
  'name-taken',
  'limit',
  'unknown-peer',
  'flood',
  'timeout',
];

const servers: SignalingServer[] = [];
const clients: RawClient[] = [];

async function start(options: SignalingServerOptions = {}): Promise<SignalingServer> {
  const s = await listenSignaling(options);
  servers.push(s);
  return s;
}

async function joined(server: SignalingServer, room: string, peer: string): Promise<RawClient> {
  const c = await RawClient.joined(server.url, room, peer);
  clients.push(c);
  return c;
}

async function open(server: SignalingServer): Promise<RawClient> {
  const c = await RawClient.open(server.url);
  clients.push(c);
  return c;
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) await s.close();
});

describe('signaling server', () => {
  it('a port already in use rejects listenSignaling with EADDRINUSE; the process and the first server carry on', async () => {
    const first = await start();
    const err = await listenSignaling({ port: first.port }).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.code).toBe('EADDRINUSE');
    const c = await joined(first, 'r', 'a');
    expect(c).toBeDefined();
  });

  it('relays offers, answers and candidates between the named peers of a room', async () => {
    const server = await start();
    const host = await joined(server, 'r1', 'host');
    const guest = await joined(server, 'r1', 'guest');
    expect(guest.messages[0]).toEqual({ v: 1, type: 'joined', room: 'r1', peer: 'guest', peers: ['host'] });
    expect(await host.waitFor((m) => m.type === 'peer-joined' && m.peer === 'guest')).toBe(true);
    guest.json({ v: 1, type: 'signal', to: 'host', signal: { kind: 'offer', sdp: 'v=0 offer' } });
    expect(await host.waitFor((m) => m.type === 'signal')).toBe(true);
    expect(host.messages.find((m) => m.type === 'signal')).toEqual({
      v: 1,
      type: 'signal',
      from: 'guest',
      signal: { kind: 'offer', sdp: 'v=0 offer' },
      address: '127.0.0.1', // the guest's socket IP, stamped by the server
    });
    guest.json({ v: 1, type: 'leave' });
    expect(await host.waitFor((m) => m.type === 'peer-left' && m.peer === 'guest')).toBe(true);
    expect(server.peersIn('r1')).toEqual(['host']);
    expect(host.invalid).toEqual([]);
  });

  it('never leaks a signal into another room, whatever the names (property)', async () => {
    const server = await start({ rateLimits: false, maxPeersPerAddress: 100, maxRoomsPerAddress: 100 });
    const rooms = ['a', 'b', 'c'];
    const names = ['host', 'p1', 'p2'];
    const peers = new Map<string, RawClient>();
    for (const r of rooms) for (const n of names) peers.set(`${r}/${n}`, await joined(server, r, n));
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...rooms), fc.constantFrom(...names), fc.constantFrom(...names, 'nobody')), {
          minLength: 1,
          maxLength: 20,
        }),
        async (ops) => {
          for (const [room, from, to] of ops) {
            sent++;
            peers.get(`${room}/${from}`)!.json({
              v: 1,
              type: 'signal',
              to,
              signal: { kind: 'candidate', candidate: `${room}|${from}|${to}|${sent}`, sdpMid: '0', sdpMLineIndex: 0 },
            });
          }
          // A marker from every sender to itself's room host proves earlier signals were processed.
          await pollUntil(() => false, 30);
        },
      ),
      { numRuns: 30 },
    );
    await pollUntil(() => false, 200);
    let delivered = 0;
    for (const [key, client] of peers) {
      const [room, me] = key.split('/');
      for (const m of client.messages) {
        if (m.type !== 'signal' || m.signal.kind !== 'candidate') continue;
        const [r, from, to] = m.signal.candidate.split('|');
        expect(r).toBe(room);
        expect(to).toBe(me);
        expect(m.from).toBe(from);
        delivered++;
      }
      expect(client.invalid).toEqual([]);
    }
    expect(delivered).toBeGreaterThan(0);
  });

  it('fuzzed text and binary messages get typed refusals, never a crash', async () => {
    const server = await start({
      rateLimits: false,
      maxPeersPerAddress: 1000,
      maxRoomsPerAddress: 1000,
      admission: { maxPendingPerAddress: 64 },
    });
    const message = fc.oneof(
      fc.string({ maxLength: 200 }).map((s) => ({ text: s })),
      fc.json({ maxDepth: 3 }).map((s) => ({ text: s })),
      fc
        .record(
          {
            v: fc.oneof(fc.constant(1), fc.jsonValue()),
            type: fc.oneof(fc.constantFrom('join', 'signal', 'leave'), fc.jsonValue()),
            room: fc.jsonValue(),
            peer: fc.jsonValue(),
            to: fc.jsonValue(),
            signal: fc.jsonValue(),
          },
          { requiredKeys: [] },
        )
        .map((o) => ({ text: JSON.stringify(o) })),
      fc.uint8Array({ maxLength: 200 }).map((b) => ({ bytes: b })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 4 }), async (list) => {
        const c = await open(server);
        for (const m of list) c.send('text' in m ? m.text : m.bytes);
        await pollUntil(() => c.closed !== undefined || c.messages.length >= list.length, 2000);
        expect(c.invalid).toEqual([]);
        for (const r of c.refusals()) expect(REFUSAL_CODES).toContain(r.code);
        // Every fatal refusal is followed by the close; nothing else is sent after it.
        const fatal = c.refusals().find((r) => r.fatal);
        if (fatal) {
          await pollUntil(() => c.closed !== undefined, 2000);
          expect([SignalingCloseCode.protocol, SignalingCloseCode.refused]).toContain(c.closed?.code);
          expect(c.messages[c.messages.length - 1]).toBe(fatal);
        }
        c.close();
      }),
      { numRuns: 60 },
    );
    // The server still serves.
    const host = await joined(server, 'after', 'host');
    expect(host.messages[0]?.type).toBe('joined');
  });

  it('a flooding socket is refused with flood and disconnected; its room carries on', async () => {
    const server = await start({ rateLimits: { messagesPerSecond: 20, bytesPerSecond: 1 << 20, burstSeconds: 1 } });
    const host = await joined(server, 'r', 'host');
    const flooder = await joined(server, 'r', 'flooder');
    for (let i = 0; i < 500; i++) {
      flooder.json({
        v: 1,
        type: 'signal',
        to: 'host',
        signal: { kind: 'candidate', candidate: `c${i}`, sdpMid: '0', sdpMLineIndex: 0 },
      });
    }
    await pollUntil(() => flooder.closed !== undefined, 5000);
    expect(flooder.closed?.code).toBe(SignalingCloseCode.flood);
    expect(flooder.refusals().map((r) => r.code)).toEqual(['flood']);
    expect(await host.waitFor((m) => m.type === 'peer-left' && m.peer === 'flooder')).toBe(true);
    const relayed = host.messages.filter((m) => m.type === 'signal').length;
    expect(relayed).toBeGreaterThan(0);
    expect(relayed).toBeLessThan(500);
    const guest = await joined(server, 'r', 'guest');
    guest.json({ v: 1, type: 'signal', to: 'host', signal: { kind: 'offer', sdp: 'x' } });
    expect(await host.waitFor((m) => m.type === 'signal' && m.from === 'guest')).toBe(true);
    expect(host.closed).toBeUndefined();
  });

  it('caps: room full, name taken, rooms per address, peers per address, unknown peer', async () => {
    const server = await start({ maxPeersPerRoom: 2, maxRoomsPerAddress: 2, maxPeersPerAddress: 5 });
    await joined(server, 'r', 'a');
    await joined(server, 'r', 'b');
    const third = await joined(server, 'r', 'c');
    expect(third.refusals()[0]?.code).toBe('room-full');
    const again = await joined(server, 's', 'a');
    expect(again.messages[0]?.type).toBe('joined');
    const dup = await joined(server, 's', 'a');
    expect(dup.refusals()[0]?.code).toBe('name-taken');
    const tooMany = await joined(server, 't', 'a');
    expect(tooMany.refusals()[0]?.code).toBe('limit');
    const s2 = await joined(server, 's', 'b');
    s2.json({ v: 1, type: 'signal', to: 'zed', signal: { kind: 'offer', sdp: 'x' } });
    expect(await s2.waitFor((m) => m.type === 'refused')).toBe(true);
    expect(s2.refusals()[0]).toMatchObject({ code: 'unknown-peer', fatal: false });
    expect(s2.closed).toBeUndefined();
    await pollUntil(() => false, 50);
    // Per address: r/a, r/b, s/a, s/b: a fifth joined socket is fine only in an existing room.
    expect(server.roomCount).toBe(2);
  });

  it('sockets that never join are closed after the admission timeout, and capped per address', async () => {
    const server = await start({ admission: { maxPendingPerAddress: 2, pendingTimeoutMs: 300 } });
    const a = await open(server);
    const b = await open(server);
    const c = await open(server);
    // The third from the same address is refused at once; the other two time out, typed.
    await pollUntil(() => c.closed !== undefined, 3000);
    expect(c.refusals()[0]?.code).toBe('limit');
    expect(a.closed).toBeUndefined();
    await pollUntil(() => a.closed !== undefined && b.closed !== undefined, 3000);
    for (const x of [a, b]) {
      expect(x.refusals()[0]?.code).toBe('timeout');
      expect(x.closed?.code).toBe(SignalingCloseCode.timeout);
    }
    expect(server.pendingCount).toBe(0);
  });

  it('a message over maxMessageBytes closes the socket (1009) without reaching the room', async () => {
    const server = await start({ maxMessageBytes: 4096 });
    const host = await joined(server, 'r', 'host');
    const guest = await joined(server, 'r', 'guest');
    guest.json({ v: 1, type: 'signal', to: 'host', signal: { kind: 'offer', sdp: 'x'.repeat(5000) } });
    await pollUntil(() => guest.closed !== undefined, 3000);
    expect(guest.closed?.code).toBe(1009);
    expect(await host.waitFor((m) => m.type === 'peer-left')).toBe(true);
    expect(host.messages.some((m) => m.type === 'signal')).toBe(false);
  });
});

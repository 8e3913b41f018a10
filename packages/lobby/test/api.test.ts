import { connect, type Socket } from 'node:net';
import { ManualClock } from '@netplay/transport';
import { afterEach, describe, expect, it } from 'vitest';
import { LobbyApi, type LobbyServer, MemoryRoomStore, type RoomInfo, startLobby } from '../src/node.js';
import { announce, code, FeedProbe, http, reason } from './helpers.js';

let lobby: LobbyServer | undefined;
afterEach(async () => {
  await lobby?.close();
  lobby = undefined;
});

async function start(clock = new ManualClock(0), over: Parameters<typeof startLobby>[0] = {}) {
  lobby = await startLobby({
    store: new MemoryRoomStore({ clock, sweepMs: 100 }),
    clock,
    ttlMs: 3000,
    api: { rateLimits: false },
    ...over,
  });
  return { lobby, clock, base: lobby.url };
}

type Created = { room: RoomInfo; token: string; ttlMs: number; heartbeatMs: number };

describe('rooms API (memory store)', () => {
  it('creates, lists, gets, gives join info and deletes a room', async () => {
    const { base } = await start();
    const r = await http(base, 'POST', '/rooms', announce());
    expect(r.status).toBe(201);
    const c = r.body as Created;
    expect(c.token).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect(c.ttlMs).toBe(3000);
    expect(c.heartbeatMs).toBe(1000);
    expect(c.room).toMatchObject({ ...announce(), relay: false, node: lobby?.nodeId });
    const list = await http(base, 'GET', '/rooms');
    expect((list.body as { rooms: RoomInfo[] }).rooms.map((x) => x.id)).toEqual([c.room.id]);
    expect((await http(base, 'GET', `/rooms/${c.room.id}`)).body).toEqual({ room: c.room });
    const join = (await http(base, 'GET', `/rooms/${c.room.id}/join`)).body as Record<string, unknown>;
    expect(join.signaling).toEqual({ url: `${base.replace('http', 'ws')}/signal`, room: c.room.id, peer: 'host' });
    expect(join.relay).toBeUndefined();
    expect(JSON.stringify(c.room)).not.toContain(c.token);
    const del = await http(base, 'DELETE', `/rooms/${c.room.id}`, undefined, c.token);
    expect(del.status).toBe(204);
    expect(((await http(base, 'GET', '/rooms')).body as { rooms: unknown[] }).rooms).toEqual([]);
    expect(code(await http(base, 'GET', `/rooms/${c.room.id}`))).toBe('not-found');
  });

  it("serves an app's extra GET routes (routes hook) and refuses bad ones", async () => {
    let calls = 0;
    const { base } = await start(undefined, {
      api: {
        rateLimits: false,
        routes: {
          'extra/things': () => ({ things: [1, 2, ++calls] }),
          broken: () => {
            throw new Error('gone');
          },
        },
      },
    });
    expect((await http(base, 'GET', '/extra/things')).body).toEqual({ things: [1, 2, 1] });
    expect((await http(base, 'GET', '/extra/things?x=1')).body).toEqual({ things: [1, 2, 2] });
    expect(code(await http(base, 'POST', '/extra/things', {}))).toBe('method');
    expect(code(await http(base, 'GET', '/extra'))).toBe('not-found');
    expect(code(await http(base, 'GET', '/toString'))).toBe('not-found');
    const broken = await http(base, 'GET', '/broken');
    expect([broken.status, code(broken)]).toEqual([503, 'unavailable']);
    expect(reason(broken)).toContain('gone');
    // The API's own routes cannot be shadowed.
    for (const path of ['rooms', 'health/x', '/lead', 'a//b', '']) {
      const store = new MemoryRoomStore();
      expect(() => new LobbyApi({ store, nodeId: 'n', publicUrl: base, routes: { [path]: () => 1 } })).toThrow(
        expect.objectContaining({ code: 'bad-request' }),
      );
      await store.close();
    }
  });

  it('filters by game, core, mode, password, free slots, players and name', async () => {
    const { base } = await start();
    const specs = [
      announce({
        name: 'A one',
        game: 'g1',
        core: 'chip8',
        mode: 'rollback',
        hasPassword: false,
        players: 1,
        slots: 2,
      }),
      announce({
        name: 'B two',
        game: 'g1',
        core: 'nestopia',
        mode: 'lockstep-cs',
        hasPassword: true,
        players: 2,
        slots: 2,
      }),
      announce({
        name: 'C three',
        game: 'g2',
        core: 'chip8',
        mode: 'rollback',
        hasPassword: true,
        players: 3,
        slots: 4,
      }),
      announce({
        name: 'D four',
        game: 'g2',
        core: 'gambatte',
        mode: 'frame-advance',
        hasPassword: false,
        players: 0,
        slots: 1,
      }),
    ];
    const ids: string[] = [];
    for (const s of specs) ids.push(((await http(base, 'POST', '/rooms', s)).body as Created).room.id);
    const names = async (q: string) =>
      ((await http(base, 'GET', `/rooms${q}`)).body as { rooms: RoomInfo[] }).rooms.map((r) => r.name).sort();
    expect(await names('')).toEqual(['A one', 'B two', 'C three', 'D four']);
    expect(await names('?game=g1')).toEqual(['A one', 'B two']);
    expect(await names('?core=chip8')).toEqual(['A one', 'C three']);
    expect(await names('?mode=rollback&game=g2')).toEqual(['C three']);
    expect(await names('?hasPassword=true')).toEqual(['B two', 'C three']);
    expect(await names('?hasPassword=false')).toEqual(['A one', 'D four']);
    expect(await names('?open=true')).toEqual(['A one', 'C three', 'D four']);
    expect(await names('?open=false')).toEqual(['B two']);
    expect(await names('?minPlayers=2')).toEqual(['B two', 'C three']);
    expect(await names('?maxPlayers=1')).toEqual(['A one', 'D four']);
    expect(await names('?q=THREE')).toEqual(['C three']);
    const bad = await http(base, 'GET', '/rooms?colour=red');
    expect([bad.status, code(bad)]).toEqual([400, 'bad-request']);
    expect(reason(bad)).toContain('colour');
    expect(code(await http(base, 'GET', '/rooms?mode=chess'))).toBe('bad-request');
    expect(code(await http(base, 'GET', '/rooms?open=maybe'))).toBe('bad-request');
  });

  it('expires a room after the TTL unless heartbeated, and a heartbeat re-creates a lost room', async () => {
    const { base, clock } = await start();
    const a = (await http(base, 'POST', '/rooms', announce({ name: 'kept' }))).body as Created;
    const b = (await http(base, 'POST', '/rooms', announce({ name: 'dropped' }))).body as Created;
    const feed = new FeedProbe(`${base.replace('http', 'ws')}/feed`);
    await feed.until(() => feed.of('snapshot')[0]);
    for (let t = 0; t < 6; t++) {
      clock.advance(1000);
      const hb = await http(base, 'PUT', `/rooms/${a.room.id}`, announce({ name: 'kept', players: 2 }), a.token);
      expect(hb.status).toBe(200);
    }
    const rooms = ((await http(base, 'GET', '/rooms')).body as { rooms: RoomInfo[] }).rooms;
    expect(rooms.map((r) => r.name)).toEqual(['kept']);
    expect(rooms[0]?.players).toBe(2);
    const removed = await feed.until(() => feed.of('removed').find((m) => m.id === b.room.id));
    expect(removed.reason).toBe('expired');
    // The lobby forgets the room (as after a restart); the next heartbeat brings it back with its id and token.
    clock.advance(5000);
    expect(code(await http(base, 'GET', `/rooms/${a.room.id}`))).toBe('not-found');
    const again = await http(base, 'PUT', `/rooms/${a.room.id}`, announce({ name: 'kept' }), a.token);
    expect(again.status).toBe(200);
    expect((again.body as Created).room.id).toBe(a.room.id);
    expect(code(await http(base, 'PUT', `/rooms/${a.room.id}`, announce(), 'x'.repeat(24)))).toBe('forbidden');
    feed.ws.close();
  });

  it('refuses wrong tokens, then backs the address off (AttemptLimiter)', async () => {
    const { base } = await start();
    const a = (await http(base, 'POST', '/rooms', announce())).body as Created;
    const wrong = 'A'.repeat(24);
    const codes: (string | undefined)[] = [];
    for (let i = 0; i < 6; i++) codes.push(code(await http(base, 'DELETE', `/rooms/${a.room.id}`, undefined, wrong)));
    expect(codes.slice(0, 4)).toEqual(['forbidden', 'forbidden', 'forbidden', 'forbidden']);
    expect(codes[5]).toBe('limit');
    // The room itself is untouched, and its own token is still refused while the address backs off.
    expect((await http(base, 'GET', `/rooms/${a.room.id}`)).status).toBe(200);
    expect(code(await http(base, 'DELETE', `/rooms/${a.room.id}`, undefined, a.token))).toBe('limit');
  });

  it('gives typed refusals naming the field, the size, the route or the cap', async () => {
    const { base } = await start(new ManualClock(0), { api: { rateLimits: false, maxRoomsPerAddress: 2 } });
    const cases: [unknown, string, string][] = [
      ['{"name":', 'bad-json', 'JSON'],
      [[1, 2], 'bad-request', 'object'],
      [{ ...announce(), name: '' }, 'bad-request', 'name'],
      [{ ...announce(), game: 7 }, 'bad-request', 'game'],
      [{ ...announce(), core: 'a\nb' }, 'bad-request', 'core'],
      [{ ...announce(), mode: 'chess' }, 'bad-request', 'mode'],
      [{ ...announce(), hasPassword: 'no' }, 'bad-request', 'hasPassword'],
      [{ ...announce(), slots: 0 }, 'bad-request', 'slots'],
      [{ ...announce(), players: 3, slots: 2 }, 'bad-request', 'players'],
      [{ ...announce(), endpoints: [{ kind: 'tcp', url: 'x' }] }, 'bad-request', 'endpoints[0].kind'],
      [{ ...announce(), endpoints: [{ kind: 'udp', url: 'http://x' }] }, 'bad-request', 'endpoints[0].url'],
      [{ ...announce(), endpoints: [{ kind: 'webrtc', peer: 'a b' }] }, 'bad-request', 'endpoints[0].peer'],
      [{ ...announce(), name: 'x'.repeat(5000) }, 'too-large', '4096'],
    ];
    for (const [body, c, word] of cases) {
      const r = await http(base, 'POST', '/rooms', body as object);
      expect([code(r), r.status], JSON.stringify(body).slice(0, 80)).toEqual([c, c === 'too-large' ? 413 : 400]);
      expect(reason(r)).toContain(word);
    }
    expect(code(await http(base, 'GET', '/nothing'))).toBe('not-found');
    expect(code(await http(base, 'PATCH', '/rooms'))).toBe('method');
    expect(code(await http(base, 'GET', '/rooms/bad%20id'))).toBe('bad-request');
    expect(code(await http(base, 'PUT', '/rooms/abc', announce()))).toBe('forbidden');
    expect(reason(await http(base, 'DELETE', '/rooms/abc', undefined, 'short'))).toContain('Bearer');
    expect((await http(base, 'POST', '/rooms', announce())).status).toBe(201);
    expect((await http(base, 'POST', '/rooms', announce())).status).toBe(201);
    const capped = await http(base, 'POST', '/rooms', announce());
    expect([capped.status, code(capped)]).toEqual([429, 'limit']);
    expect(reason(capped)).toContain('too many rooms from');
  });

  it('refuses a flooding address with flood and serves it again after the penalty', async () => {
    const clock = new ManualClock(0);
    const { base } = await start(clock, {
      api: { rateLimits: { messagesPerSecond: 2, bytesPerSecond: 1 << 20, burstSeconds: 2 } },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await http(base, 'GET', '/rooms')).status);
    expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
    expect(statuses[4]).toBe(429);
    expect(code(await http(base, 'GET', '/rooms'))).toBe('flood');
    clock.advance(1500);
    expect((await http(base, 'GET', '/rooms')).status).toBe(200);
  });
});

describe('connections', () => {
  it('a node whose Redis cannot be reached fails to start with unavailable, naming the URL', async () => {
    const t0 = Date.now();
    await expect(startLobby({ redis: 'redis://127.0.0.1:1' })).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^cannot reach Redis at redis:\/\/127\.0\.0\.1:1: /),
    });
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('cuts TCP connections past maxConnectionsPerAddress; the others are served', async () => {
    const { base } = await start(new ManualClock(0), { maxConnectionsPerAddress: 3 });
    const port = Number(new URL(base).port);
    const sockets: Socket[] = [];
    const closed: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => {});
      const idx = i;
      closed[idx] = false;
      s.on('close', () => {
        closed[idx] = true;
      });
      await new Promise((r) => s.once('connect', r));
      sockets.push(s);
    }
    const end = Date.now() + 3000;
    while (!closed[3] && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(closed).toEqual([false, false, false, true]);
    sockets[0]?.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect((await http(base, 'GET', '/health')).status).toBe(200);
    for (const s of sockets) s.destroy();
  });
});

describe('change feed', () => {
  it('sends a filtered snapshot, matching changes and every removal', async () => {
    const { base } = await start();
    const ws = base.replace('http', 'ws');
    const first = (await http(base, 'POST', '/rooms', announce({ game: 'g1', name: 'one' }))).body as Created;
    const feed = new FeedProbe(`${ws}/feed?game=g1`);
    const snap = await feed.until(() => feed.of('snapshot')[0]);
    expect(snap.rooms.map((r) => r.id)).toEqual([first.room.id]);
    await http(base, 'POST', '/rooms', announce({ game: 'g2', name: 'two' }));
    const third = (await http(base, 'POST', '/rooms', announce({ game: 'g1', name: 'three' }))).body as Created;
    const added = await feed.until(() => feed.of('room').find((m) => m.room.id === third.room.id));
    expect(added.room.name).toBe('three');
    expect(feed.of('room').map((m) => m.room.name)).toEqual(['three']);
    await http(base, 'DELETE', `/rooms/${first.room.id}`, undefined, first.token);
    const gone = await feed.until(() => feed.of('removed')[0]);
    expect(gone).toEqual({ v: 1, type: 'removed', id: first.room.id, reason: 'deleted' });
    // A new filter gives a new snapshot.
    feed.ws.send(JSON.stringify({ v: 1, type: 'filter', filter: { game: 'g2' } }));
    const snap2 = await feed.until(() => feed.of('snapshot')[1]);
    expect(snap2.rooms.map((r) => r.name)).toEqual(['two']);
    feed.ws.close();
  });

  it('refuses bad messages with a typed refusal and closes only that socket', async () => {
    const { base } = await start();
    const ws = base.replace('http', 'ws');
    const good = new FeedProbe(`${ws}/feed`);
    await good.until(() => good.of('snapshot')[0]);
    const cases: [string | Buffer, string][] = [
      ['not json', 'bad-json'],
      ['{"v":2,"type":"filter"}', 'bad-request'],
      ['{"v":1,"type":"subscribe"}', 'bad-request'],
      ['{"v":1,"type":"filter","filter":{"mode":"chess"}}', 'bad-request'],
      [Buffer.from([1, 2, 3]), 'bad-json'],
    ];
    for (const [msg, c] of cases) {
      const p = new FeedProbe(`${ws}/feed`);
      await p.until(() => p.of('snapshot')[0]);
      p.ws.send(msg);
      const refused = await p.until(() => p.of('refused')[0]);
      expect(refused.code).toBe(c);
      await p.until(() => p.closed);
      expect(p.closed?.code).toBe(4002);
    }
    const bad = new FeedProbe(`${ws}/feed?colour=red`);
    expect((await bad.until(() => bad.of('refused')[0])).code).toBe('bad-request');
    await http(base, 'POST', '/rooms', announce());
    await good.until(() => good.of('room')[0]);
    expect(good.closed).toBeUndefined();
    good.ws.close();
  });

  it('caps feed sockets per address', async () => {
    const { base } = await start(new ManualClock(0), { feed: { maxSocketsPerAddress: 2 } });
    const ws = base.replace('http', 'ws');
    const a = new FeedProbe(`${ws}/feed`);
    const b = new FeedProbe(`${ws}/feed`);
    await a.until(() => a.of('snapshot')[0]);
    await b.until(() => b.of('snapshot')[0]);
    const c = new FeedProbe(`${ws}/feed`);
    expect((await c.until(() => c.of('refused')[0])).code).toBe('limit');
    await c.until(() => c.closed);
    expect(c.closed?.code).toBe(4001);
    a.ws.close();
    b.ws.close();
  });
});

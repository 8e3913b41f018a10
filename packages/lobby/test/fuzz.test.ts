import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { isLobbyErrorCode, type LobbyServer, ROOM_MODES, startLobby } from '../src/node.js';
import { announce, code, FeedProbe, http, type Reply } from './helpers.js';

const RUNS = Number(process.env.LOBBY_FUZZ_RUNS ?? 150);
const MAX_ROOMS = 40;
let lobby: LobbyServer;
let base: string;

beforeAll(async () => {
  lobby = await startLobby({ api: { rateLimits: false, maxRooms: MAX_ROOMS, maxRoomsPerAddress: MAX_ROOMS } });
  base = lobby.url;
});
afterAll(async () => {
  await lobby.close();
});

/** An announce with one field replaced by anything, dropped, or an extra key. */
const nearValid = fc
  .tuple(
    fc.constantFrom(...Object.keys(announce()), 'extra'),
    fc.oneof(
      fc.anything(),
      fc.string(),
      fc.integer(),
      fc.constantFrom(...ROOM_MODES, '', null, -1, 65, 1.5, [], {}),
      fc.array(fc.anything({ maxDepth: 1 }), { maxLength: 3 }),
      fc.array(fc.record({ kind: fc.constantFrom('udp', 'ws', 'webrtc', 'tcp'), url: fc.string(), peer: fc.string() })),
    ),
    fc.boolean(),
  )
  .map(([key, value, drop]) => {
    const o: Record<string, unknown> = { ...announce() };
    if (drop) delete o[key];
    else o[key] = value;
    return JSON.stringify(o);
  });

/** An announce whose endpoints are anything (null, numbers, near-valid objects), up to one over the cap. */
const endpointsFuzz = fc
  .array(
    fc.oneof(
      fc.constant(null),
      fc.anything({ maxDepth: 1 }),
      fc.record(
        {
          kind: fc.constantFrom('udp', 'ws', 'webrtc', 'tcp', 7),
          url: fc.oneof(fc.string(), fc.webUrl()),
          peer: fc.string(),
        },
        { requiredKeys: [] },
      ),
    ),
    { maxLength: 9 },
  )
  .map((endpoints) => JSON.stringify({ ...announce(), endpoints }));

const bodies = fc.oneof(
  endpointsFuzz,
  fc.string({ maxLength: 300 }),
  fc.json({ maxDepth: 3 }),
  fc.anything({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'undefined'),
  nearValid,
  fc.string({ minLength: 4000, maxLength: 6000 }),
);

function typedRefusalOrOk(r: Reply, ok: number[]): void {
  if (ok.includes(r.status)) return;
  expect([400, 413, 429]).toContain(r.status);
  expect(isLobbyErrorCode(code(r))).toBe(true);
  expect((r.body as { error: { reason: string } }).error.reason.length).toBeGreaterThan(0);
}

describe('fuzzed HTTP bodies and WebSocket messages', () => {
  it('POST and PUT bodies: a room or a typed refusal; never a crash; rooms stay within the cap', async () => {
    const room = (await http(base, 'POST', '/rooms', announce())).body as { room: { id: string }; token: string };
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        typedRefusalOrOk(await http(base, 'POST', '/rooms', body), [201]);
        typedRefusalOrOk(await http(base, 'PUT', `/rooms/${room.room.id}`, body, room.token), [200]);
      }),
      { numRuns: RUNS },
    );
    const health = await http(base, 'GET', '/health');
    expect(health.status).toBe(200);
    expect((health.body as { rooms: number }).rooms).toBeLessThanOrEqual(MAX_ROOMS);
  });

  it('raw bytes (not UTF-8, not JSON) get bad-json or bad-request', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), async (bytes) => {
        const r = await http(base, 'POST', '/rooms', bytes);
        typedRefusalOrOk(r, [201]);
        if (r.status !== 201) expect(['bad-json', 'bad-request', 'limit']).toContain(code(r));
      }),
      { numRuns: RUNS },
    );
  });

  it('feed messages: a snapshot or a typed refusal closing only that socket', async () => {
    const ws = base.replace('http', 'ws');
    const watcher = new FeedProbe(`${ws}/feed`);
    await watcher.until(() => watcher.of('snapshot')[0]);
    const filterish = fc
      .record(
        { v: fc.constantFrom(1, 2, '1'), type: fc.constantFrom('filter', 'x'), filter: fc.anything({ maxDepth: 2 }) },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ maxLength: 100 }), filterish, fc.json({ maxDepth: 2 })), {
          minLength: 1,
          maxLength: 4,
        }),
        async (msgs) => {
          const p = new FeedProbe(`${ws}/feed`);
          await p.until(() => p.of('snapshot')[0]);
          for (const m of msgs) p.ws.send(m);
          await p.until(() => p.closed || p.of('snapshot').length === msgs.length + 1 || undefined);
          for (const r of p.of('refused')) expect(isLobbyErrorCode(r.code)).toBe(true);
          if (p.closed) {
            expect(p.closed.code).toBe(4002);
            expect(p.of('refused')).toHaveLength(1);
          } else p.ws.close();
        },
      ),
      { numRuns: Math.ceil(RUNS / 3) },
    );
    // Closed sockets are forgotten: only the watcher (and at most a closing probe) remain.
    await watcher.until(() => (lobby.feed.socketCount <= 1 ? true : undefined));
    expect(watcher.closed).toBeUndefined();
    await http(base, 'POST', '/rooms', announce({ name: 'after the fuzz' }));
    await watcher.until(() => watcher.of('room').find((m) => m.room.name === 'after the fuzz'));
    watcher.ws.close();
  });

  it('relay requests with arbitrary room, client and token parameters are closed with a relay code', async () => {
    const ws = base.replace('http', 'ws');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('host', 'join', 'link'),
        fc.string({ maxLength: 80 }),
        fc.string({ maxLength: 30 }),
        async (route, room, token) => {
          const q = new URLSearchParams({ room, client: token, token });
          const s = new WebSocket(`${ws}/relay/${route}?${q}`);
          s.on('error', () => {});
          const closed = await new Promise<number>((r) => s.on('close', (c) => r(c)));
          expect([4001, 4002, 4003, 1006]).toContain(closed);
        },
      ),
      { numRuns: Math.ceil(RUNS / 3) },
    );
    expect(lobby.relay?.roomCount).toBe(0);
    expect((await http(base, 'GET', '/health')).status).toBe(200);
  });
});

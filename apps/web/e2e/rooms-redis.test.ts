import { performance } from 'node:perf_hooks';
import { type LobbyServer, type RoomInfo, startLobby } from '@netplay/lobby/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compareFinals,
  type PageRig,
  pageLines,
  pageOpener,
  startPageRig,
  waitDone,
  waitEmptyRoomList,
  waitShareLink,
} from './harness.js';
import { type RedisServer, startRedisServer } from './redis-server.js';

/*
 * Two lobby nodes on one real Redis (Debian's redis-server, started here): page A hosts on node A,
 * page B lists node B's rooms, sees A's room within 1 s, clicks Join (node B's join info: B's own
 * /signal), and the two pages meet through signaling that crosses Redis (A's /signal ↔ B's
 * /signal, counted by both nodes' routers) and play 600 frames whose final hashes agree.
 */

const FRAMES = 600;
/** Frames the guest plays: a margin over FRAMES (see browser.test.ts); the host a little longer. */
const PLAYED = FRAMES + 60;

interface RouterStats {
  readonly forwarded: number;
  readonly delivered: number;
}

let redis: RedisServer;
let rig: PageRig;
let a: LobbyServer;
let b: LobbyServer;

beforeAll(async () => {
  redis = await startRedisServer();
  const common = { host: '127.0.0.1', port: 0, redis: redis.url, redisPrefix: 'e2e:' } as const;
  a = await startLobby({ ...common, nodeId: 'A' });
  b = await startLobby({ ...common, nodeId: 'B' });
  rig = await startPageRig();
});

afterAll(async () => {
  await rig?.close();
  await a?.close();
  await b?.close();
  await redis?.kill();
});

/** A node's Redis signaling router counters (`RedisSignalingRouter.stats`). */
function routerStats(node: LobbyServer): RouterStats {
  const stats = (node.router as { stats?: RouterStats } | undefined)?.stats;
  if (stats === undefined) throw new Error(`node ${node.nodeId} has no Redis signaling router`);
  return { ...stats };
}

describe('rooms page: two lobby nodes on one Redis, in Chromium', () => {
  it('a room hosted on A is listed on B within 1 s, joined through B; signaling crosses Redis; 600 frames agree', async () => {
    const errors: string[] = [];
    const contexts: (() => unknown)[] = [];
    const open = pageOpener(rig.browser, contexts, errors);
    // When node A stored the announcement (its own put), and when node B heard of it (pub/sub).
    const putsOnA: Array<{ at: number; room: RoomInfo }> = [];
    const putsOnB: Array<{ at: number; room: RoomInfo }> = [];
    const offs = [
      a.store.subscribe((e) => {
        if (e.type === 'put') putsOnA.push({ at: performance.now(), room: e.room.info });
      }),
      b.store.subscribe((e) => {
        if (e.type === 'put') putsOnB.push({ at: performance.now(), room: e.room.info });
      }),
    ];
    try {
      expect([a.nodeId, b.nodeId]).toEqual(['A', 'B']);
      expect([routerStats(a), routerStats(b)]).toEqual([
        { forwarded: 0, delivered: 0 },
        { forwarded: 0, delivered: 0 },
      ]);
      const lobbyOf = (n: LobbyServer) => `lobby=${encodeURIComponent(n.url)}`;

      // Page B: the rooms page on node B (its first snapshot is empty).
      const guest = await open(`${rig.site.url}?${lobbyOf(b)}&nick=beta&bot=1&frames=${PLAYED}`, 'guest');
      await waitEmptyRoomList(guest);

      // Page A hosts on node A: the room is announced there and hosted in A's signaling room.
      const hostPage = await open(`${rig.site.url}?${lobbyOf(a)}&nick=alpha&bot=1&frames=${PLAYED + 120}`, 'host');
      await hostPage.click('#host-game', { timeout: 30_000 });
      const announceBy = performance.now() + 30_000;
      while (putsOnA.length === 0) {
        if (performance.now() > announceBy) throw new Error(`the host page announced nothing: ${errors.join('; ')}`);
        await new Promise((r) => setTimeout(r, 2));
      }
      const announced = putsOnA[0]!;
      const id = announced.room.id;
      expect(announced.room).toMatchObject({ name: "alpha's game", node: 'A', endpoints: [{ kind: 'webrtc' }] });

      // Page B lists it within 1 s of node A storing it (Redis pub/sub to B, B's feed to the page).
      await guest.waitForSelector(`tr[data-room="${id}"]`, { timeout: 1000 });
      const listedMs = performance.now() - announced.at;
      const onB = putsOnB.find((p) => p.room.id === id);
      console.log(
        `rooms-redis: room ${id} reached node B ${onB ? Math.abs(onB.at - announced.at).toFixed(1) : '?'} ms and page B ${listedMs.toFixed(0)} ms after node A stored it`,
      );
      expect(listedMs).toBeLessThan(1000);
      expect(onB?.room.node).toBe('A');
      expect(await guest.textContent(`tr[data-room="${id}"]`)).toMatch(/alpha's game.*1\/2.*WebRTC/);

      // The host signals on node A.
      const link = new URL((await waitShareLink(hostPage)).link!);
      expect(link.searchParams.get('signal')).toBe(a.signalingUrl);
      expect(link.searchParams.get('room')).toBe(id);

      // Click "Join": node B's join info sends page B to B's own /signal, not A's.
      await Promise.all([
        guest.waitForURL((u) => u.searchParams.get('room') === id, { timeout: 30_000 }),
        guest.click(`button[data-join="${id}"]`),
      ]);
      expect(new URL(guest.url()).searchParams.get('signal')).toBe(b.signalingUrl);
      expect(b.signalingUrl).not.toBe(a.signalingUrl);

      const t0 = performance.now();
      const [h, g] = await Promise.all([waitDone(hostPage, 'host'), waitDone(guest, 'guest')]);
      const playedMs = performance.now() - t0;
      expect(errors).toEqual([]);
      if (h.error !== undefined || g.error !== undefined)
        console.log(`rooms-redis: host ${await pageLines(hostPage)}; guest ${await pageLines(guest)}`);
      expect([h.error, g.error]).toEqual([undefined, undefined]);
      expect([h.slot, g.slot]).toEqual([0, 1]);
      expect(await guest.textContent('#status')).toContain(`joined room ${id} on ${b.signalingUrl} as beta (P2)`);

      // Every signal between the pages crossed Redis: each node forwarded its own page's signals
      // to the other node and delivered the other's to its page (offer B→A, answer and candidates).
      const sa = routerStats(a);
      const sb = routerStats(b);
      console.log(
        `rooms-redis: router A forwarded ${sa.forwarded} delivered ${sa.delivered}; router B forwarded ${sb.forwarded} delivered ${sb.delivered}; played in ${(playedMs / 1000).toFixed(1)} s`,
      );
      expect(sa.forwarded).toBeGreaterThan(0);
      expect(sb.forwarded).toBeGreaterThan(0);
      expect(sa.delivered).toBeGreaterThan(0);
      expect(sb.delivered).toBeGreaterThan(0);

      const hostFinals = new Map(h.finals);
      const guestFinals = new Map(g.finals);
      const v = compareFinals(guestFinals, hostFinals);
      console.log(`rooms-redis: ${v.common} common final frames, ${v.differing.length} differing`);
      expect(v.differing).toEqual([]);
      expect(v.common).toBeGreaterThanOrEqual(FRAMES);
      expect(guestFinals.get(FRAMES)).toBeDefined();
      expect(guestFinals.get(FRAMES)).toBe(hostFinals.get(FRAMES));
    } finally {
      for (const off of offs) off();
      for (const close of contexts.reverse()) await close();
    }
  });
});

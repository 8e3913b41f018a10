import { performance } from 'node:perf_hooks';
import { type LobbyServer, type RoomInfo, startLobby } from '@netplay/lobby/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  compareFinals,
  nodeModulesInBundle,
  type PageRig,
  pageOpener,
  startPageRig,
  waitDone,
  waitEmptyRoomList,
  waitShareLink,
} from './harness.js';

/*
 * The rooms page: a real lobby (`startLobby`, in memory) started here; a page hosts a game and
 * announces it, a second page lists the lobby's rooms live (the feed), sees it within 1 s, joins it
 * with a click (WebRTC through the lobby's signaling) and both play 600 frames whose final hashes
 * agree.
 */

const FRAMES = 600;
/** Frames the guest plays: a margin over FRAMES (see browser.test.ts); the host a little longer. */
const PLAYED = FRAMES + 60;

let rig: PageRig;
let lobby: LobbyServer;

beforeAll(async () => {
  rig = await startPageRig();
  lobby = await startLobby({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await rig?.close();
  await lobby?.close();
});

describe('rooms page: a lobby in Chromium', () => {
  const cleanups: (() => unknown)[] = [];
  const errors: string[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    errors.length = 0;
  });

  const open = (url: string, name: string) => pageOpener(rig.browser, cleanups, errors)(url, name);

  it('the built page (with the lobby client) holds no Node module', async () => {
    expect(await nodeModulesInBundle(rig.dist)).toEqual([]);
  });

  it('a hosted game is announced, listed on another page within 1 s, joined with a click; 600 frames agree', async () => {
    // What the lobby stores, with the time each change reached it.
    const puts: Array<{ at: number; room: RoomInfo }> = [];
    const removed: string[] = [];
    cleanups.push(
      lobby.store.subscribe((e) => {
        if (e.type === 'put') puts.push({ at: performance.now(), room: e.room.info });
        else removed.push(e.id);
      }),
    );
    const lobbyParam = `lobby=${encodeURIComponent(lobby.url)}`;

    // Page B: the rooms page, following the lobby's feed (its first snapshot is empty).
    const guest = await open(`${rig.site.url}?${lobbyParam}&nick=beta&bot=1&frames=${PLAYED}`, 'guest');
    await waitEmptyRoomList(guest);
    expect(await guest.isVisible('#rooms')).toBe(true);

    // Page A hosts: the room is announced on the lobby, hosted in the lobby's signaling room.
    const hostPage = await open(`${rig.site.url}?${lobbyParam}&nick=alpha&bot=1&frames=${PLAYED + 120}`, 'host');
    await hostPage.click('#host-game', { timeout: 30_000 });
    const announceBy = performance.now() + 30_000;
    while (puts.length === 0) {
      if (performance.now() > announceBy) throw new Error(`the host page announced nothing: ${errors.join('; ')}`);
      await new Promise((r) => setTimeout(r, 2));
    }
    const announced = puts[0]!;
    const id = announced.room.id;
    expect(announced.room).toMatchObject({
      name: "alpha's game",
      game: 'space-racer',
      core: 'chip8',
      mode: 'rollback',
      players: 1,
      slots: 2,
      hasPassword: false,
      endpoints: [{ kind: 'webrtc', peer: 'host' }],
    });

    // Page B lists it within 1 s of the lobby storing it (the feed pushes it; no polling).
    await guest.waitForSelector(`tr[data-room="${id}"]`, { timeout: 1000 });
    const listedMs = performance.now() - announced.at;
    console.log(`rooms page: room ${id} listed ${listedMs.toFixed(0)} ms after the lobby stored it`);
    expect(listedMs).toBeLessThan(1000);
    expect(await guest.textContent(`tr[data-room="${id}"]`)).toMatch(
      /alpha's game.*space-racer\/chip8.*rollback.*1\/2.*WebRTC/,
    );

    // The host page's share link names the lobby's signaling and the lobby's room id.
    const link = new URL((await waitShareLink(hostPage)).link!);
    expect(link.searchParams.get('signal')).toBe(`${lobby.url.replace('http', 'ws')}/signal`);
    expect(link.searchParams.get('room')).toBe(id);

    // Click "Join": page B opens the WebRTC route with its own settings (nick, bot, frames).
    await Promise.all([
      guest.waitForURL((u) => u.searchParams.get('room') === id, { timeout: 30_000 }),
      guest.click(`button[data-join="${id}"]`),
    ]);
    const [h, g] = await Promise.all([waitDone(hostPage, 'host'), waitDone(guest, 'guest')]);
    expect(errors).toEqual([]);
    expect([h.error, g.error]).toEqual([undefined, undefined]);
    expect([h.slot, g.slot]).toEqual([0, 1]);
    expect(await guest.textContent('#status')).toMatch(
      new RegExp(`joined room ${id} on ws://127\\.0\\.0\\.1:\\d+/signal as beta \\(P2\\)`),
    );
    const hostFinals = new Map(h.finals);
    const guestFinals = new Map(g.finals);
    const v = compareFinals(guestFinals, hostFinals);
    expect(v.differing).toEqual([]);
    expect(v.common).toBeGreaterThanOrEqual(FRAMES);
    expect(guestFinals.get(FRAMES)).toBeDefined();
    expect(guestFinals.get(FRAMES)).toBe(hostFinals.get(FRAMES));

    // The announcement followed the game (2 players) and was deleted when the host stopped.
    expect(puts.some((p) => p.room.id === id && p.room.players === 2)).toBe(true);
    const end = performance.now() + 5000;
    while (!removed.includes(id) && performance.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(removed).toContain(id);
    expect(await lobby.store.count()).toBe(0);
  });
});

import { fc, test } from '@fast-check/vitest';
import type { JoinInfo, RoomInfo } from '@netplay/lobby';
import { describe, expect, it } from 'vitest';
import { parseParams } from '../src/params.js';
import {
  applyFeed,
  DEFAULT_LOBBY_PORT,
  defaultLobbyUrl,
  hostAnnouncement,
  joinTarget,
  joinUrl,
  roomRows,
  routeOf,
} from '../src/rooms.js';

function room(over: Partial<RoomInfo> = {}): RoomInfo {
  return {
    id: 'r1',
    node: 'n',
    relay: false,
    createdAt: 100,
    updatedAt: 100,
    name: 'alpha game',
    game: 'space-racer',
    core: 'chip8',
    mode: 'rollback',
    hasPassword: false,
    players: 1,
    slots: 2,
    endpoints: [{ kind: 'webrtc', peer: 'host' }],
    ...over,
  };
}

describe('rooms table', () => {
  it('keeps the table from the feed: snapshot replaces, room upserts, removed deletes', () => {
    const rooms = new Map<string, RoomInfo>([['old', room({ id: 'old' })]]);
    expect(applyFeed(rooms, { v: 1, type: 'snapshot', rooms: [room({ id: 'a' }), room({ id: 'b' })] })).toBe(true);
    expect([...rooms.keys()]).toEqual(['a', 'b']);
    expect(applyFeed(rooms, { v: 1, type: 'room', room: room({ id: 'a', players: 2 }) })).toBe(true);
    expect(rooms.get('a')?.players).toBe(2);
    expect(applyFeed(rooms, { v: 1, type: 'removed', id: 'b', reason: 'expired' })).toBe(true);
    expect(applyFeed(rooms, { v: 1, type: 'removed', id: 'never', reason: 'deleted' })).toBe(false);
    expect(applyFeed(rooms, { v: 1, type: 'refused', code: 'flood', reason: 'x' })).toBe(false);
    expect([...rooms.keys()]).toEqual(['a']);
  });

  it('rows: oldest first, name filter (case-insensitive, trimmed), free slots only, route per room', () => {
    const rooms = [
      room({ id: 'c', createdAt: 300, name: 'Zeta', players: 2, slots: 2, hasPassword: true }),
      room({ id: 'a', createdAt: 100, name: 'Alpha', endpoints: [{ kind: 'ws', url: 'ws://h:1' }] }),
      room({ id: 'b', createdAt: 100, name: 'alphabet', endpoints: [], relay: true }),
      room({ id: 'd', createdAt: 50, name: 'udp', endpoints: [{ kind: 'udp', url: 'udp://h:2' }] }),
    ];
    const all = roomRows(rooms, { text: '', openOnly: false });
    expect(all.map((r) => r.id)).toEqual(['d', 'a', 'b', 'c']);
    expect(all.map((r) => r.route)).toEqual([undefined, 'ws', 'relay', 'webrtc']);
    expect(all[3]).toEqual({
      id: 'c',
      name: 'Zeta',
      game: 'space-racer/chip8',
      mode: 'rollback',
      players: '2/2',
      password: true,
      full: true,
      route: 'webrtc',
    });
    expect(roomRows(rooms, { text: '  ALPHA ', openOnly: false }).map((r) => r.id)).toEqual(['a', 'b']);
    expect(roomRows(rooms, { text: '', openOnly: true }).map((r) => r.id)).toEqual(['d', 'a', 'b']);
    expect(roomRows(rooms, { text: 'zeta', openOnly: true })).toEqual([]);
  });

  test.prop([
    fc.array(
      fc.record({
        id: fc.string({ minLength: 1, maxLength: 6 }),
        name: fc.string({ maxLength: 8 }),
        createdAt: fc.integer({ min: 0, max: 5 }),
        players: fc.integer({ min: 0, max: 4 }),
        slots: fc.integer({ min: 1, max: 4 }),
      }),
      { maxLength: 20 },
    ),
    fc.string({ maxLength: 3 }),
    fc.boolean(),
  ])('rows are exactly the matching rooms, each once, in creation order', (specs, text, openOnly) => {
    const byId = new Map(specs.map((s) => [s.id, room(s)]));
    const rows = roomRows(byId.values(), { text, openOnly });
    const needle = text.trim().toLowerCase();
    const expected = [...byId.values()].filter(
      (r) => r.name.toLowerCase().includes(needle) && (!openOnly || r.players < r.slots),
    );
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(expected.map((r) => r.id)));
    expect(rows.length).toBe(expected.length);
    for (let i = 1; i < rows.length; i++) {
      const a = byId.get(rows[i - 1]!.id)!;
      const b = byId.get(rows[i]!.id)!;
      expect(a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)).toBe(true);
    }
  });
});

describe('joining a listed room', () => {
  const info = (over: Partial<JoinInfo>, r: Partial<RoomInfo> = {}): JoinInfo => ({ room: room(r), ...over });

  it('prefers WebRTC through the lobby, then a WebSocket endpoint, then the relay; UDP only is unreachable', () => {
    const signaling = { url: 'ws://lobby:8788/signal', room: 'r1', peer: 'host' };
    const relay = { url: 'ws://lobby:8788/relay/join?room=r1', udp: 'udp://lobby:9000' };
    const ws = { kind: 'ws', url: 'ws://203.0.113.7:7845' } as const;
    expect(joinTarget(info({ signaling, relay }, { endpoints: [ws, { kind: 'webrtc', peer: 'host' }] }))).toEqual({
      kind: 'webrtc',
      signal: 'ws://lobby:8788/signal',
      room: 'r1',
      peer: 'host',
    });
    // A WebRTC peer that is not a page's host (a CLI's name) is not one the page can dial.
    expect(joinTarget(info({ signaling: { ...signaling, peer: 'cli-7' } }, { endpoints: [ws] }))).toEqual({
      kind: 'ws',
      url: 'ws://203.0.113.7:7845',
      via: 'host',
    });
    expect(joinTarget(info({ relay }, { endpoints: [{ kind: 'udp', url: 'udp://h:1' }] }))).toEqual({
      kind: 'ws',
      url: relay.url,
      via: 'relay',
    });
    expect(joinTarget(info({}, { endpoints: [{ kind: 'udp', url: 'udp://h:1' }] }))).toBeUndefined();
    expect(routeOf(room({ endpoints: [{ kind: 'udp', url: 'udp://h:1' }], relay: true }))).toBe('relay');
  });

  it("the join link carries the route and the player's own settings, nothing else", () => {
    const page = 'http://127.0.0.1:5173/?lobby=http%3A%2F%2F127.0.0.1%3A8788&nick=beta&bot=1&frames=660&junk=1#x';
    const rtc = joinUrl(page, {
      kind: 'webrtc',
      signal: 'ws://127.0.0.1:8788/signal',
      room: 'AbC_12-xyz09',
      peer: 'host',
    });
    const p = parseParams(new URL(rtc).search);
    expect(p).toMatchObject({
      signal: 'ws://127.0.0.1:8788/signal',
      room: 'AbC_12-xyz09',
      host: undefined,
      lobby: 'http://127.0.0.1:8788',
      nick: 'beta',
      bot: true,
      frames: 660,
    });
    expect(new URL(rtc).searchParams.has('junk')).toBe(false);
    expect(new URL(rtc).hash).toBe('');
    const relayUrl = 'ws://127.0.0.1:8788/relay/join?room=r1';
    const viaRelay = parseParams(new URL(joinUrl(page, { kind: 'ws', url: relayUrl, via: 'relay' })).search);
    expect(viaRelay).toMatchObject({ host: relayUrl, room: undefined, signal: undefined, nick: 'beta' });
  });
});

describe('lobby URL and announcement', () => {
  it("?lobby= wins, then VITE_NETPLAY_LOBBY, then the dev server's port of the page host, else none", () => {
    const page = { protocol: 'http:', hostname: '192.168.1.5' };
    expect(defaultLobbyUrl(page, 'http://l:1', 'http://c:2', 8788)).toBe('http://l:1');
    expect(defaultLobbyUrl(page, undefined, 'https://c:2', 8788)).toBe('https://c:2');
    expect(defaultLobbyUrl(page, undefined, 'ftp://c', DEFAULT_LOBBY_PORT)).toBe('http://192.168.1.5:8788');
    expect(defaultLobbyUrl({ protocol: 'https:', hostname: '::1' }, undefined, undefined, 9)).toBe('https://[::1]:9');
    expect(defaultLobbyUrl(page, undefined, undefined, 0)).toBeUndefined();
    expect(parseParams('?lobby=http://h:8788/').lobby).toBe('http://h:8788');
    expect(parseParams('?lobby=javascript:alert(1)').lobby).toBeUndefined();
    expect(parseParams('?lobby=http://h/x?y').lobby).toBeUndefined();
  });

  it('a hosting page announces a WebRTC rollback room of Space Racer', () => {
    expect(hostAnnouncement('alpha', 1, 2, false)).toEqual({
      name: "alpha's game",
      game: 'space-racer',
      core: 'chip8',
      mode: 'rollback',
      hasPassword: false,
      players: 1,
      slots: 2,
      endpoints: [{ kind: 'webrtc', peer: 'host' }],
    });
    expect(hostAnnouncement('x'.repeat(70), 5, 4, true)).toMatchObject({ players: 4, hasPassword: true });
    expect(hostAnnouncement('x'.repeat(70), 1, 4, true).name).toHaveLength(64);
  });
});

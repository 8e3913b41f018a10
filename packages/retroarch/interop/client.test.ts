/**
 * Our client against a real headless RetroArch 1.14 host on loopback (needs
 * `.ci/setup-retroarch.sh`). Run with `npm run test:interop`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RetroArchClientEvent } from '../src/index.js';
import { connectRetroArch, type RetroArchConnection } from '../src/node.js';
import { type RetroArchProcess, startHost, until } from './harness.js';

const running: RetroArchProcess[] = [];
const conns: RetroArchConnection[] = [];
afterEach(async () => {
  for (const c of conns.splice(0)) c.socket.destroy();
  for (const p of running.splice(0)) await p.stop();
});

async function host(port: number, options: { password?: string; checkFrames?: number } = {}) {
  const p = await startHost(port, { nick: 'rahost', ...options });
  running.push(p);
  return p;
}

async function join(port: number, password?: string) {
  const events: RetroArchClientEvent[] = [];
  const inputs: { frame: number; client: number; words: number[] }[] = [];
  const conn = await connectRetroArch({
    port,
    nick: 'netplay-ts',
    ...(password === undefined ? {} : { password }),
    onEvent: (e) => {
      if (e.type === 'input') inputs.push({ frame: e.frame, client: e.client, words: Array.from(e.words) });
      else events.push(e.type === 'crc' || e.type === 'noInput' ? { ...e } : e);
    },
  });
  conns.push(conn);
  return { conn, events, inputs };
}

describe('against a real RetroArch 1.14 host', () => {
  it('spectates 600 frames of a session with a player: savestate, every input and the host CRCs', async () => {
    const port = 56011;
    await host(port, { checkFrames: 60 });
    // RetroArch 1.14 sends CRC messages only while a remote player is connected (observed), so a
    // second connection of ours plays, holding A.
    const player = await join(port);
    await until(() => player.conn.client.state === 'spectating', 15_000, 'player SYNC');
    player.conn.client.setInput([1 << 8]);
    player.conn.client.play();
    await until(() => player.conn.client.state === 'playing', 10_000, 'player MODE');

    const { conn, events, inputs } = await join(port);
    const frames = new Set<number>();
    let scanned = 0;
    const seen = () => {
      for (; scanned < inputs.length; scanned++) frames.add(inputs[scanned]!.frame);
      return frames.size;
    };
    await until(() => seen() >= 600, 30_000, '600 frames');
    const synced = events.find((e) => e.type === 'synced');
    expect(synced?.type === 'synced' && synced.session.hostInfo.coreName).toBe('Nestopia');
    expect(synced?.type === 'synced' && synced.session.hostNick).toBe('rahost');
    const savestate = events.find((e) => e.type === 'savestate');
    expect(savestate?.type === 'savestate' && savestate.state.length).toBeGreaterThan(0);
    const crcs = events.filter((e) => e.type === 'crc');
    expect(crcs.length).toBeGreaterThanOrEqual(5);
    // CRCs come at multiples of netplay_check_frames.
    for (const c of crcs) expect(c.type === 'crc' && c.frame % 60).toBe(0);
    // The host (client 0) and our player, one joypad word each; the player's word is its held A.
    const playerNumber = player.conn.client.clientNumber;
    expect(new Set(inputs.map((i) => i.client))).toEqual(new Set([0, playerNumber]));
    expect(inputs.every((i) => i.words.length === 1)).toBe(true);
    expect(inputs.filter((i) => i.client === playerNumber).every((i) => i.words[0] === 1 << 8)).toBe(true);
    expect(events.some((e) => e.type === 'closed')).toBe(false);
    conn.close();
    expect(await conn.closed).toBeUndefined();
    player.conn.close();
  });

  it('joins as player 2, holds a button, and the host logs the join', async () => {
    const port = 56012;
    const p = await host(port);
    const { conn, events, inputs } = await join(port);
    await until(() => conn.client.state === 'spectating', 15_000, 'SYNC');
    conn.client.setInput([1 << 8]); // RETRO_DEVICE_ID_JOYPAD_A
    conn.client.play();
    await until(() => conn.client.state === 'playing', 10_000, 'MODE');
    const mode = events.find((e) => e.type === 'mode' && e.you);
    expect(mode?.type === 'mode' && mode.playing).toBe(true);
    expect(conn.client.clientNumber).toBeGreaterThan(0);
    const from = conn.client.hostFrame;
    const N = 300;
    await until(() => conn.client.hostFrame >= from + N, 30_000, `${N} frames as a player`);
    expect(events.some((e) => e.type === 'closed')).toBe(false);
    expect(inputs.length).toBeGreaterThan(N);
    expect(p.log()).toMatch(/\[Netplay\] netplay-ts has joined as player 2/);
    expect(p.log()).not.toMatch(/\[ERROR\] \[Netplay\]/);
    conn.close();
    expect(await conn.closed).toBeUndefined();
    // A clean DISCONNECT is logged as such by the host.
    await until(() => /"netplay-ts" has disconnected/.test(p.log()), 5_000, 'the host to log the disconnect');
  });

  it('a password-protected host accepts the right password and rejects a wrong one', async () => {
    const port = 56013;
    await host(port, { password: 'sesame' });
    const good = await join(port, 'sesame');
    await until(() => good.conn.client.state === 'spectating', 15_000, 'SYNC with the right password');
    expect(good.conn.client.session?.header.salt).not.toBe(0);
    good.conn.close();
    await good.conn.closed;

    const bad = await join(port, 'wrong');
    const error = await bad.conn.closed;
    expect(error?.code).toBe('password-rejected');
    expect(bad.events.some((e) => e.type === 'synced')).toBe(false);

    const none = await join(port);
    expect((await none.conn.closed)?.code).toBe('password-required');
  });
});

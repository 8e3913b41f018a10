/**
 * A real headless RetroArch 1.14 client joins our relaying host as a player. The designated peer
 * is a clock in this test: it relays one INPUT of client 0 (device 0, no buttons) every 5 ms.
 */
import type { Server } from 'node:net';
import { encodeRetroArchInput } from '@netplay/protocol';
import { afterEach, expect, it } from 'vitest';
import type { RetroArchHostEvent } from '../src/index.js';
import { listenRetroArchHost, type RetroArchHostSocket } from '../src/node.js';
import { type RetroArchProcess, startClient, until, waitForPort } from './harness.js';

let server: Server | undefined;
let client: RetroArchProcess | undefined;
let clock: NodeJS.Timeout | undefined;
afterEach(async () => {
  clearInterval(clock);
  await client?.stop();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

it('a real RetroArch client joins our host, plays and exchanges inputs for 300 frames', async () => {
  const port = 56015;
  const events: RetroArchHostEvent[] = [];
  const clientFrames: number[] = [];
  let conn: RetroArchHostSocket | undefined;
  server = await listenRetroArchHost({
    port,
    host: { nick: 'netplay-host', info: { contentCrc: 0xec4b5f44, coreName: 'Nestopia', coreVersion: '1.52.0 ' } },
    onEvent: (c, e) => {
      conn = c;
      if (e.type === 'relay') {
        if (e.command === 3) clientFrames.push(e.frame);
        return;
      }
      events.push(e);
    },
  });
  await waitForPort(port);
  let frame = 0;
  const buf = new Uint8Array(20);
  clock = setInterval(() => {
    const c = conn;
    if (c === undefined || (c.host.state !== 'spectating' && c.host.state !== 'playing')) return;
    // Stay at most 10 frames ahead of the player once it plays (as a host that waits for input).
    if (c.host.state === 'playing' && frame > (clientFrames.at(-1) ?? frame) + 10) return;
    const n = encodeRetroArchInput(buf, 0, frame++, 0, [0]);
    c.relay(buf.subarray(0, n));
  }, 5);
  client = startClient(port, { nick: 'raclient', extra: ['netplay_start_as_spectator = "false"'] });
  await until(() => events.some((e) => e.type === 'joined'), 20_000, 'the client to join');
  await until(() => events.some((e) => e.type === 'playing'), 20_000, 'the client to play');
  await until(() => clientFrames.length >= 300, 30_000, '300 input frames from the client');
  const playing = events.find((e) => e.type === 'playing');
  const start = playing?.type === 'playing' ? playing.frame : -1;
  expect(clientFrames.slice(0, 300)).toEqual(Array.from({ length: 300 }, (_, i) => start + i));
  expect(events.find((e) => e.type === 'joined')).toMatchObject({ nick: 'raclient', info: { coreName: 'Nestopia' } });
  expect(events.some((e) => e.type === 'closed')).toBe(false);
  expect(client.log()).toMatch(/\[Netplay\] You have joined as player 2/);
  expect(client.log()).not.toMatch(/\[ERROR\] \[Netplay\]/);
});

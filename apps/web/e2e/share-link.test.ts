import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chip8Core } from '@netplay/core-wasm';
import { crc32 } from '@netplay/protocol';
import { NetplayClient, SESSION_CHANNELS } from '@netplay/session';
import { systemClock } from '@netplay/transport';
import { connectWebRtcNode, listenSignaling, nodeRtc, type SignalingServer } from '@netplay/transport-webrtc/server';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chip8Content } from '../src/content.js';
import { BotInput } from '../src/input.js';
import {
  compareFinals,
  nodeModulesInBundle,
  type PageRig,
  pageOpener,
  ROM_PATH,
  readFinalsFile,
  runCli,
  startPageRig,
  waitDone,
  waitShareLink,
} from './harness.js';

/*
 * The share-a-link flow over WebRTC: a page hosts a game ("Host a game" creates a room on a real
 * signaling server and shows a link), other pages (and a Node peer) open the link and play Space
 * Racer peer to peer with it in Chromium; nothing but signaling goes through a server.
 */

/** Final frames every comparison needs in common. */
const FRAMES = 1200;
/** Frames the guests play: a margin over FRAMES (see browser.test.ts). */
const PLAYED = FRAMES + 60;

let rig: PageRig;
let signaling: SignalingServer;
let rom: Uint8Array;

beforeAll(async () => {
  rom = new Uint8Array(await readFile(ROM_PATH));
  rig = await startPageRig();
  signaling = await listenSignaling({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await rig?.close();
  await signaling?.close();
});

describe('share a link: WebRTC in Chromium', () => {
  const cleanups: (() => unknown)[] = [];
  const errors: string[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    errors.length = 0;
  });

  // One context per page: separate storage, as two browsers would have.
  const open = (url: string, name: string) => pageOpener(rig.browser, cleanups, errors)(url, name);

  /** Opens the lobby with `query`, clicks "Host a game" and returns the page and its share link. */
  const hostGame = async (query: string): Promise<{ page: Page; link: string }> => {
    const page = await open(`${rig.site.url}?signal=${encodeURIComponent(signaling.url)}&${query}`, 'host');
    await page.click('#host-game', { timeout: 30_000 });
    const r = await waitShareLink(page);
    expect(r.error).toBeUndefined();
    // The link the page shows is the one it reports.
    expect(await page.getAttribute('#share-link', 'href')).toBe(r.link);
    const link = new URL(r.link!);
    expect(link.searchParams.get('signal')).toBe(signaling.url);
    expect(link.searchParams.get('room')).toMatch(/^np-[0-9a-f]{20}$/);
    expect(link.searchParams.has('bot')).toBe(false);
    return { page, link: r.link! };
  };

  it('the built page holds no Node module', async () => {
    expect(await nodeModulesInBundle(rig.dist)).toEqual([]);
  });

  it('two pages play 1,200 frames of rollback P2P through a share link, a third watches, every final hash agrees', async () => {
    const { page: hostPage, link } = await hostGame(`nick=alpha&bot=1&frames=${PLAYED + 120}`);
    const player = await open(`${link}&nick=beta&bot=1&frames=${PLAYED}`, 'player');
    await player.waitForFunction(() => (window.netplay?.frame ?? -1) >= 120, undefined, { timeout: 30_000 });
    // The game is full and running: the same link makes a spectator.
    const spectator = await open(`${link}&nick=gamma&bot=1&frames=${PLAYED}`, 'spectator');
    const [h, p, s] = await Promise.all([
      waitDone(hostPage, 'host'),
      waitDone(player, 'player'),
      waitDone(spectator, 'spectator'),
    ]);
    expect(errors).toEqual([]);
    expect([h.error, p.error, s.error]).toEqual([undefined, undefined, undefined]);
    expect([h.slot, p.slot, s.slot]).toEqual([0, 1, undefined]);
    expect(await player.textContent('#status')).toMatch(/joined room np-\w+ on ws:\/\/127\.0\.0\.1:\d+ as beta \(P2\)/);
    expect(await spectator.textContent('#status')).toMatch(/as gamma \(spectator\)/);
    // The live stats line of the player measured the data channel.
    expect(await player.textContent('#stats')).toMatch(/ping \d+ ms/);

    const hostFinals = new Map(h.finals);
    const playerFinals = new Map(p.finals);
    const spectatorFinals = new Map(s.finals);
    const pv = compareFinals(playerFinals, hostFinals);
    const sv = compareFinals(spectatorFinals, hostFinals);
    expect(pv.differing).toEqual([]);
    expect(sv.differing).toEqual([]);
    expect(pv.common, `player from ${Math.min(...playerFinals.keys())}`).toBeGreaterThanOrEqual(FRAMES);
    // The spectator joined at ≈ frame 120+: it has the frames from there on.
    expect(sv.common, `spectator from ${Math.min(...spectatorFinals.keys())}`).toBeGreaterThanOrEqual(FRAMES - 400);
    expect(hostFinals.get(FRAMES)).toBeDefined();
    expect(playerFinals.get(FRAMES)).toBe(hostFinals.get(FRAMES));
    expect(spectatorFinals.get(FRAMES)).toBe(hostFinals.get(FRAMES));
  });

  it('a page and a Node peer (node-datachannel) play 1,200 frames through a share link and agree', async () => {
    const { page: hostPage, link } = await hostGame(`nick=alpha&bot=1&frames=${PLAYED + 120}`);
    const room = new URL(link).searchParams.get('room')!;
    const core = await Chip8Core.create(rom, { ports: 2 });
    const conn = connectWebRtcNode({
      signaling: { url: signaling.url, room, peer: 'node-bot' },
      to: 'host',
      channels: SESSION_CHANNELS,
      rtc: nodeRtc({}),
    });
    const client = new NetplayClient(conn, { core, content: chip8Content(rom), clock: systemClock, nick: 'node' });
    cleanups.push(() => client.close());
    let closed: string | undefined;
    client.on('closed', ({ error }) => {
      closed = `${error.code}: ${error.message}`;
    });
    const info = await client.joined();
    expect(info.slot).toBe(1);
    expect(info.hostNick).toBe('alpha');

    // The Node peer plays at 60 Hz like a page (the same bot, the same recording of finals).
    const nodeFinals = new Map<number, number>();
    const bot = new BotInput(3);
    let last = -1;
    const start = performance.now();
    let ran = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (closed !== undefined) {
          clearInterval(timer);
          reject(new Error(`the Node peer's session closed at frame ${client.frame}: ${closed}`));
          return;
        }
        const due = Math.min(Math.floor((performance.now() - start) / (1000 / 60)), ran + 4);
        while (ran < due) {
          ran++;
          client.tick(bot.next());
          const s = client.rollback;
          const d = client.driver;
          if (s === undefined || d === undefined) continue;
          for (let f = last + 1; f <= Math.min(s.confirmedFrame, s.currentFrame); f++) {
            const st = d.stateOf(f);
            if (st !== undefined) nodeFinals.set(f, crc32(st));
            last = f;
          }
        }
        if (last >= PLAYED) {
          clearInterval(timer);
          resolve();
        } else if (performance.now() - start > 60_000) {
          clearInterval(timer);
          reject(new Error(`the Node peer reached only frame ${last} in 60 s`));
        }
      }, 1000 / 120);
    });
    client.close('closed: the client left');
    const h = await waitDone(hostPage, 'host');
    expect(errors).toEqual([]);
    expect(h.error).toBeUndefined();
    const hostFinals = new Map(h.finals);
    const v = compareFinals(nodeFinals, hostFinals);
    expect(v.differing).toEqual([]);
    expect(v.common).toBeGreaterThanOrEqual(FRAMES);
    expect(nodeFinals.get(FRAMES)).toBe(hostFinals.get(FRAMES));
    // The page's stats line saw the Node peer over the data channel.
    expect(await hostPage.textContent('#stats')).toMatch(/ping \d+ ms/);
  });

  it('a page opening ?signal=…&room=… joins a CLI host (netplay host --transport webrtc, a child process) and they agree', async () => {
    const frames = 600;
    const dir = await mkdtemp(join(tmpdir(), 'netplay-e2e-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const finalsPath = join(dir, 'host.finals');
    const room = `cli-${process.pid}`;
    const cli = runCli([
      'host',
      '--transport',
      'webrtc',
      '--signal',
      signaling.url,
      '--room',
      room,
      '--bot',
      '--nick',
      'cli',
      '--seconds',
      '16',
      '--finals',
      finalsPath,
    ]);
    cleanups.push(() => cli.child.exitCode === null && cli.child.kill('SIGKILL'));
    await cli.waitFor(`hosting on webrtc in room "${room}"`, 30_000);
    const page = await open(
      `${rig.site.url}?signal=${encodeURIComponent(signaling.url)}&room=${room}&nick=web&bot=1&frames=${frames + 60}`,
      'page',
    );
    const p = await waitDone(page, 'page');
    expect(errors).toEqual([]);
    expect(p.error).toBeUndefined();
    expect(p.slot).toBe(1);
    expect(await page.textContent('#status')).toMatch(/as web \(P2\), rollback, host cli/);
    expect(await cli.exited(30_000), cli.output().slice(-2000)).toBe(0);
    expect(cli.output()).toMatch(/web joined as P2/);
    const hostFinals = await readFinalsFile(finalsPath);
    const v = compareFinals(new Map(p.finals), hostFinals);
    expect(v.differing).toEqual([]);
    expect(v.common).toBeGreaterThanOrEqual(frames);
    expect(hostFinals.get(frames)).toBe(new Map(p.finals).get(frames));
  });
});

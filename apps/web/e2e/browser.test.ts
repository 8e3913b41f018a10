import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  buildPage,
  compareFinals,
  launchChromium,
  type PageReport,
  ROM_PATH,
  readFinalsFile,
  runCli,
  serveStatic,
  startHost,
  type TestHost,
} from './harness.js';

/** Final frames every comparison needs in common. */
const FRAMES = 600;
/**
 * Frames the pages play: a margin over FRAMES, because a peer records a frame's hash only while
 * its state history still holds it (a spectator keeps two frames), so a loaded machine can skip a
 * few frames at the start, where a page first records.
 */
const PLAYED = FRAMES + 60;

let browser: Browser;
let site: Awaited<ReturnType<typeof serveStatic>>;
let rom: Uint8Array;

beforeAll(async () => {
  rom = new Uint8Array(await readFile(ROM_PATH));
  site = await serveStatic(await buildPage());
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

async function report(page: Page): Promise<PageReport> {
  return page.evaluate(() => {
    const n = window.netplay;
    return { frame: n.frame, finals: [...n.finals], done: n.done, error: n.error, slot: n.slot, hosts: [...n.hosts] };
  });
}

async function waitDone(page: Page): Promise<PageReport> {
  try {
    await page.waitForFunction(() => window.netplay?.done === true, undefined, { timeout: 60_000, polling: 200 });
  } catch (e) {
    const r = await report(page).catch(() => undefined);
    const state = r === undefined ? 'no report' : `frame ${r.frame}, ${r.finals.length} finals, error ${r.error}`;
    throw new Error(`the page did not finish (${state}): ${(e as Error).message}`);
  }
  return report(page);
}

describe('the browser demo in Chromium', () => {
  let host: TestHost | undefined;
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
    await host?.close();
    host = undefined;
  });

  it('a bot player page and a spectator page play 600 frames with the host, and their final states agree', async () => {
    host = await startHost(rom);
    const errors: string[] = [];
    const open = async (query: string): Promise<Page> => {
      const context = await browser.newContext();
      cleanups.push(() => context.close());
      const page = await context.newPage();
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${site.url}?host=${encodeURIComponent(host!.url)}&${query}`, { timeout: 30_000 });
      return page;
    };
    // The spectator joins first, so it watches the game from its first frame.
    const spectator = await open(`nick=watcher&spectate=1&frames=${PLAYED}`);
    await spectator.waitForFunction(() => window.netplay?.nick !== undefined, undefined, { timeout: 30_000 });
    const player = await open(`nick=alice&bot=1&frames=${PLAYED}`);
    const [p, s] = await Promise.all([waitDone(player), waitDone(spectator)]);
    expect(errors).toEqual([]);
    expect(p.error).toBeUndefined();
    expect(s.error).toBeUndefined();
    expect(p.slot).toBe(1);
    expect(s.slot).toBeUndefined();

    const playerFinals = new Map(p.finals);
    const spectatorFinals = new Map(s.finals);
    expect(Math.max(...playerFinals.keys())).toBeGreaterThanOrEqual(PLAYED);
    expect(Math.max(...spectatorFinals.keys())).toBeGreaterThanOrEqual(PLAYED);
    // The host keeps running: it has the frames the pages finished at once they are final.
    const hostFinals = host.finals;
    const deadline = Date.now() + 10_000;
    while (!hostFinals.has(PLAYED) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));

    const vsHost = compareFinals(playerFinals, hostFinals);
    const spectatorVsHost = compareFinals(spectatorFinals, hostFinals);
    expect(vsHost.differing).toEqual([]);
    expect(spectatorVsHost.differing).toEqual([]);
    // At least FRAMES frames in common with the host, and not one differs.
    expect(vsHost.common, `player from ${Math.min(...playerFinals.keys())}`).toBeGreaterThanOrEqual(FRAMES);
    expect(spectatorVsHost.common, `spectator from ${Math.min(...spectatorFinals.keys())}`).toBeGreaterThanOrEqual(
      FRAMES,
    );
    expect(hostFinals.get(FRAMES)).toBe(playerFinals.get(FRAMES));
    expect(hostFinals.get(FRAMES)).toBe(spectatorFinals.get(FRAMES));
  });

  it('a page and a CLI peer (netplay join --bot, a child process) play 600 frames with the host and agree', async () => {
    host = await startHost(rom, 3);
    const port = host.url.slice(host.url.lastIndexOf(':') + 1);
    const dir = await mkdtemp(join(tmpdir(), 'netplay-e2e-'));
    const finalsPath = join(dir, 'cli.finals');
    const cli = runCli([
      'join',
      `127.0.0.1:${port}`,
      '--transport',
      'ws',
      '--players',
      '3',
      '--bot',
      '--nick',
      'cli',
      '--seconds',
      '16',
      '--finals',
      finalsPath,
    ]);
    cleanups.push(() => cli.exited(5_000));
    cleanups.push(() => cli.child.exitCode === null && cli.child.kill('SIGKILL'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    // The CLI is admitted first (the game starts once all three are in), then the page joins.
    const admitted = Date.now() + 30_000;
    while (host.host.peerList().length < 1) {
      if (Date.now() > admitted || cli.child.exitCode !== null)
        throw new Error(`the CLI peer was not admitted:\n${cli.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }

    const context = await browser.newContext();
    cleanups.push(() => context.close());
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${site.url}?host=${encodeURIComponent(host.url)}&nick=web&bot=1&players=3&frames=${PLAYED}`, {
      timeout: 30_000,
    });
    const p = await waitDone(page);
    expect(errors).toEqual([]);
    expect(p.error).toBeUndefined();
    expect(p.slot).toBe(2);

    const pageFinals = new Map(p.finals);
    const hostFinals = host.finals;
    const deadline = Date.now() + 10_000;
    while (!hostFinals.has(PLAYED) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const vsHost = compareFinals(pageFinals, hostFinals);
    expect(vsHost.differing).toEqual([]);
    expect(vsHost.common).toBeGreaterThanOrEqual(FRAMES);

    expect(cli.output()).toMatch(/joined 127\.0\.0\.1:\d+ as cli \(P2\)/);
    // The CLI peer plays on after the page leaves, ends cleanly, and writes the CRC-32 of every
    // final frame it kept (the same hash as the page's and the host's): compared frame by frame.
    expect(await cli.exited(30_000), cli.output().slice(-2000)).toBe(0);
    const cliFinals = await readFinalsFile(finalsPath);
    expect(cli.output()).toContain(`wrote the state hashes of ${cliFinals.size} final frames`);
    expect(Math.max(...cliFinals.keys())).toBeGreaterThanOrEqual(FRAMES);
    const cliVsPage = compareFinals(cliFinals, pageFinals);
    const cliVsHost = compareFinals(cliFinals, hostFinals);
    expect(cliVsPage.differing).toEqual([]);
    expect(cliVsHost.differing).toEqual([]);
    expect(cliVsPage.common, `CLI from ${Math.min(...cliFinals.keys())}`).toBeGreaterThanOrEqual(FRAMES);
    expect(cliVsHost.common).toBeGreaterThanOrEqual(FRAMES);
    // Frame FRAMES, final on all three: one hash.
    expect(cliFinals.get(FRAMES)).toBeDefined();
    expect(cliFinals.get(FRAMES)).toBe(pageFinals.get(FRAMES));
    expect(hostFinals.get(FRAMES)).toBe(pageFinals.get(FRAMES));
  });
});

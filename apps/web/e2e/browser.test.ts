import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildPage,
  compareFinals,
  launchChromium,
  type PageReport,
  ROM_PATH,
  serveStatic,
  startHost,
  type TestHost,
} from './harness.js';

const FRAMES = 600;

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
    return { frame: n.frame, finals: [...n.finals], done: n.done, error: n.error, slot: n.slot };
  });
}

async function waitDone(page: Page): Promise<PageReport> {
  await page.waitForFunction(() => window.netplay?.done === true, undefined, { timeout: 60_000, polling: 200 });
  return report(page);
}

describe('the browser demo in Chromium', () => {
  let host: TestHost | undefined;
  afterAll(async () => {
    await host?.close();
  });

  it('a bot player page and a spectator page play 600 frames with the host, and their final states agree', async () => {
    host = await startHost(rom);
    const errors: string[] = [];
    const open = async (query: string): Promise<Page> => {
      const page = await (await browser.newContext()).newPage();
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${site.url}?host=${encodeURIComponent(host!.url)}&${query}`, { timeout: 30_000 });
      return page;
    };
    // The spectator joins first, so it watches the game from its first frame.
    const spectator = await open(`nick=watcher&spectate=1&frames=${FRAMES}`);
    await spectator.waitForFunction(() => window.netplay?.nick !== undefined, undefined, { timeout: 30_000 });
    const player = await open(`nick=alice&bot=1&frames=${FRAMES}`);
    const [p, s] = await Promise.all([waitDone(player), waitDone(spectator)]);
    expect(errors).toEqual([]);
    expect(p.error).toBeUndefined();
    expect(s.error).toBeUndefined();
    expect(p.slot).toBe(1);
    expect(s.slot).toBeUndefined();

    const playerFinals = new Map(p.finals);
    const spectatorFinals = new Map(s.finals);
    expect(Math.max(...playerFinals.keys())).toBeGreaterThanOrEqual(FRAMES);
    expect(Math.max(...spectatorFinals.keys())).toBeGreaterThanOrEqual(FRAMES);
    // The host keeps running: it has the frames the pages finished at once they are final.
    const hostFinals = host.finals;
    const deadline = Date.now() + 10_000;
    while (!hostFinals.has(FRAMES) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));

    const vsHost = compareFinals(playerFinals, hostFinals);
    const spectatorVsHost = compareFinals(spectatorFinals, hostFinals);
    expect(vsHost.differing).toEqual([]);
    expect(spectatorVsHost.differing).toEqual([]);
    // Every frame up to FRAMES, on all three (the host's state history covers them all).
    expect(vsHost.common, `player from ${Math.min(...playerFinals.keys())}`).toBeGreaterThanOrEqual(FRAMES);
    expect(spectatorVsHost.common, `spectator from ${Math.min(...spectatorFinals.keys())}`).toBeGreaterThanOrEqual(
      FRAMES,
    );
    expect(hostFinals.get(FRAMES)).toBe(playerFinals.get(FRAMES));
    expect(hostFinals.get(FRAMES)).toBe(spectatorFinals.get(FRAMES));
  });
});

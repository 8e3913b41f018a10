import { listenSignaling, type SignalingServer } from '@netplay/transport-webrtc/server';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { compareFinals, type PageRig, pageOpener, startPageRig, waitDone, waitShareLink } from './harness.js';

/*
 * Issues 15 and 17 in Chromium: a page hosts a 3-player rollback game, two pages join through the
 * share link and link to each other directly (WebRTC, in the same room of the signaling server).
 * The hosting page is closed mid-game; the two guests elect a new host and play on, and every
 * frame final on both agrees.
 */

const FRAMES = 900;

let rig: PageRig;
let signaling: SignalingServer;

beforeAll(async () => {
  rig = await startPageRig();
  signaling = await listenSignaling({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await rig?.close();
  await signaling?.close();
});

describe('host hand-over between browser pages', () => {
  const cleanups: (() => unknown)[] = [];
  const errors: string[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    errors.length = 0;
  });
  const open = (url: string, name: string) => pageOpener(rig.browser, cleanups, errors)(url, name);
  const frameOf = (page: Page) => page.evaluate(() => window.netplay?.frame ?? -1);

  it('the hosting page closes mid-game: the two guests play on under one new host and agree', async () => {
    const host = await open(
      `${rig.site.url}?signal=${encodeURIComponent(signaling.url)}&nick=alpha&bot=1&players=3`,
      'host',
    );
    await host.click('#host-game', { timeout: 30_000 });
    const { link, error } = await waitShareLink(host);
    expect(error).toBeUndefined();
    const beta = await open(`${link}&nick=beta&bot=1&players=3&frames=${FRAMES}`, 'beta');
    const gamma = await open(`${link}&nick=gamma&bot=1&players=3&frames=${FRAMES}`, 'gamma');
    for (const p of [beta, gamma])
      await p.waitForFunction(() => (window.netplay?.frame ?? -1) >= 180, undefined, { timeout: 30_000 });
    const at = Math.max(await frameOf(beta), await frameOf(gamma));
    await host.close();
    for (const p of [beta, gamma])
      await p.waitForFunction(
        () => /the new host/.test(document.querySelector('#status')?.textContent ?? ''),
        undefined,
        {
          timeout: 30_000,
        },
      );
    const [b, g] = await Promise.all([waitDone(beta, 'beta'), waitDone(gamma, 'gamma')]);
    expect(errors).toEqual([]);
    expect([b.error, g.error]).toEqual([undefined, undefined]);
    // Exactly one new host: both guests name the same one at the hand-over, and exactly one of
    // them is it. A page that plays on after the elected host stopped at FRAMES and left sees a
    // second hand-over (it is the only player left): that one comes only at the end, on the
    // other page, naming itself; the elected host sees none.
    const first = [b.hosts[0], g.hosts[0]];
    expect(first[0]).toBeDefined();
    expect(first[1]?.nick).toBe(first[0]?.nick);
    expect(first.filter((e) => e?.self).length).toBe(1);
    const reports = { beta: b, gamma: g };
    const newHost = first[0]?.nick as keyof typeof reports;
    expect(['beta', 'gamma']).toContain(newHost);
    expect(reports[newHost].hosts).toHaveLength(1);
    const other = newHost === 'beta' ? 'gamma' : 'beta';
    for (const later of reports[other].hosts.slice(1)) {
      expect(later.nick).toBe(other);
      expect(later.self).toBe(true);
      expect(later.frame).toBeGreaterThanOrEqual(FRAMES - 10);
    }
    expect(reports[other].hosts.length).toBeLessThanOrEqual(2);
    // The status lines say the same (the last hand-over each page saw; main.ts adds " — stopped").
    const status = async (p: Page) => (await p.textContent('#status'))?.replace(/ — stopped$/, '');
    expect(await status(newHost === 'beta' ? beta : gamma)).toBe(`host alpha left: you (${newHost}) are the new host`);
    expect(await status(other === 'beta' ? beta : gamma)).toBe(
      reports[other].hosts.length === 1
        ? `host alpha left: ${newHost} is the new host`
        : `host ${newHost} left: you (${other}) are the new host`,
    );
    const v = compareFinals(new Map(b.finals), new Map(g.finals));
    expect(v.differing).toEqual([]);
    // Both played to FRAMES, well past the hand-over, every frame final on both.
    expect(v.common).toBeGreaterThanOrEqual(FRAMES - 10);
    expect(FRAMES).toBeGreaterThan(at + 300);
  });
});

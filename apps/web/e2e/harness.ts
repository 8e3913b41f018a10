import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Chip8Core } from '@netplay/core-wasm';
import { crc32 } from '@netplay/protocol';
import { NetplayHost, SESSION_CHANNELS } from '@netplay/session';
import { systemClock } from '@netplay/transport';
import { listen } from '@netplay/transport-ws/server';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import { chip8Content } from '../src/content.js';
import { BotInput } from '../src/input.js';

/** The app's directory. */
export const APP_DIR = fileURLToPath(new URL('..', import.meta.url));
/** The embedded Space Racer ROM the page ships. */
export const ROM_PATH = fileURLToPath(new URL('../../cli/assets/spaceracer.ch8', import.meta.url));
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Runs `vite build` into dist/ (the app's vite.config.ts). */
export async function buildPage(): Promise<string> {
  await build({ root: APP_DIR, configFile: join(APP_DIR, 'vite.config.ts'), logLevel: 'warn' });
  return join(APP_DIR, 'dist');
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.ch8': 'application/octet-stream',
};

/** A static file server for `dir` on 127.0.0.1 (a free port). */
export async function serveStatic(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const file = join(dir, path.endsWith('/') ? `${path}index.html` : path);
    if (!file.startsWith(dir)) {
      res.writeHead(403).end();
      return;
    }
    readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body),
      () => res.writeHead(404).end('not found'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An in-process session host over transport-ws, played by a seeded bot at 60 Hz. */
export interface TestHost {
  readonly url: string;
  readonly host: NetplayHost;
  /** CRC-32 of each final frame's state. */
  readonly finals: Map<number, number>;
  close(): Promise<void>;
}

export async function startHost(rom: Uint8Array, players = 2): Promise<TestHost> {
  const core = await Chip8Core.create(rom, { ports: Math.max(2, players) });
  const host = new NetplayHost({ core, content: chip8Content(rom), clock: systemClock, mode: 'rollback', players });
  const listener = await listen({ channels: SESSION_CHANNELS, host: '127.0.0.1', port: 0, maxConnections: 8 });
  const off = host.listen(listener);
  const finals = new Map<number, number>();
  const bot = new BotInput(1);
  let last = -1;
  const timer = setInterval(() => {
    host.tick(bot.next());
    const s = host.rollback;
    const d = host.driver;
    if (s === undefined || d === undefined) return;
    for (let f = last + 1; f <= Math.min(s.confirmedFrame, s.currentFrame); f++) {
      const st = d.stateOf(f);
      if (st !== undefined) finals.set(f, crc32(st));
      last = f;
    }
  }, 1000 / 60);
  return {
    url: `ws://127.0.0.1:${listener.port}`,
    host,
    finals,
    close: async () => {
      clearInterval(timer);
      off();
      host.close('closed: the host left');
      await new Promise((resolve) => setTimeout(resolve, 100));
      listener.close('closed: the host left');
    },
  };
}

/** Launches Debian's chromium headless, loopback only. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    timeout: 30_000,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-background-timer-throttling',
      '--disable-renderer-backgrounding',
      '--disable-backgrounding-occluded-windows',
      // WebRTC host candidates as real addresses, not mDNS `.local` names: a Node peer
      // (node-datachannel) cannot resolve those.
      '--disable-features=WebRtcHideLocalIpsWithMdns',
    ],
  });
}

/** What a page reports through `window.netplay`. */
export interface PageReport {
  readonly frame: number;
  readonly finals: [number, number][];
  readonly done: boolean;
  readonly error: string | undefined;
  readonly slot: number | undefined;
  /** The host hand-overs the page saw, in order. */
  readonly hosts: readonly { nick: string; self: boolean; frame: number }[];
}

/** What a page reports through `window.netplay`, with the share link a hosting page shows. */
export async function pageReport(page: Page): Promise<PageReport & { link: string | undefined }> {
  return page.evaluate(() => {
    const n = window.netplay;
    return {
      frame: n.frame,
      finals: [...n.finals],
      done: n.done,
      error: n.error,
      slot: n.slot,
      link: n.link,
      hosts: [...n.hosts],
    };
  });
}

/** A page's status and stats lines (for a failure's message: where the session stood). */
export async function pageLines(page: Page): Promise<string> {
  return page
    .evaluate(
      () =>
        `status "${document.getElementById('status')?.textContent ?? ''}", stats "${document.getElementById('stats')?.textContent ?? ''}", longest stall ${Math.round((window as unknown as { __stallMs: number }).__stallMs)} ms`,
    )
    .catch((e: Error) => `no lines: ${e.message}`);
}

/** Waits (60 s) until `page` reports done; a timeout's error says how far the page got. */
export async function waitDone(page: Page, name: string): Promise<PageReport> {
  try {
    await page.waitForFunction(() => window.netplay?.done === true, undefined, { timeout: 60_000, polling: 200 });
  } catch (e) {
    const r = await pageReport(page).catch(() => undefined);
    const state = r === undefined ? 'no report' : `frame ${r.frame}, ${r.finals.length} finals, error ${r.error}`;
    throw new Error(`${name} did not finish (${state}; ${await pageLines(page)}): ${(e as Error).message}`);
  }
  return pageReport(page);
}

/**
 * Opens pages in `browser`, each in a browser context of its own (separate storage, as separate
 * browsers would have); closing the context goes into `cleanups`, uncaught page errors (named)
 * into `errors`.
 */
export function pageOpener(
  browser: Browser,
  cleanups: (() => unknown)[],
  errors: string[],
): (url: string, name: string) => Promise<Page> {
  return async (url, name) => {
    const context = await browser.newContext();
    cleanups.push(() => context.close());
    // The page's longest event-loop stall (a 50 ms timer's lateness), for a failure's message.
    await context.addInitScript(() => {
      const w = window as unknown as { __stallMs: number };
      w.__stallMs = 0;
      let last = performance.now();
      setInterval(() => {
        const now = performance.now();
        w.__stallMs = Math.max(w.__stallMs, now - last - 50);
        last = now;
      }, 50);
    });
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(`${name}: ${e.message}`));
    await page.goto(url, { timeout: 30_000 });
    return page;
  };
}

/** The built page served on loopback and Chromium launched: what the page tests start from. */
export interface PageRig {
  /** The built page's directory. */
  readonly dist: string;
  readonly site: { readonly url: string; close(): Promise<void> };
  readonly browser: Browser;
  /** Closes the browser, then the site. */
  close(): Promise<void>;
}

/** Builds the page, serves it and launches Chromium. */
export async function startPageRig(): Promise<PageRig> {
  const dist = await buildPage();
  const site = await serveStatic(dist);
  const browser = await launchChromium();
  return {
    dist,
    site,
    browser,
    close: async () => {
      await browser.close();
      await site.close();
    },
  };
}

/** Waits until a rooms page shows the lobby feed's first snapshot, an empty list. */
export async function waitEmptyRoomList(page: Page): Promise<void> {
  await page.waitForFunction(
    () => /^0 of 0 room\(s\) on /.test(document.getElementById('rooms-note')?.textContent ?? ''),
    undefined,
    { timeout: 30_000 },
  );
}

/** Waits until a hosting page reports its share link (or finished); returns its report. */
export async function waitShareLink(page: Page): Promise<PageReport & { link: string | undefined }> {
  await page.waitForFunction(() => window.netplay?.link !== undefined || window.netplay?.done, undefined, {
    timeout: 30_000,
  });
  return pageReport(page);
}

/**
 * The JavaScript files of a built page that mention a Node-only module: `node-datachannel`, `ws`'s
 * server, Node built-ins (Vite replaces those by `__vite-browser-external`), or Node globals. The
 * browser bundle must have none.
 */
export async function nodeModulesInBundle(dist: string): Promise<string[]> {
  const assets = join(dist, 'assets');
  const found: string[] = [];
  for (const name of await readdir(assets)) {
    if (!name.endsWith('.js')) continue;
    const text = await readFile(join(assets, name), 'utf8');
    for (const marker of [
      'node-datachannel',
      '__vite-browser-external',
      'WebSocketServer',
      'node:',
      'process.versions',
    ])
      if (text.includes(marker)) found.push(`${name}: ${marker}`);
  }
  return found;
}

/** Compares two frame → CRC maps at their common frames: how many are shared and how many differ. */
export function compareFinals(
  a: ReadonlyMap<number, number>,
  b: ReadonlyMap<number, number>,
): { common: number; differing: number[] } {
  let common = 0;
  const differing: number[] = [];
  for (const [f, crc] of a) {
    const other = b.get(f);
    if (other === undefined) continue;
    common++;
    if (other !== crc) differing.push(f);
  }
  return { common, differing };
}

/**
 * Reads the file `netplay join --finals FILE` writes (see the CLI README): lines `FRAME CRC32`
 * (decimal frame, 8 lowercase hex digits) in ascending frame order, `#` lines being comments.
 * Throws on any other line, so a format change cannot pass unnoticed.
 */
export async function readFinalsFile(path: string): Promise<Map<number, number>> {
  const text = await readFile(path, 'utf8');
  const finals = new Map<number, number>();
  if (text === '') return finals;
  if (!text.endsWith('\n')) throw new Error(`${path}: the last line does not end with a newline`);
  let previous = -1;
  for (const [i, line] of text.slice(0, -1).split('\n').entries()) {
    if (line.startsWith('#')) continue;
    const m = /^(0|[1-9]\d*) ([0-9a-f]{8})$/.exec(line);
    if (m === null) throw new Error(`${path}:${i + 1}: not a FRAME CRC32 line: ${JSON.stringify(line)}`);
    const frame = Number(m[1]);
    if (frame <= previous) throw new Error(`${path}:${i + 1}: frame ${frame} after ${previous}`);
    previous = frame;
    finals.set(frame, Number.parseInt(m[2]!, 16));
  }
  return finals;
}

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** A `netplay` CLI child process (from source), its output collected. */
export interface CliPeer {
  readonly child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves once `text` appears in the output (rejects after `timeoutMs`). */
  waitFor(text: string, timeoutMs: number): Promise<void>;
  /** Resolves with the exit code (kills the process after `timeoutMs`). */
  exited(timeoutMs: number): Promise<number | null>;
}

export function runCli(args: readonly string[]): CliPeer {
  const child = spawn(
    process.execPath,
    ['--conditions=@netplay/source', '--import', 'tsx', 'apps/cli/src/main.ts', ...args],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    waitFor: async (text, timeoutMs) => {
      const until = Date.now() + timeoutMs;
      while (!out.includes(text)) {
        if (child.exitCode !== null || Date.now() > until)
          throw new Error(`the CLI did not print "${text}" (exit ${child.exitCode}):\n${out.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    exited: async (timeoutMs) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exit;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

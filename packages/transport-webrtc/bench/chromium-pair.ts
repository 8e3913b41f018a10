/**
 * Chromium↔Chromium over transport-webrtc for the benchmark: bundles chromium-page.ts with Vite,
 * serves it on 127.0.0.1, and opens two pages (two browser contexts of Debian's chromium, through
 * playwright-core) that talk through a real signaling server. `openChromium` resolves to a reason
 * string when Chromium is not there, so the benchmark can skip its rows and say why.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RtcBenchApi } from './chromium-page.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

type Page = import('playwright-core').Page;

/** Calls `rtcBench[name](...args)` in `page`. */
export function call<K extends keyof RtcBenchApi>(
  page: Page,
  name: K,
  ...args: Parameters<RtcBenchApi[K]>
): Promise<Awaited<ReturnType<RtcBenchApi[K]>>> {
  return page.evaluate(
    ([n, a]) => {
      const api = (globalThis as unknown as { rtcBench: Record<string, (...x: unknown[]) => unknown> }).rtcBench;
      return api[n as string]!(...(a as unknown[]));
    },
    [name, args] as const,
  ) as Promise<Awaited<ReturnType<RtcBenchApi[K]>>>;
}

export interface Chromium {
  /** Two fresh pages (separate contexts) with the bench API loaded. */
  pair(): Promise<{ a: Page; b: Page; close(): Promise<void> }>;
  close(): Promise<void>;
}

/** Launches Chromium with the bundled page, or returns why it cannot. */
export async function openChromium(): Promise<Chromium | string> {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`;
  let pw: typeof import('playwright-core');
  let vite: typeof import('vite');
  try {
    pw = await import('playwright-core');
    vite = await import('vite');
  } catch (e) {
    return `playwright-core or vite missing: ${(e as Error).message}`;
  }
  const dir = await mkdtemp(join(tmpdir(), 'netplay-rtc-bench-'));
  await vite.build({
    configFile: false,
    logLevel: 'warn',
    root: dir,
    resolve: { conditions: ['@netplay/source', 'module', 'browser', 'import', 'default'] },
    build: {
      outDir: join(dir, 'out'),
      emptyOutDir: true,
      minify: false,
      lib: {
        entry: fileURLToPath(new URL('./chromium-page.ts', import.meta.url)),
        formats: ['es'],
        fileName: () => 'bench.js',
      },
    },
  });
  const out = join(dir, 'out');
  await writeFile(join(out, 'index.html'), '<!doctype html><script type="module" src="bench.js"></script>');
  const server = createServer((req, res) => {
    const name = req.url === '/bench.js' ? 'bench.js' : 'index.html';
    readFile(join(out, name)).then(
      (body) =>
        res.writeHead(200, { 'content-type': name.endsWith('.js') ? 'text/javascript' : 'text/html' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  let browser: import('playwright-core').Browser;
  try {
    browser = await pw.chromium.launch({
      executablePath: CHROMIUM,
      timeout: 30_000,
      args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  } catch (e) {
    server.close();
    await rm(dir, { recursive: true, force: true });
    return `Chromium did not start: ${(e as Error).message.split('\n')[0]}`;
  }
  const page = async () => {
    const context = await browser.newContext();
    const p = await context.newPage();
    await p.goto(url);
    await p.waitForFunction(() => 'rtcBench' in globalThis);
    return { p, context };
  };
  return {
    async pair() {
      const [x, y] = await Promise.all([page(), page()]);
      return {
        a: x.p,
        b: y.p,
        close: async () => {
          await x.context.close();
          await y.context.close();
        },
      };
    },
    async close() {
      await browser.close();
      server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

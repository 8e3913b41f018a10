/**
 * Listener CPU while one peer floods (issue 13, finding 5): a netplay-ws listener in a child
 * process (so the CPU read is the listener's alone); one client sends 40-byte messages as fast as
 * its socket takes them for 3 s, reconnecting at once whenever it is closed (an attacker would).
 * Figures: the child's CPU (user + system) over the window as a share of one core, as a ratio to
 * the same listener idle over the same window, in the same run; without a budget
 * (`rateLimits: false`, the behaviour before) and with the default one.
 */
import { fork } from 'node:child_process';
import { BenchSuite } from '@netplay/bench-kit';
import { connectNode } from '../src/server.js';

const WINDOW_MS = 3000;
const CHANNELS = [{ name: 'control', kind: 'reliable' }] as const;
const tick = () => new Promise<void>((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Report {
  cpuMicros: number;
  messages: number;
}

async function scenario(
  extra: Record<string, unknown>,
  flood: boolean,
): Promise<{ cpu: number; messages: number; connects: number }> {
  const child = fork(new URL('./listener-child.ts', import.meta.url), [JSON.stringify(extra)], {
    execArgv: ['--conditions=@netplay/source', '--expose-gc', '--import', 'tsx'],
  });
  const next = () =>
    new Promise<Record<string, number>>((r) => child.once('message', (m) => r(m as Record<string, number>)));
  const { port } = (await next()) as { port: number };
  await sleep(300); // start-up done
  child.send('report');
  const before = (await next()) as unknown as Report;
  const t0 = performance.now();
  let connects = 0;
  const msg = new Uint8Array(40);
  if (flood) {
    while (performance.now() - t0 < WINDOW_MS) {
      const c = connectNode(`ws://127.0.0.1:${port}`, { channels: CHANNELS, rateLimits: false });
      c.on('error', () => {});
      connects++;
      while (c.state === 'connecting') await tick();
      while (c.state === 'open' && performance.now() - t0 < WINDOW_MS) {
        for (let i = 0; i < 1000 && c.state === 'open'; i++) c.send('control', msg);
        while (c.state === 'open' && c.bufferedAmount > 1 << 20) await tick();
        await tick();
      }
      c.close();
    }
  } else {
    await sleep(WINDOW_MS);
  }
  const wall = performance.now() - t0;
  child.send('report');
  const after = (await next()) as unknown as Report;
  child.disconnect();
  await new Promise((r) => child.once('exit', r));
  return {
    cpu: (after.cpuMicros - before.cpuMicros) / 1000 / wall,
    messages: after.messages - before.messages,
    connects,
  };
}

const suite = new BenchSuite('transport-ws/flood');
const started = performance.now();
const idle = await scenario({}, false);
const unlimited = await scenario({ rateLimits: false }, true);
const limited = await scenario({}, true);

suite.record({ name: 'listener idle: CPU (share of one core)', value: idle.cpu * 100, unit: '%' });
suite.record({
  name: `one peer flooding, no budget (before): CPU (${unlimited.messages} messages delivered)`,
  value: unlimited.cpu * 100,
  unit: '%',
  baseline: 'listener idle: CPU (share of one core)',
});
suite.record({
  name: `one peer flooding, default budget: CPU (${limited.messages} delivered, ${limited.connects} reconnects)`,
  value: limited.cpu * 100,
  unit: '%',
  baseline: 'listener idle: CPU (share of one core)',
});
suite.record({
  name: 'default budget vs no budget: CPU',
  value: limited.cpu * 100,
  unit: '%',
  baseline: `one peer flooding, no budget (before): CPU (${unlimited.messages} messages delivered)`,
});
suite.finish();
console.log(
  `(CPU of the listener's own process over ${WINDOW_MS / 1000} s windows; ${((performance.now() - started) / 1000).toFixed(1)} s)`,
);

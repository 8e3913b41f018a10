/**
 * Runs the @netplay/transport conformance kit on the MessageChannel transport of
 * ./message-channel-transport.ts, with a tiny describe/it runner of its own (the kit takes any
 * runner that has those two functions). Every one of the kit's tests must pass.
 */
import assert from 'node:assert/strict';
import {
  type ConformanceHarness,
  type ConformanceTestApi,
  defineTransportConformance,
  pollUntil,
} from '@netplay/transport/conformance';
import { messageChannelPair } from './message-channel-transport.js';

const harness: ConformanceHarness = {
  name: 'MessageChannel',
  async pair({ channels, timeouts, rateLimits }) {
    const { client, server, wire } = messageChannelPair({
      channels,
      timeouts,
      ...(rateLimits === undefined ? {} : { rateLimits }),
    });
    return {
      client,
      server,
      until: (predicate, budgetMs) => pollUntil(predicate, budgetMs),
      // No impair(): a MessageChannel cannot lose or reorder, so the kit's loss tests run clean.
      cut() {
        wire.cut = true;
      },
      async dispose() {
        client.dispose();
        server.dispose();
      },
    };
  },
};

/** The smallest runner the kit accepts: collect the tests, then run them one by one. */
const tests: Array<{ name: string; body: () => Promise<void>; timeoutMs: number }> = [];
const prefix: string[] = [];
const api: ConformanceTestApi = {
  describe(name, body) {
    prefix.push(name);
    body();
    prefix.pop();
  },
  it(name, body, timeoutMs = 60_000) {
    tests.push({ name: [...prefix, name].join(' › '), body, timeoutMs });
  },
};
defineTransportConformance(harness, api);

let failed = 0;
const t0 = performance.now();
for (const t of tests) {
  const start = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      t.body(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${t.timeoutMs} ms`)), t.timeoutMs);
      }),
    ]);
    console.log(`  ✓ ${t.name} (${Math.round(performance.now() - start)} ms)`);
  } catch (e) {
    failed++;
    console.log(`  ✗ ${t.name}: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    clearTimeout(timer);
  }
}
console.log(
  `${tests.length - failed} of ${tests.length} conformance tests passed in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);
assert.equal(failed, 0, 'the MessageChannel transport passes the conformance kit');
assert.ok(tests.length >= 11, 'the kit registered its tests');
console.log('ok: the MessageChannel transport passes the conformance kit');

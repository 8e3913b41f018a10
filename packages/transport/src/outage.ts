import type { Connection, Timeouts } from './contract.js';
import type { SimulatedNetwork } from './simulated-network.js';

/** Timeouts {@link expectedOutageEvents} assumes: interrupted after 200 ms of silence, closed after 1 s. */
export const OUTAGE_TIMEOUTS: Timeouts = Object.freeze({ interruptMs: 200, disconnectMs: 1000, connectMs: 1000 });

/**
 * A liveness check for transport authors on the {@link SimulatedNetwork}: records the `interrupted`,
 * `resumed` and `close` events of both ends of an open connection (as `a:…` for `client`, `b:…`
 * for `server`) while the network between `ends` is cut for `outageMs` and then healed for 2 s.
 * Returns them sorted.
 */
export function runOutage(
  net: SimulatedNetwork,
  client: Connection,
  server: Connection,
  ends: readonly [string, string],
  outageMs: number,
): string[] {
  const events: string[] = [];
  for (const [side, c] of [
    ['a', client],
    ['b', server],
  ] as const) {
    c.on('interrupted', () => events.push(`${side}:interrupted`));
    c.on('resumed', () => events.push(`${side}:resumed`));
    c.on('close', (e) => events.push(`${side}:${e.code}`));
  }
  net.cutBoth(ends[0], ends[1]);
  net.advance(outageMs);
  net.heal();
  net.advance(2000);
  return events.sort();
}

/**
 * What {@link runOutage} must record with {@link OUTAGE_TIMEOUTS} for an outage well inside one
 * regime (the silence a peer sees is the outage plus up to a keepalive interval and a latency on
 * either side, so keep clear of the borders): nothing below 100 ms, interrupted and resumed on both
 * ends below 900 ms, interrupted and timeout on both ends beyond.
 */
export function expectedOutageEvents(outageMs: number): string[] {
  if (outageMs < 100) return [];
  if (outageMs < 900) return ['a:interrupted', 'a:resumed', 'b:interrupted', 'b:resumed'];
  return ['a:interrupted', 'a:timeout', 'b:interrupted', 'b:timeout'];
}

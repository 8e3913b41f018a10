import type { ChannelSpec, Clock, Timer } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import type { UdpPeer } from '../src/peer.js';
import { SimUdp } from './sim-harness.js';

const channels: readonly ChannelSpec[] = [{ name: 'bulk', kind: 'reliable' }];
const MESSAGES = 2048;

/** Sends 2 MiB as 1 KiB reliable messages over a 0.05 ms link with `jitterMs` of random delay per packet. */
function transfer(seed: number, jitterMs: number) {
  const sim = new SimUdp(channels, { seed, link: { latencyMs: 0.05, jitterMs } });
  const { client, server } = sim.pair();
  let got = 0;
  server.on('message', () => got++);
  const msg = new Uint8Array(1024);
  const t0 = sim.net.now();
  for (let i = 0; i < MESSAGES; i++) client.send('bulk', msg);
  let minWindow = client.counters.windowBytes;
  const done = sim.net.runUntil(() => {
    minWindow = Math.min(minWindow, client.counters.windowBytes);
    return got === MESSAGES;
  }, 60_000);
  return { done, ms: sim.net.now() - t0, minWindow, spurious: client.counters.spuriousLosses };
}

// The unexplained 0.03× collapse of the loopback bench (issue 16): random per-packet delay (jitter,
// or event-loop stalls on a loaded machine) reorders packets; the ack of a packet that overtook
// others arrived first, the others were declared lost, and each such spurious loss cut the window
// (at most once per smoothed RTT, which the newest-packet samples bias low). Before the fix 2 MiB
// took 413–597 ms of simulated time at 15 ms jitter (seeds 1–8) with the window down to 17–30 KiB,
// against 1.75 ms without jitter. Now a loss whose ack comes in later undoes its cut and widens the
// reordering tolerance, and the delay signal judges the smallest recent RTT, so the transfer runs
// at the 128-packet in-flight cap: 2048 packets / 120 per round trip × ~15 ms ≈ 260 ms.
describe('congestion control under jitter', () => {
  it('2 MiB in 1 KiB messages with 15 ms of random per-packet delay completes within 320 ms of simulated time', () => {
    for (const seed of [1, 2, 3, 4]) {
      const r = transfer(seed, 15);
      expect(r.done, `seed ${seed}`).toBe(true);
      expect(r.ms, `seed ${seed}: ${r.ms.toFixed(1)} ms`).toBeLessThan(320);
      // Jitter alone never holds the window below half its initial 64 KiB.
      expect(r.minWindow, `seed ${seed}`).toBeGreaterThanOrEqual(32 << 10);
      // Some losses were recognised as reordering (the ack came in after all).
      expect(r.spurious, `seed ${seed}`).toBeGreaterThan(0);
    }
  });

  it('without jitter the same transfer takes a few ms (the link is 0.05 ms)', () => {
    const r = transfer(1, 0);
    expect(r.done).toBe(true);
    expect(r.ms).toBeLessThan(5);
    expect(r.spurious).toBe(0);
  });
});

/**
 * A client whose process can be frozen: while frozen its timers and its input wait; on thaw, like
 * an event loop, it runs the timers that fell due first, then reads what arrived.
 */
class Freezer implements Clock {
  private frozen = false;
  private readonly dueTimers: Array<() => void> = [];
  private readonly heldInput: Uint8Array[] = [];
  peer: UdpPeer | undefined;

  constructor(private readonly inner: Clock) {}

  now(): number {
    return this.inner.now();
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    let cancelled = false;
    const t = this.inner.setTimer(delayMs, () => {
      if (cancelled) return;
      if (this.frozen) this.dueTimers.push(() => !cancelled && callback());
      else callback();
    });
    return {
      cancel: () => {
        cancelled = true;
        t.cancel();
      },
    };
  }

  input(d: Uint8Array): void {
    if (this.frozen) this.heldInput.push(d);
    else this.peer!.input(d);
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    for (const fn of this.dueTimers.splice(0)) fn();
    for (const d of this.heldInput.splice(0)) this.peer!.input(d);
  }
}

describe('a frozen process', () => {
  it('a tick that runs late does not take the acks still unread in the socket for loss', () => {
    const sim = new SimUdp(channels, { seed: 5, link: { latencyMs: 20 } });
    const freezer = new Freezer(sim.net.clock);
    const { client, server } = sim.pair('client', undefined, freezer);
    freezer.peer = client;
    sim.clients.set('client', freezer as unknown as UdpPeer); // the server's datagrams go through it
    let got = 0;
    server.on('message', () => got++);
    // Warm up: RTT samples (40 ms) and an idle link.
    client.send('bulk', new Uint8Array(1024));
    sim.net.runUntil(() => got === 1 && client.stats.sendQueueLength === 0, 5000);
    sim.net.advance(500);
    for (let i = 0; i < 16; i++) client.send('bulk', new Uint8Array(1024));
    sim.net.advance(1); // sent
    freezer.freeze();
    sim.net.advance(1000); // the acks arrive (at +40 ms) while the process is frozen for a second
    expect(got).toBe(17);
    freezer.thaw(); // the late tick runs first, then the acks are read
    sim.net.runUntil(() => client.stats.sendQueueLength === 0, 5000);
    expect(client.stats.sendQueueLength).toBe(0);
    expect(client.counters.packetsLost).toBe(0);
    expect(client.stats.retransmissions).toBe(0);
  });
});

describe('a starved process', () => {
  it('whose every timer runs late still retransmits and times out (a late tick is put off once in a row only)', () => {
    const sim = new SimUdp(channels, { seed: 6, link: { latencyMs: 5 } });
    const inner = sim.net.clock;
    // Every timer of the client fires 30 ms after it was due.
    const starved: Clock = {
      now: () => inner.now(),
      setTimer: (ms, fn) => inner.setTimer(ms + 30, fn),
    };
    const { client } = sim.pair('client', undefined, starved);
    sim.net.cut('client', 'server');
    client.send('bulk', new Uint8Array(1024));
    sim.net.advance(2000);
    expect(client.stats.retransmissions).toBeGreaterThan(0);
    let code = '';
    client.on('close', (e) => {
      code = e.code;
    });
    sim.net.advance(10_000);
    expect(code).toBe('timeout');
  });
});

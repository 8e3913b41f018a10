/**
 * A client and a server core joined in process by two {@link Link}s on a {@link ReusingClock}, with
 * the handshake done (used by the steady-state allocation tests and the core benchmark). Nothing
 * here allocates per message: datagrams go into preallocated slots, deferred flushes into a reused
 * array, and the clock reuses its timer records once the rig is open.
 */
import { type ChannelSpec, Prng, type RateLimits } from '@netplay/transport';
import { resolveConfig } from '../src/config.js';
import { newDropCounters } from '../src/counters.js';
import { UdpPeer } from '../src/peer.js';
import { UdpServerCore } from '../src/server.js';
import { Deferred, Link } from './core-harness.js';
import { ReusingClock } from './reusing-clock.js';

/**
 * Rate limits far above the rig's pace (a message every 0.25 ms of virtual time is 4,000 a second,
 * the default budget): the budget is still charged on every datagram and message, so the
 * allocation tests measure it too.
 */
export const STEADY_RATE_LIMITS: RateLimits = { messagesPerSecond: 1e7, bytesPerSecond: 1e12, burstSeconds: 1 };

/** An open client/server pair and the means to drive it. */
export interface CoreRig {
  readonly clock: ReusingClock;
  readonly server: UdpServerCore;
  readonly client: UdpPeer;
  /** Runs deferred work and delivers datagrams both ways until nothing is left. */
  readonly pump: () => void;
  /** Sends `msg` from the client on `channel`, pumps, advances the clock `stepMs` and pumps again. */
  readonly step: (channel: string, msg: Uint8Array, stepMs: number) => void;
}

/**
 * Builds the pair (the server knows the client as `'client'`, random bytes from a {@link Prng}
 * seeded with `seed`), runs the handshake on 1 ms clock steps until the client is open, then
 * switches the clock to reusing its timer records.
 */
export function openCoreRig(channels: readonly ChannelSpec[], seed: number): CoreRig {
  const clock = new ReusingClock();
  const prng = new Prng(seed);
  const config = resolveConfig({ rateLimits: STEADY_RATE_LIMITS });
  const deferred = new Deferred();
  const toServer = new Link(256, config.mtu);
  const toClient = new Link(256, config.mtu);
  const server = new UdpServerCore(
    { clock, defer: deferred.defer, random: (n) => prng.fill(new Uint8Array(n)), output: toClient.push },
    config,
    channels,
    'server',
  );
  const client = UdpPeer.client(
    {
      clock,
      defer: deferred.defer,
      drops: newDropCounters(),
      random: (n) => prng.fill(new Uint8Array(n)),
      output: toServer.push,
    },
    config,
    channels,
    'server',
  );
  const intoServer = (d: Uint8Array): void => server.input(d, 'client');
  const intoClient = (d: Uint8Array): void => client.input(d);
  const pump = (): void => {
    while (deferred.pending > 0 || toServer.count > 0 || toClient.count > 0) {
      deferred.run();
      toServer.deliver(intoServer);
      toClient.deliver(intoClient);
    }
  };
  const step = (channel: string, msg: Uint8Array, stepMs: number): void => {
    client.send(channel, msg);
    pump();
    clock.advance(stepMs);
    pump();
  };
  while (client.state !== 'open') {
    clock.advance(1);
    pump();
  }
  clock.reuse = true;
  return { clock, server, client, pump, step };
}

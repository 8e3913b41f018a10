import { describe, expect, it } from 'vitest';
import {
  ConformanceFailure,
  type ConformanceHarness,
  type ConformancePair,
  type ConformanceTestApi,
  defineTransportConformance,
} from '../src/conformance.js';
import type { Connection, ConnectionEventMap, MessageEvent } from '../src/contract.js';
import type { Handler, Unsubscribe } from '../src/emitter.js';
import { SimulatedNetwork } from '../src/simulated-network.js';

/** A connection that passes everything through except what `tamper` changes. */
function tampered(
  inner: Connection,
  tamper: { message?: (m: MessageEvent, emit: (m: MessageEvent) => void) => void; reason?: (r: string) => string },
): Connection {
  return {
    get state() {
      return inner.state;
    },
    remoteAddress: inner.remoteAddress,
    channels: inner.channels,
    limits: inner.limits,
    stats: inner.stats,
    send: (c, d) => inner.send(c, d),
    close: (r) => inner.close(r),
    on<K extends keyof ConnectionEventMap>(type: K, handler: Handler<ConnectionEventMap, K>): Unsubscribe {
      if (type === 'message' && tamper.message) {
        const h = handler as Handler<ConnectionEventMap, 'message'>;
        return inner.on('message', (m) => tamper.message!(m, h));
      }
      if (type === 'close' && tamper.reason) {
        const h = handler as Handler<ConnectionEventMap, 'close'>;
        return inner.on('close', (e) => h({ ...e, reason: tamper.reason!(e.reason) }));
      }
      return inner.on(type, handler);
    },
  };
}

function harness(wrap: (c: Connection) => Connection, honourRateLimits = true): ConformanceHarness {
  return {
    name: 'tampered',
    async pair({ channels, timeouts, rateLimits }): Promise<ConformancePair> {
      const net = new SimulatedNetwork({ seed: 99, link: { latencyMs: 10 } });
      const limits = honourRateLimits ? rateLimits : false;
      const { client, server } = net.pair('c', 's', {
        channels,
        timeouts,
        ...(limits === undefined ? {} : { rateLimits: limits }),
      });
      return {
        client: wrap(client),
        server: wrap(server),
        until: async (p, ms) => net.runUntil(p, ms),
        impair: (i) =>
          net.setLinkBoth('c', 's', {
            loss: i.loss ?? 0,
            duplicate: i.duplicate ?? 0,
            reorder: i.reorder ?? 0,
            jitterMs: i.jitterMs ?? 0,
          }),
        cut: () => net.cutBoth('c', 's'),
        dispose: async () => {},
      };
    },
  };
}

/** Collects the suite's tests instead of registering them, so they can be run here by name. */
function collect(h: ConformanceHarness): Map<string, () => Promise<void>> {
  const tests = new Map<string, () => Promise<void>>();
  const api: ConformanceTestApi = {
    describe: (_n, body) => body(),
    it: (name, body) => {
      tests.set(name, body);
    },
  };
  defineTransportConformance(h, api);
  return tests;
}

async function failureOf(h: ConformanceHarness, name: string): Promise<unknown> {
  const test = collect(h).get(name);
  if (!test) throw new Error(`no conformance test named "${name}"`);
  try {
    await test();
    return undefined;
  } catch (e) {
    return e;
  }
}

describe('the conformance suite catches broken transports', () => {
  it('registers its tests under one describe', () => {
    expect(collect(harness((c) => c)).size).toBeGreaterThanOrEqual(9);
  });

  it('every test passes on an untampered MemoryConnection', async () => {
    for (const [name, test] of collect(harness((c) => c))) {
      await expect(test(), name).resolves.toBeUndefined();
    }
  });

  it('duplicated deliveries fail the reliable and unreliable tests', async () => {
    const dup = harness((c) =>
      tampered(c, {
        message: (m, emit) => {
          emit(m);
          emit(m);
        },
      }),
    );
    expect(
      await failureOf(dup, 'reliable channels deliver everything, once, in order, under loss, both ways'),
    ).toBeInstanceOf(ConformanceFailure);
    expect(await failureOf(dup, 'unreliable channels never deliver a stale message or a duplicate')).toBeInstanceOf(
      ConformanceFailure,
    );
  });

  it('corrupted bytes fail the large-message test', async () => {
    const flip = harness((c) =>
      tampered(c, {
        message: (m, emit) => {
          const data = m.data.slice();
          if (data.length > 1000) data[500]! ^= 1;
          emit({ channel: m.channel, data });
        },
      }),
    );
    expect(await failureOf(flip, 'messages of 1 MiB and more arrive whole on reliable channels')).toBeInstanceOf(
      ConformanceFailure,
    );
  });

  it('a transport without a rate budget fails the flood test', async () => {
    const unlimited = harness((c) => c, false);
    expect(
      await failureOf(unlimited, 'a peer over its message budget is closed with flood; one within it is not'),
    ).toBeInstanceOf(ConformanceFailure);
  });

  it('a lost close reason fails the close test', async () => {
    const mute = harness((c) => tampered(c, { reason: () => '' }));
    expect(await failureOf(mute, 'close reasons reach the peer, after the messages sent before them')).toBeInstanceOf(
      ConformanceFailure,
    );
  });
});

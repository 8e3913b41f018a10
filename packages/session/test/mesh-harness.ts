import { TestCore } from '@netplay/state/testing';
import type { SimulatedNetwork, Timeouts } from '@netplay/transport';
import type { NetplayClient, SessionError } from '../src/index.js';
import { SESSION_CHANNELS } from '../src/index.js';
import { clientFinals, compareFinals, type Finals, FRAME_MS, hostFinals, inputSource, setup } from './harness.js';

/** Transport timeouts of every link in these tests: a killed host is noticed after 2 s. */
export const LINK_TIMEOUTS: Partial<Timeouts> = { disconnectMs: 2000 };

/** One client as the hand-over tests watch it. */
export interface Watched {
  readonly name: string;
  readonly client: NetplayClient;
  readonly finals: Finals;
  /** Every `host-changed` it saw: the new host's nick. */
  readonly hosts: string[];
  hostLeft: boolean;
  ended: SessionError | undefined;
  /** The scheduler's frame when it ended (`closed` after the hand-over), else undefined. */
  endFrame: number | undefined;
  /** Bytes it received over the direct links its listener accepted (the players that dialed it). */
  readonly accepted: { bytes: number };
  /** Its core. */
  readonly core: TestCore;
}

/**
 * A rollback session of `players` on a seeded simulated network: the host listens on `host`; each
 * client `p1…` has direct links (a listener on its own name, dials from it) unless `noLinks` names it.
 */
export function meshSession(
  seed: number,
  players: number,
  link: { latencyMs: number; jitterMs: number; loss: number },
  opts: {
    noLinks?: ReadonlySet<string>;
    hostLinks?: boolean | { timeoutMs: number };
    /** Runs on the network before the clients join (e.g. cut a pair's direct path). */
    beforeJoin?: (net: SimulatedNetwork) => void;
    /** Run until every client is past the handshake (default true). */
    wait?: boolean;
  } = {},
) {
  const core = () => new TestCore({ players, seed: 7 });
  const env = setup(seed, { players, core: core(), links: opts.hostLinks ?? true }, link, { disconnectMs: 2000 });
  const watched: Watched[] = [];
  /** Bytes the host received on the relay channels (client-to-client messages through the host). */
  const relayed = { bytes: 0 };
  env.net.listenerAt('host')?.on('connection', (c) =>
    c.on('message', ({ channel, data }) => {
      if (channel === 'np-relay' || channel === 'np-relay-u') relayed.bytes += data.length;
    }),
  );
  opts.beforeJoin?.(env.net);
  for (let i = 1; i < players; i++) {
    const name = `p${i}`;
    watched.push(watchClient(env, name, core(), !(opts.noLinks?.has(name) ?? false)));
  }
  if (opts.wait !== false) env.net.runUntil(() => watched.every((w) => w.client.state !== 'handshaking'), 20_000);
  return { ...env, watched, relayed, hostFinal: hostFinals(env.host) };
}

export type MeshEnv = ReturnType<typeof meshSession>;

/**
 * Joins a client from endpoint `name` (nick `nick`, default `name`), with direct links (a listener
 * on `name`, dials from it) when `linked`, and watches it (`host-changed`, `host-left`, `closed`, finals).
 */
export function watchClient(
  env: Pick<ReturnType<typeof setup>, 'net' | 'join'>,
  name: string,
  core: TestCore,
  linked = true,
  nick = name,
): Watched {
  const accepted = { bytes: 0 };
  const links = linked
    ? {
        listen: () => {
          const listener = env.net.listen(name, { channels: SESSION_CHANNELS, timeouts: LINK_TIMEOUTS });
          listener.on('connection', (c) =>
            c.on('message', ({ data }) => {
              accepted.bytes += data.length;
            }),
          );
          return { listener, address: name };
        },
        connect: (address: string) =>
          env.net.connect(name, address, { channels: SESSION_CHANNELS, timeouts: LINK_TIMEOUTS }),
      }
    : undefined;
  const client = env.join(name, { core, nick, ...(links ? { links } : {}) }, LINK_TIMEOUTS);
  const w: Watched = {
    name: nick,
    client,
    finals: clientFinals(client),
    hosts: [],
    hostLeft: false,
    ended: undefined,
    endFrame: undefined,
    accepted,
    core,
  };
  client.on('host-changed', ({ nick }) => w.hosts.push(nick));
  client.on('host-left', () => {
    w.hostLeft = true;
  });
  client.on('closed', ({ error }) => {
    w.ended = error;
    w.endFrame = client.rollback?.currentFrame;
  });
  return w;
}

/** Ticks the host (while `hostAlive`) and every open client for `ms` of simulated time. */
export function play(env: MeshEnv, ms: number, seed: number, hostAlive: () => boolean): void {
  const hi = inputSource(seed);
  const ci = env.watched.map((_, i) => inputSource(seed + 1 + i));
  for (let t = 0; t < ms; t += FRAME_MS) {
    if (hostAlive()) env.host.tick(hi());
    env.watched.forEach((w, k) => {
      if (w.client.state === 'playing') w.client.tick(ci[k]?.());
    });
    env.net.advance(FRAME_MS);
    if (hostAlive()) env.hostFinal.record();
    for (const w of env.watched) if (w.client.state === 'playing') w.finals.record();
  }
}

/** Every pair of peers (the host's finals included) agrees on every frame both hold as final. */
export function pairwiseDiffering(env: MeshEnv): Array<{ a: string; b: string; compared: number; differing: number }> {
  const all: Array<[string, Finals]> = [
    ['host', env.hostFinal],
    ...env.watched.map((w): [string, Finals] => [w.name, w.finals]),
  ];
  const out: Array<{ a: string; b: string; compared: number; differing: number }> = [];
  for (let i = 0; i < all.length; i++)
    for (let j = i + 1; j < all.length; j++) {
      const [a, fa] = all[i]!;
      const [b, fb] = all[j]!;
      out.push({ a, b, ...compareFinals(fa, fb) });
    }
  return out;
}

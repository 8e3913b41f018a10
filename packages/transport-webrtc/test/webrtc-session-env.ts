import {
  NetplayClient,
  type NetplayClientOptions,
  NetplayHost,
  type NetplayHostOptions,
  SESSION_CHANNELS,
} from '@netplay/session';
import { hash64 } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';
import { systemClock } from '@netplay/transport';
import {
  connectWebRtcNode,
  LOOPBACK_RTC,
  listenSignaling,
  listenWebRtcNode,
  type SignalingServer,
  type WebRtcListener,
} from '../src/server.js';

/*
 * The set-up shared by the tests that run @netplay/session, unchanged, over real node-datachannel
 * connections introduced by a real signaling server (webrtc-session.test.ts, session-mesh.test.ts):
 * a signaling server, the host listening in a fresh room as the peer `host`, clients dialing it;
 * inputs generated from (player, frame), a 60 Hz wall-clock ticker and a recorder of final frames.
 * Real time (the system clock). Call closeWebRtcSessions() from afterEach.
 */

export const CONTENT = { coreId: 'test-core', coreVersion: '1.0.0', contentHash: '00112233aabbccdd' };
export const SEED = 7;
export const FRAME_MS = 1000 / 60;

/**
 * The input player `slot` gives at `frame`: a pure function of both, so an offline replay knows
 * every input of every frame without reading anything a peer recorded. Byte 0 tags the player
 * (slot + 1), so an input on the wrong port shows.
 */
export function generated(slot: number, frame: number): Uint8Array {
  const k = Math.floor(frame / 5);
  const x = Math.imul(k + 0x51ed27, 0x9e3779b1) ^ Math.imul(slot + 1, 0x85ebca6b);
  return new Uint8Array([slot + 1, (x >>> 13) & 0xff]);
}

/** One session over WebRTC: its signaling server, room, host (and its listener) and clients. */
export interface WebRtcSessionEnv {
  readonly server: SignalingServer;
  readonly listener: WebRtcListener;
  readonly host: NetplayHost;
  readonly room: string;
  readonly clients: NetplayClient[];
  /** Closed first at teardown, newest first (e.g. the clients' link listeners). */
  readonly closers: Array<() => void | Promise<void>>;
}

let rooms = 0;
const envs: WebRtcSessionEnv[] = [];

/**
 * Starts a signaling server, the host's listener in a fresh room (`${prefix}-pid-n`, as the peer
 * `host`) and a `NetplayHost` (a `TestCore` of `players` and {@link SEED}, the system clock, nick
 * `host`) listening on it.
 */
export async function startWebRtcHost(
  players: number,
  options: Omit<NetplayHostOptions, 'core' | 'content' | 'clock' | 'players' | 'nick'> = {},
  prefix = 'session',
): Promise<WebRtcSessionEnv> {
  const server = await listenSignaling({ rateLimits: false });
  const room = `${prefix}-${process.pid}-${rooms++}`;
  const listener = await listenWebRtcNode({
    signaling: { url: server.url, room, peer: 'host' },
    channels: SESSION_CHANNELS,
    rtc: LOOPBACK_RTC,
  });
  const host = new NetplayHost({
    core: new TestCore({ players, seed: SEED }),
    content: CONTENT,
    clock: systemClock,
    players,
    nick: 'host',
    ...options,
  });
  host.listen(listener);
  const env: WebRtcSessionEnv = { server, listener, host, room, clients: [], closers: [] };
  envs.push(env);
  return env;
}

/** A `NetplayClient` (same core, content and clock as the host) dialing `host` in the env's room as `nick`. */
export function joinWebRtcHost(
  env: WebRtcSessionEnv,
  nick: string,
  players: number,
  options: Omit<NetplayClientOptions, 'core' | 'content' | 'clock' | 'nick'> = {},
): NetplayClient {
  const conn = connectWebRtcNode({
    signaling: { url: env.server.url, room: env.room, peer: nick },
    to: 'host',
    channels: SESSION_CHANNELS,
    rtc: LOOPBACK_RTC,
  });
  const client = new NetplayClient(conn, {
    core: new TestCore({ players, seed: SEED }),
    content: CONTENT,
    clock: systemClock,
    nick,
    ...options,
  });
  env.clients.push(client);
  return client;
}

/** Closes every session started since the last call: its closers, clients, host, listener and server. */
export async function closeWebRtcSessions(): Promise<void> {
  for (const env of envs.splice(0)) {
    for (const f of env.closers.splice(0).reverse()) await f();
    for (const c of env.clients) c.close();
    env.host.close();
    await new Promise((r) => setTimeout(r, 50));
    env.listener.close('test over');
    await env.server.close();
  }
}

/** Ticks every peer at 60 Hz (wall clock, catching up at most 4 frames) until `done()` or `timeoutMs`. */
export async function play(tick: () => void, done: () => boolean, timeoutMs: number): Promise<void> {
  const start = performance.now();
  let ran = 0;
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      const now = performance.now();
      const due = Math.min(Math.floor((now - start) / FRAME_MS), ran + 4);
      while (ran < due) {
        ran++;
        tick();
      }
      if (done()) {
        clearInterval(timer);
        resolve();
      } else if (now - start > timeoutMs) {
        clearInterval(timer);
        reject(new Error(`not done within ${timeoutMs} ms`));
      }
    }, FRAME_MS / 2);
  });
}

/** Polls `cond` every 10 ms; throws naming `what` after `timeoutMs`. */
export async function until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** hash64 of each final frame's savestate (rollback: confirmed and run), by frame. */
export function rollbackFinals(peer: NetplayHost | NetplayClient): {
  record(): void;
  readonly hashes: Map<number, bigint>;
} {
  const hashes = new Map<number, bigint>();
  let checked = -1;
  return {
    hashes,
    record() {
      const d = peer.driver;
      const s = peer.rollback;
      const w = 'spectator' in peer ? peer.spectator : undefined;
      if (d === undefined) return;
      const upTo = s ? Math.min(s.confirmedFrame, s.currentFrame) : (w?.currentFrame ?? -1);
      // Every frame since the last call that the driver still holds (a player's ring keeps the
      // prediction window, a spectator's its last two states: it records after every tick).
      for (let f = Math.max(checked + 1, upTo - 16); f <= upTo; f++) {
        const st = d.stateOf(f);
        if (st !== undefined) hashes.set(f, hash64(st));
      }
      checked = Math.max(checked, upTo);
    },
  };
}

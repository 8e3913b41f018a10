import { hash64 } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';
import { SimulatedNetwork } from '@netplay/transport';
import {
  NetplayClient as Client,
  type NetplayClient,
  NetplayHost,
  SESSION_CHANNELS,
  type SessionMode,
} from '../src/index.js';
import { CONTENT, FRAME_MS } from './harness.js';

/** One connection of a person (a nick from one address): a rejoin is a new incarnation. */
export interface Incarnation {
  readonly nick: string;
  readonly endpoint: string;
  readonly client: NetplayClient;
  readonly spectate: boolean;
  /** hash64 of the state after each frame this incarnation ran (lockstep `frame` events). */
  readonly sums: Map<number, bigint>;
  /** Lockstep: the last frame the client's `final` events covered (-1: none). */
  final: number;
  /** Ticking (false once killed: the process is gone). */
  alive: boolean;
}

export const NEUTRAL = new Uint8Array(2);

/** The state hash of a core, as every peer computes it. */
export function stateHash(core: TestCore): bigint {
  const buf = new Uint8Array(core.stateBytes);
  return hash64(buf.subarray(0, core.saveInto(buf)));
}

/**
 * A host (`mode`, `players` slots, TestCore) on a seeded simulated network, and a way to connect
 * people from addresses of their own: endpoint `"<nick>:<n>"` (the address key is the nick, the
 * port changes with each reconnect, as a restarted process gets a new source port).
 */
export function rejoinWorld(
  seed: number,
  mode: SessionMode,
  players: number,
  link: { latencyMs: number; jitterMs: number; loss: number },
  hostExtra: { password?: string; maxSpectators?: number } = {},
) {
  const net = new SimulatedNetwork({ seed, link });
  const core = () => new TestCore({ players, seed: 7 });
  let salt = seed >>> 0;
  const host = new NetplayHost({
    core: core(),
    content: CONTENT,
    clock: net.clock,
    randomU32: () => {
      salt = (Math.imul(salt, 1664525) + 1013904223) >>> 0;
      return salt;
    },
    fps: 1000 / FRAME_MS,
    mode,
    players,
    ...hostExtra,
  });
  host.listen(net.listen('host', { channels: SESSION_CHANNELS, timeouts: { disconnectMs: 2000 } }));
  const hostSums = new Map<number, bigint>();
  const hostInputs = new Map<number, Uint8Array>();
  host.on('frame', ({ frame, inputs }) => {
    hostSums.set(frame, stateHash(host.core as TestCore));
    hostInputs.set(frame, inputs.slice());
  });
  const ports = new Map<string, number>();
  const connect = (
    nick: string,
    options: { spectate?: boolean; password?: string; from?: string } = {},
  ): Incarnation => {
    const machine = options.from ?? nick;
    const n = (ports.get(machine) ?? 0) + 1;
    ports.set(machine, n);
    const endpoint = `${machine}:${n}`;
    const conn = net.connect(endpoint, 'host', {
      channels: SESSION_CHANNELS,
      timeouts: { disconnectMs: 2000 },
    });
    const c = core();
    const client = new Client(conn, {
      core: c,
      content: CONTENT,
      clock: net.clock,
      nick,
      fps: 1000 / FRAME_MS,
      ...(options.spectate ? { spectate: true } : {}),
      ...(options.password !== undefined ? { password: options.password } : {}),
    });
    const inc: Incarnation = {
      nick,
      endpoint,
      client,
      spectate: options.spectate === true,
      sums: new Map(),
      final: -1,
      alive: true,
    };
    client.on('frame', ({ frame }) => inc.sums.set(frame, stateHash(c)));
    client.on('final', ({ frame }) => {
      inc.final = frame;
    });
    return inc;
  };
  return { net, host, hostSums, hostInputs, connect, core };
}

/**
 * Session builders for the three modes on a SimulatedNetwork, shared by the CHIP-8 tests and the
 * latency benchmark (no test-runner import here).
 */
import type { Core } from '@netplay/state';
import { type Connection, Prng, type SimulatedNetwork } from '@netplay/transport';
import {
  CLIENT_SERVER_CHANNELS,
  ClientServerClient,
  ClientServerServer,
  FRAME_ADVANCE_CHANNELS,
  FrameAdvancePeer,
  LockstepRunner,
  type LockstepScheduler,
  MESH_CHANNELS,
  MeshPeer,
} from '../src/index.js';

export type Mode = 'client-server' | 'mesh' | 'frame-advance';

export interface BuiltPeer<C extends Core> {
  readonly name: string;
  readonly scheduler: LockstepScheduler;
  readonly core: C;
  readonly runner: LockstepRunner<C>;
}

export interface BuiltSession<C extends Core> {
  readonly peers: BuiltPeer<C>[];
  /** Time frame 0 is due. */
  readonly t0: number;
}

const TIMEOUTS = { interruptMs: 100_000, disconnectMs: 1_000_000, connectMs: 100_000 };

export function peerName(i: number): string {
  return String.fromCharCode(65 + i);
}

function connect(
  net: SimulatedNetwork,
  a: string,
  b: string,
  channels: Parameters<SimulatedNetwork['pair']>[2]['channels'],
) {
  const { client, server } = net.pair(a, b, { channels, timeouts: TIMEOUTS, waitMs: 100_000 });
  return { ab: client as Connection, ba: server as Connection };
}

/**
 * Builds an n-peer session of `mode` on `net` (links must be configured before). Peer i drives
 * port i; in client-server mode peer 0 is the server (and a player).
 */
export function buildSession<C extends Core>(
  mode: Mode,
  net: SimulatedNetwork,
  n: number,
  makeCore: () => C,
  opts: { frameMs: number; seed?: number; extraDelayMs?: number; equalize?: boolean; log?: boolean } = { frameMs: 20 },
): BuiltSession<C> {
  const F = opts.frameMs;
  const names = Array.from({ length: n }, (_, i) => peerName(i));
  const conns = names.map(() => new Map<number, Connection>());
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (mode === 'client-server' && i !== 0) continue;
      const channels =
        mode === 'client-server' ? CLIENT_SERVER_CHANNELS : mode === 'mesh' ? MESH_CHANNELS : FRAME_ADVANCE_CHANNELS;
      const { ab, ba } = connect(net, names[j]!, names[i]!, channels);
      conns[j]!.set(i, ab);
      conns[i]!.set(j, ba);
    }
  }
  const t0 = Math.ceil(net.now() / 1000) * 1000 + 1000;
  const probe = makeCore();
  const ports = probe.ports;
  const inputBytes = probe.inputBytes;
  const peers: BuiltPeer<C>[] = [];
  const members = names.map((_, i) => ({ id: i, port: i }));
  let server: ClientServerServer | undefined;
  for (let i = 0; i < n; i++) {
    let scheduler: LockstepScheduler;
    if (mode === 'client-server') {
      if (i === 0) {
        server = new ClientServerServer({
          id: 0,
          port: 0,
          ports,
          inputBytes,
          frameMs: F,
          startMs: t0,
          magic: opts.seed ?? 1,
        });
        scheduler = server;
      } else scheduler = new ClientServerClient({ id: i, server: 0, ports, inputBytes, frameMs: F });
    } else if (mode === 'mesh') {
      scheduler = new MeshPeer({
        id: i,
        members,
        ports,
        inputBytes,
        frameMs: F,
        startMs: t0,
        extraDelayMs: opts.extraDelayMs ?? 0,
      });
    } else {
      scheduler = new FrameAdvancePeer({
        id: i,
        port: i,
        peers: [...conns[i]!.keys()],
        ports,
        inputBytes,
        frameMs: F,
        startMs: t0,
        seed: (opts.seed ?? 1) * 131 + i,
        extraDelayMs: opts.extraDelayMs ?? 0,
        equalize: opts.equalize ?? false,
      });
    }
    const core = i === 0 ? probe : makeCore();
    const runner = new LockstepRunner({ clock: net.clock, scheduler, core, log: opts.log ?? true });
    for (const [j, c] of conns[i]!) runner.addPeer(j, c);
    peers.push({ name: names[i]!, scheduler, core, runner });
  }
  if (server) {
    for (let i = 1; i < n; i++) server.addClient(i, i);
    peers[0]!.runner.pump();
  }
  return { peers, t0 };
}

/**
 * Random input changes for a runner: a new value every 1..`maxHold` frames at a random moment in
 * the frame, between `fromMs` and `untilMs`. `mask` limits each byte's bits; `setBits` are then set
 * in every byte (e.g. 1: no byte is ever 0).
 */
export function randomInputs(
  net: SimulatedNetwork,
  runner: { setLocalInput(input: Uint8Array): void },
  inputBytes: number,
  seed: number,
  frameMs: number,
  fromMs: number,
  untilMs: number,
  maxHold = 8,
  mask = 0xff,
  setBits = 0,
): void {
  const prng = new Prng(seed);
  let t = fromMs;
  while (t < untilMs) {
    t += frameMs * prng.int(1, maxHold + 1) + prng.nextFloat() * frameMs;
    const value = new Uint8Array(inputBytes);
    for (let i = 0; i < inputBytes; i++) value[i] = (prng.int(0, 256) & mask) | setBits;
    net.clock.setTimer(t - net.now(), () => runner.setLocalInput(value));
  }
}

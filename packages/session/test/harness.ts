import { hash64 } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';
import { Prng, SimulatedNetwork, type Timeouts } from '@netplay/transport';
import {
  type ContentInfo,
  NetplayClient,
  type NetplayClientOptions,
  NetplayHost,
  type NetplayHostOptions,
  SESSION_CHANNELS,
  SessionError,
} from '../src/index.js';

export const FRAME_MS = 16;
export const CONTENT: ContentInfo = { coreId: 'test-core', coreVersion: '1.0.0', contentHash: '00112233aabbccdd' };

/** A seeded simulated network with a host listening on `host`. */
export function setup(
  seed: number,
  hostOptions: Partial<Omit<NetplayHostOptions, 'clock'>> = {},
  link: { latencyMs?: number; jitterMs?: number; loss?: number } = { latencyMs: 20, jitterMs: 5, loss: 0.01 },
  /** Timeouts of the host's connections (default: the transport's). */
  hostTimeouts?: { disconnectMs: number },
) {
  const net = new SimulatedNetwork({ seed, link });
  const salt = new Prng(seed ^ 0x5a17);
  const host = new NetplayHost({
    core: new TestCore({ players: 2, seed: 7 }),
    content: CONTENT,
    clock: net.clock,
    randomU32: () => salt.nextU32(),
    fps: 1000 / FRAME_MS,
    ...hostOptions,
  });
  const listener = net.listen('host', {
    channels: SESSION_CHANNELS,
    ...(hostTimeouts ? { timeouts: hostTimeouts } : {}),
  });
  host.listen(listener);
  const closes: SessionError[] = [];
  const join = (
    name: string,
    options: Partial<Omit<NetplayClientOptions, 'clock'>> = {},
    /** The client end's transport timeouts (default: the transport's). */
    timeouts?: Partial<Timeouts>,
  ): NetplayClient => {
    const conn = net.connect(name, 'host', { channels: SESSION_CHANNELS, ...(timeouts ? { timeouts } : {}) });
    const client = new NetplayClient(conn, {
      core: new TestCore({ players: 2, seed: 7 }),
      content: CONTENT,
      clock: net.clock,
      nick: name,
      fps: 1000 / FRAME_MS,
      ...options,
    });
    client.on('closed', ({ error }) => closes.push(error));
    return client;
  };
  return { net, host, join, closes };
}

/** Deterministic per-peer inputs: 2 bytes from a seeded PRNG, changing every few frames. */
export function inputSource(seed: number): () => Uint8Array {
  const rng = new Prng(seed);
  const buf = new Uint8Array(2);
  let hold = 0;
  return () => {
    if (hold-- <= 0) {
      rng.fill(buf);
      hold = rng.int(0, 8);
    }
    return buf;
  };
}

export function asSessionError(e: unknown): SessionError {
  if (e instanceof SessionError) return e;
  throw e;
}

/** Something that plays frames: a host or a client. */
interface Runs {
  readonly driver: { stateOf(frame: number): Uint8Array | undefined } | undefined;
}

/**
 * Records hash64 of the state of every frame once it is final (every input known and used) on a
 * rollback peer, like the demo's agreement check.
 */
export class Finals {
  readonly hashes = new Map<number, bigint>();
  private checked = -1;
  constructor(
    private readonly peer: Runs,
    private readonly frames: () => { current: number; confirmed: number } | undefined,
  ) {}
  record(): void {
    const f = this.frames();
    const d = this.peer.driver;
    if (f === undefined || d === undefined) return;
    const upTo = Math.min(f.confirmed, f.current);
    for (let i = Math.max(this.checked + 1, upTo - 8); i <= upTo; i++) {
      const st = d.stateOf(i);
      if (st !== undefined) this.hashes.set(i, hash64(st));
    }
    this.checked = Math.max(this.checked, upTo);
  }
}

export function hostFinals(host: NetplayHost): Finals {
  return new Finals(host, () =>
    host.rollback ? { current: host.rollback.currentFrame, confirmed: host.rollback.confirmedFrame } : undefined,
  );
}

export function clientFinals(client: NetplayClient): Finals {
  return new Finals(client, () => {
    if (client.rollback) return { current: client.rollback.currentFrame, confirmed: client.rollback.confirmedFrame };
    const f = client.spectator?.currentFrame;
    return f === undefined ? undefined : { current: f, confirmed: f };
  });
}

/** Frames present in both maps with their hashes; and how many differ. */
export function compareFinals(a: Finals, b: Finals): { compared: number; differing: number } {
  let compared = 0;
  let differing = 0;
  for (const [f, h] of a.hashes) {
    const o = b.hashes.get(f);
    if (o === undefined) continue;
    compared++;
    if (o !== h) differing++;
  }
  return { compared, differing };
}

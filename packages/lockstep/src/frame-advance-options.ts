import type { ChannelSpec } from '@netplay/transport';
import { LockstepError } from './errors.js';
import type { PingHistoryOptions } from './latency.js';
import type { LivenessOptions } from './liveness.js';

/** Channels of the frame-advance mode: events and advances reliable and ordered (seed 004), pings apart. */
export const FRAME_ADVANCE_CHANNELS: readonly ChannelSpec[] = Object.freeze([
  { name: 'sched', kind: 'reliable' },
  { name: 'ping', kind: 'unreliable' },
]);

/** Options of {@link FrameAdvancePeer}. */
export interface FrameAdvanceOptions {
  /** This peer's client id, 0..65535: unique, known to every peer (the event-order tie-breaker). */
  readonly id: number;
  /** The port this peer's local input drives (-1 for none). */
  readonly port: number;
  /** Ids of the other peers. */
  readonly peers: readonly number[];
  /** Ports of the core. */
  readonly ports: number;
  /** Input bytes per port. */
  readonly inputBytes: number;
  /** Frame duration in ms (seed 004: 20 ms Amiga PAL frames). */
  readonly frameMs: number;
  /** Time frame 0 starts on this peer's clock (every peer starts a frame at the same time; default 0). */
  readonly startMs?: number;
  /** Seed of the PRNG that draws the events' random order keys. */
  readonly seed: number;
  /** Extra delay in ms added to the latency estimate (seed 004: "a configurable delay"; default 0). */
  readonly extraDelayMs?: number;
  /** Use the largest one-way estimate of the whole session, so every player gets the same latency (default false). */
  readonly equalize?: boolean;
  /** Ms between pings to each peer (default 100). */
  readonly pingIntervalMs?: number;
  /** Ping history options (size, percentile, initial estimate). */
  readonly history?: PingHistoryOptions;
  /** Known one-way times (ms) per peer id, used until pings measure them (seed 004's "complete knowledge"). */
  readonly initialOneWayMs?: Readonly<Record<number, number>>;
  /**
   * Late join (our addition): `true` for a peer joining a running session. Its shell connects it to
   * every peer first; it then asks `host`, gets a port, the state and every event since, and catches up.
   */
  readonly candidate?: boolean;
  /** The peer that admits late joiners (default: the smallest id of the session, i.e. of `peers` and, for a member, this one). */
  readonly host?: number;
  /** Frames of its own events a peer keeps for late joiners (default 600). */
  readonly retainFrames?: number;
  /** State layout hash of late-join deltas (default 0). */
  readonly layoutHash?: bigint;
  /**
   * Liveness by progress (defaults 750 / 5000 ms, as `DEFAULT_TIMEOUTS` of @netplay/transport): a
   * peer whose advance stops while a frame waits on it is `interrupted`, then removed by the host
   * (with quorum); see the README, "Finality and partitions".
   */
  readonly liveness?: LivenessOptions;
}

/** Checks the shape options of a {@link FrameAdvanceOptions}. @throws LockstepError `bad-argument` naming the option. */
export function checkFrameAdvanceShape(options: FrameAdvanceOptions): void {
  const { ports, inputBytes, frameMs } = options;
  if (!Number.isInteger(ports) || ports < 1 || ports > 255)
    throw new LockstepError('bad-argument', `ports must be 1..255, got ${ports}`);
  if (!Number.isInteger(inputBytes) || inputBytes < 1 || inputBytes > 1024)
    throw new LockstepError('bad-argument', `inputBytes must be 1..1024, got ${inputBytes}`);
  if (!(frameMs > 0)) throw new LockstepError('bad-argument', `frameMs must be > 0, got ${frameMs}`);
  if (!Number.isInteger(options.port) || options.port < -1 || options.port >= ports)
    throw new LockstepError('bad-argument', `port ${options.port} is not -1..${ports - 1}`);
  if (!Number.isInteger(options.id) || options.id < 0 || options.id > 0xffff)
    throw new LockstepError('bad-argument', `id must be 0..65535 (an FS-UAE client id), got ${options.id}`);
}

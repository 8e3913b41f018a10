import type { ChannelSpec } from '@netplay/transport';
import { LockstepError } from './errors.js';
import type { PingHistoryOptions } from './latency.js';
import type { LivenessOptions } from './liveness.js';

/**
 * Channels of the mesh mode. Input packets travel reliably (`input`, ordered: join notices share
 * the packet id sequence) and again unreliably (`input-u`, whichever copy arrives first counts;
 * receivers put packets back in id order, as MAMEHub v2 does).
 */
export const MESH_CHANNELS: readonly ChannelSpec[] = Object.freeze([
  { name: 'input', kind: 'reliable' },
  { name: 'input-u', kind: 'unreliable' },
  { name: 'join', kind: 'reliable' },
  { name: 'ping', kind: 'unreliable' },
]);

/** A member of the session: peer id and the port (player) it drives. */
export interface MeshMember {
  /** The member's peer id (0–65535), unique in the session: the id its connection is known by. */
  readonly id: number;
  /** The port (player slot) its input drives: 0 .. ports − 1, one member per port (else `bad-argument`). */
  readonly port: number;
}

/** What the mesh asks its shell to do (connections are the shell's business). */
export type MeshAction =
  /** Try to connect to candidate `peer` at `address`, then call `reportConnect`. */
  | {
      /** `'connect'`: asked of a member when the host announces a candidate. */
      readonly type: 'connect';
      /** The candidate's peer id (0–65535); pass it to `reportConnect` with the outcome. */
      readonly peer: number;
      /** Where to reach it: the candidate's `address` option (default its id in decimal), for the shell to interpret. */
      readonly address: string;
    }
  /** The candidate was rejected: close the connection to `peer`. */
  | {
      /** `'disconnect'`: asked of a member when the host rejects a candidate it was told to connect to. */
      readonly type: 'disconnect';
      /** The rejected candidate's peer id (0–65535). */
      readonly peer: number;
    }
  /** (Candidate) this peer was accepted on `port`. */
  | {
      /** `'accepted'`: the host admitted this candidate; it runs frames once it has loaded the host's state. */
      readonly type: 'accepted';
      /** The port (0 .. ports − 1) the host gave it: the one it asked for (`port` option), else the lowest free one. */
      readonly port: number;
    }
  /** (Candidate) this peer was rejected. */
  | {
      /**
       * `'rejected'`: the host refused this candidate (a member could not reach it, no port was free,
       * the host's wait timed out, another join or a departure was under way); the candidate gives up.
       */
      readonly type: 'rejected';
    };

/** Options of {@link MeshPeer}. */
export interface MeshOptions {
  /** This peer's id. */
  readonly id: number;
  /** The members at the start (this peer included unless it is a candidate). The first one is the host. */
  readonly members: readonly MeshMember[];
  /** `true` for a candidate that joins a running session through `members[0]`. */
  readonly candidate?: boolean;
  /**
   * A candidate's port to ask the host for (0 .. ports − 1; default: none, the host gives the
   * lowest free one). The host rejects the candidate if that port is taken when the vote ends.
   */
  readonly port?: number;
  /** A candidate's address, as members should connect to it (default: its id in decimal). */
  readonly address?: string;
  /** Ports of the core. */
  readonly ports: number;
  /** Input bytes per port, 1..4 (a port's input is one MAMEHub digital mask). */
  readonly inputBytes: number;
  /** Frame duration in ms. */
  readonly frameMs: number;
  /** Time frame 0 is due (default 0). Candidates align themselves on the host. */
  readonly startMs?: number;
  /** Extra delay in ms added to the latency estimate (default 0). */
  readonly extraDelayMs?: number;
  /** Ms between pings (default 100). */
  readonly pingIntervalMs?: number;
  /** Ping history options. */
  readonly history?: PingHistoryOptions;
  /** Frames a new peer's input counts as neutral and is not waited for (MAMEHub: one second; default `round(1000 / frameMs)`). */
  readonly neutralFrames?: number;
  /** Frames between sync blocks (MAMEHub: 30 s; default `round(30000 / frameMs)`). */
  readonly syncIntervalFrames?: number;
  /** The state layout hash written into deltas and checked by joiners (default 0). */
  readonly layoutHash?: bigint;
  /** Page size of the late-join delta (default 4096). */
  readonly pageSize?: number;
  /**
   * Each packet's unreliable copy carries the two previous stream messages too (a bundle, kind 4;
   * default true): a datagram lost on both copies is made good a frame later. Off where the
   * unreliable copies travel a relay whose one unreliable channel drops messages of different
   * origins as stale (the session's star: bundles slowed it, see the session README).
   */
  readonly unreliableBundles?: boolean;
  /** How long the host waits for every member's report on a candidate (default 5000 ms). */
  readonly joinTimeoutMs?: number;
  /** Called for every {@link MeshAction}. */
  readonly onAction?: (action: MeshAction) => void;
  /**
   * Liveness by progress (defaults 750 / 5000 ms, as `DEFAULT_TIMEOUTS` of @netplay/transport): a
   * member whose packets stop reaching beyond the frame waited on is `interrupted`, then removed by
   * the host (with quorum); see the README, "Finality and partitions".
   */
  readonly liveness?: LivenessOptions;
}

/**
 * Checks {@link MeshOptions} (shapes, members' ports, a candidate's port) and returns the sync
 * interval in frames. @throws LockstepError `bad-argument` naming what is wrong.
 */
export function checkMeshOptions(o: MeshOptions): number {
  const { ports, inputBytes, frameMs } = o;
  if (!Number.isInteger(ports) || ports < 1 || ports > 255)
    throw new LockstepError('bad-argument', `ports must be 1..255, got ${ports}`);
  if (!Number.isInteger(inputBytes) || inputBytes < 1 || inputBytes > 4)
    throw new LockstepError('bad-argument', `inputBytes must be 1..4 (one MAMEHub mask), got ${inputBytes}`);
  if (!(frameMs > 0)) throw new LockstepError('bad-argument', `frameMs must be > 0, got ${frameMs}`);
  if (o.members.length === 0) throw new LockstepError('bad-argument', 'members must list the host');
  const syncInterval = o.syncIntervalFrames ?? Math.round(30_000 / frameMs);
  if (!(syncInterval >= 1)) throw new LockstepError('bad-argument', 'syncIntervalFrames must be >= 1');
  const used = new Set<number>();
  for (const m of o.members) {
    if (!Number.isInteger(m.port) || m.port < 0 || m.port >= ports || used.has(m.port))
      throw new LockstepError('bad-argument', `member ${m.id} has a bad or duplicate port ${m.port}`);
    used.add(m.port);
  }
  const want = o.port;
  if (want !== undefined && !(Number.isInteger(want) && want >= 0 && want < ports))
    throw new LockstepError('bad-argument', `port must be 0..${ports - 1}, got ${want}`);
  return syncInterval;
}

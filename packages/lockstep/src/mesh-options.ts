import type { ChannelSpec } from '@netplay/transport';
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
      /** The port (0 .. ports − 1) the host gave it: the lowest free one. */
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

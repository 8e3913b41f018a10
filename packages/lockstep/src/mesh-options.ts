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
  readonly id: number;
  readonly port: number;
}

/** What the mesh asks its shell to do (connections are the shell's business). */
export type MeshAction =
  /** Try to connect to candidate `peer` at `address`, then call `reportConnect`. */
  | { readonly type: 'connect'; readonly peer: number; readonly address: string }
  /** The candidate was rejected: close the connection to `peer`. */
  | { readonly type: 'disconnect'; readonly peer: number }
  /** (Candidate) this peer was accepted on `port`. */
  | { readonly type: 'accepted'; readonly port: number }
  /** (Candidate) this peer was rejected. */
  | { readonly type: 'rejected' };

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

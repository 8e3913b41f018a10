/** Statistics of one remote peer. */
export interface PeerStats {
  readonly peer: string;
  readonly player: number;
  /** Round-trip time in ms, measured by the session's own echo (0 until measured). */
  readonly rttMs: number;
  /** How many frames the peer is estimated to be behind this one (negative: ahead). */
  readonly framesBehind: number;
  /** Time-sync estimate of how far this peer runs ahead of that one (averaged, in frames). */
  readonly framesAhead: number;
  /** Rollbacks caused by that peer's inputs. */
  readonly rollbacks: number;
  /** The deepest rollback (in frames) that peer's inputs caused. */
  readonly maxRollbackDepth: number;
  /** Bytes per second sent to / received from that peer (session messages, averaged over ~1 s). */
  readonly sendBytesPerSec: number;
  readonly receiveBytesPerSec: number;
  /** Session message bytes sent to / received from that peer in total. */
  readonly bytesSent: number;
  readonly bytesReceived: number;
  /** Messages from that peer that were dropped as undecodable. */
  readonly badMessages: number;
  readonly connected: boolean;
}

/** Session-wide statistics. */
export interface SessionStats {
  readonly currentFrame: number;
  readonly confirmedFrame: number;
  readonly rollbacks: number;
  readonly lastRollbackDepth: number;
  readonly maxRollbackDepth: number;
  readonly resimulatedFrames: number;
  /** Calls of `advanceFrame` that could not advance (prediction window full, paused, syncing). */
  readonly stalls: number;
  readonly desyncs: number;
}

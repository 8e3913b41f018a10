/** Statistics of one remote peer. */
export interface PeerStats {
  /** The peer's id (as in `remotes`: what `send` and `receive` use). */
  readonly peer: string;
  /** The slot that peer plays (or would play, while spectating or removed), 0-based. */
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
  /** Bytes per second received from that peer (session messages, averaged over ~1 s). */
  readonly receiveBytesPerSec: number;
  /** Session message bytes sent to / received from that peer in total. */
  readonly bytesSent: number;
  /** Session message bytes received from that peer since the session started (undecodable ones included). */
  readonly bytesReceived: number;
  /** Messages from that peer that were dropped as undecodable. */
  readonly badMessages: number;
  /** False once the link to that peer was dropped (closed, silent past `disconnectMs`, or its player removed). */
  readonly connected: boolean;
}

/** Session-wide statistics. */
export interface SessionStats {
  /** The next frame to simulate (RetroArch's self), from 0. */
  readonly currentFrame: number;
  /**
   * The last final frame: the states of it and of every earlier frame were simulated with every
   * real input and every member holds those inputs (see `P2PSession.confirmedFrame`); 0 at the start
   * (the initial state), it never goes back, and it stops while this peer's group lacks quorum.
   */
  readonly confirmedFrame: number;
  /** Rollbacks so far: loads of an earlier state followed by resimulation (desync repairs included). */
  readonly rollbacks: number;
  /** Frames resimulated by the most recent rollback (0 before the first). */
  readonly lastRollbackDepth: number;
  /** The deepest rollback so far, in frames (at most `maxPrediction` for an input misprediction). */
  readonly maxRollbackDepth: number;
  /** Frames simulated again after rollbacks, in total (the sum of every rollback's depth). */
  readonly resimulatedFrames: number;
  /** Calls of `advanceFrame` that could not advance (prediction window full, paused, syncing). */
  readonly stalls: number;
  /** Checksum mismatches detected so far (one per peer and frame compared; each also fires `desync-detected`). */
  readonly desyncs: number;
}

/** Input latency, stalls and traffic of one peer (its local player), as {@link LockstepRunner.report} returns them. */
export interface PeerReport {
  /** The peer id. */
  readonly peer: number;
  /** The port its player drives (-1 for none). */
  readonly port: number;
  /** Frames run. */
  readonly frames: number;
  /** Input changes whose effect was seen on a frame (the latency samples). */
  readonly latencySamples: number;
  /** Mean input latency in frames: frame the input applied on minus the frame running when it was made. */
  readonly meanLatencyFrames: number;
  /** Largest input latency in frames. */
  readonly maxLatencyFrames: number;
  /** Mean input latency in ms: time the frame applying the input ran minus the time the input was made. */
  readonly meanLatencyMs: number;
  /** Largest input latency in ms. */
  readonly maxLatencyMs: number;
  /**
   * Frames the scheduler held back when they were due (inputs missing, no quorum) for more than half
   * a frame period. A frame that ran late only because the timer fired late, a shorter hold (jitter)
   * and the catch-up burst right after a stall do not count.
   */
  readonly stalls: number;
  /** Total time (ms) spent waiting: for each stalled frame, from its due time (or the previous frame, if later) until it ran. */
  readonly stallMs: number;
  /** Payload bytes handed to the transport. */
  readonly payloadBytesSent: number;
  /** Bytes the transport put on the wire (its `stats.bytesSent`, headers and retransmissions included). */
  readonly wireBytesSent: number;
  /** `wireBytesSent` per second of session time. */
  readonly bytesPerSecond: number;
  /** Session time covered, in ms. */
  readonly elapsedMs: number;
}

/** Frames over which the time-sync estimate {@link Remote.framesAhead} is averaged. */
export const TIME_SAMPLES = 16;

/**
 * What a {@link P2PSession} knows of one remote peer: its link (heard, synchronized, interrupted),
 * what it acknowledged, its timing (frame, advantage, round trip, time-sync samples), the traffic
 * with it, and its checksums not compared yet.
 * @internal
 */
export class Remote {
  connected = true;
  /**
   * It left on its own (it closed its link: `disconnectPeer(peer, 'left')`): it no longer counts
   * in the membership for quorum, since a peer that stopped playing cannot form a rival group.
   */
  leftVoluntarily = false;
  synchronized = false;
  interrupted = false;
  lastHeard: number;
  /**
   * Last time this peer counted as alive for liveness by progress: its confirmed inputs advanced,
   * or a message came while the session was not waiting on it.
   */
  lastUseful: number;
  /** The next frame of its player this peer had confirmed at the last liveness check. */
  progressFrame = -1;
  /** Last time an INPUT message newer (by its send time) than every earlier one came. */
  freshInputAt: number;
  /** The newest INPUT send time seen (u32 ms), and whether one was seen at all. */
  newestSend = 0;
  inputSeen = false;
  /**
   * True while this peer does not take its INPUT's inputs (a decision of the host it has not
   * applied yet, or its player's leave is being decided): it is not suspected of withholding them.
   */
  inputsHeld = false;
  /** Host decisions it reported having applied (its newest INPUT's epoch), mod 256. */
  decisions = 0;
  /** Since when its count of applied host decisions differs from this peer's (−1: it does not). */
  decisionsApartSince = -1;
  /** Set by the liveness check while it is excused (see `decisionsApartSince`). */
  excused = false;
  /** The highest `held` it reported: it holds every player's input for every frame before this. */
  held = 0;
  /** Host: last time it told this (removed) peer so, to answer its messages at most once per interrupt time. */
  removedNoticeAt = Number.NEGATIVE_INFINITY;
  /** Next frame of our local player the peer lacks. */
  ackNext = 0;
  remoteFrame = -1;
  remoteFrameAt = 0;
  remoteAdvantage = 0;
  rttMs = 0;
  rttSamples = 0;
  echoTime = 0;
  echoAt = -1;
  readonly samples = new Float64Array(TIME_SAMPLES);
  sampleCount = 0;
  sampleAt = 0;
  framesAhead = 0;
  bytesSent = 0;
  bytesReceived = 0;
  windowSent = 0;
  windowReceived = 0;
  sendRate = 0;
  receiveRate = 0;
  badMessages = 0;
  /** Host: repairs sent to this peer (mod 256); its checksums from before the last one are stale. */
  repairsSent = 0;
  /** Its checksums of frames our own is not final for yet. */
  readonly sums = new Map<number, bigint>();
  /** Frames whose checksum from this peer was compared already (recent ones; checksums arrive repeatedly). */
  readonly compared = new Set<number>();

  constructor(
    readonly peer: string,
    readonly player: number,
    now: number,
  ) {
    this.lastHeard = now;
    this.lastUseful = now;
    this.freshInputAt = now;
  }
}

/** Frames over which the time-sync estimate {@link Remote.framesAhead} is averaged. */
export const TIME_SAMPLES = 16;
/** Seqs (and frames) remembered per peer for the RTT echo and retransmission. */
export const SEQ_RING = 256;
/** Messages whose first new frame is remembered (the redundancy window is at most this many). */
export const NEW_FROM_RING = 8;
/** Checksums kept per peer (ours and theirs). */
export const SUMS_KEPT = 16;

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
  /** When it was last `resumed` (life again after `interrupted`): a LOST naming it is believed for `disconnectMs` after. */
  resumedAt = Number.NEGATIVE_INFINITY;
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
  /** The newest INPUT seq seen (u16), and whether one was seen at all. */
  newestSeq = 0;
  inputSeen = false;
  /**
   * True while this peer does not take its INPUT's inputs (a decision of the host it has not
   * applied yet, or its player's leave is being decided): it is not suspected of withholding them.
   */
  inputsHeld = false;
  /** Host decisions it reported having applied (its newest INPUT's epoch), mod 256. */
  decisions = 0;
  /** Host: when the decisions it lacks were last (re-)sent to it (−1: it lacks none). */
  decisionsSentAt = -1;
  /** Since when its count of applied host decisions differs from this peer's (−1: it does not). */
  decisionsApartSince = -1;
  /** Set by the liveness check while it is excused (see `decisionsApartSince`). */
  excused = false;
  /** Since when it blocks this peer while stalled by an input this peer holds (−1: it does not). */
  blockedSince = -1;
  /** Since when it is so stalled while a leave of a player this peer lost is undecided (−1: it is not). */
  leaveWaitSince = -1;
  /** Set by the liveness check while it is in that grace (`interruptMs` from `blockedSince`). */
  graced = false;
  /** The highest `held` it reported: it holds every player's input for every frame before this. */
  held = 0;
  /**
   * A player that entered mid-game (ENTER): its entry frame (−1: it played from the start). Until it
   * reports holding every input before that frame ({@link caughtUp}) it may not become the host.
   */
  entryFrame = -1;
  /** False while an entered player has not reported holding every input before its entry frame. */
  caughtUp = true;
  /**
   * The host decision count right after its ENTER (−1: none): INPUT of an older epoch comes from the
   * slot's previous incarnation (relayed late) and is dropped until this incarnation is heard.
   */
  entryEpoch = -1;
  /** False until an INPUT of this incarnation (epoch not before {@link entryEpoch}) arrived. */
  incarnationSeen = true;
  /** Inputs sent to it are XORed against their predecessor only after this frame (it joined from a state there). */
  noRefBefore = 0;
  /** Host: last time it told this (removed) peer so, to answer its messages at most once per interrupt time. */
  removedNoticeAt = Number.NEGATIVE_INFINITY;
  /** Next frame of our local player the peer lacks. */
  ackNext = 0;
  remoteFrame = -1;
  remoteFrameAt = 0;
  remoteAdvantage = 0;
  rttMs = 0;
  rttSamples = 0;
  /** The seq to echo (the newest received from this peer, u16) and when it came (−1: none yet). */
  echoSeq = 0;
  echoAt = -1;
  // ---- the sending side of the input exchange (input-exchange.ts) ----
  /** Messages sent to this peer (their seq is this mod 2^16 before the increment). */
  sendCount = 0;
  /** Per seq & 255: the send time and the full count of the message sent with it. */
  readonly seqSentAt = new Float64Array(SEQ_RING);
  readonly seqSent = new Int32Array(SEQ_RING).fill(-1);
  /** Last time an INPUT went to this peer, and the newest local frame it carried. */
  lastSendAt = Number.NEGATIVE_INFINITY;
  sentUpTo = -1;
  /** Per frame & 255: when that local frame was last put in a message to this peer. */
  readonly frameSentAt = new Float64Array(SEQ_RING);
  /** The first new frame of each of the last {@link NEW_FROM_RING} messages (redundancy). */
  readonly newFrom = new Int32Array(NEW_FROM_RING);
  /** Loss of this peer → us, measured on seqs (0–1), and the loss it reports of us → it. */
  lossIn = 0;
  lossOut = 0;
  /** Seqs expected / received in the current loss window, and the newest full seq received. */
  lossExpected = 0;
  lossReceived = 0;
  newestSeqFull = -1;
  /** Checksum copies still to piggy-back to this peer, and the frame from which the next may go. */
  sumCopies = 0;
  nextSumFrame = 0;
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
  /** Its checksums of frames our own is not final for yet: a ring of frames (−1 free) and 8 bytes each. */
  readonly sumFrames = new Int32Array(SUMS_KEPT).fill(-1);
  readonly sumBytes = new Uint8Array(8 * SUMS_KEPT);
  /** Frames whose checksum from this peer was compared already (a ring; checksums arrive repeatedly). */
  readonly compared = new Int32Array(SUMS_KEPT).fill(-1);
  comparedAt = 0;

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

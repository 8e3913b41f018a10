import {
  DecodeError,
  decodeInputStream,
  encodeInputStream,
  INPUT_STREAM_MAX_FRAMES,
  type InputStreamHeaderInfo,
  inputStreamMaxEncodedSize,
} from '@netplay/protocol';
import type { Clock } from '@netplay/transport';
import { INPUT_CHANNEL } from './channels.js';
import type { ChecksumExchange } from './checksum-exchange.js';
import type { HostRole } from './host-role.js';
import {
  blankInputMessage,
  HELD_ALL,
  type InputMessage,
  inputStreamOf,
  readInputMessage,
  writeInputMessageHead,
  writeInputs,
} from './input-message.js';
import type { PeerSet } from './peer-set.js';
import { NEW_FROM_RING, type Remote } from './remote.js';
import type { TimeSync } from './time-sync.js';
import type { Timeline } from './timeline.js';

/** Longest gap between two INPUT messages to a peer while nothing changes, in frames. */
export const MAX_HEARTBEAT_FRAMES = 6;
/** Messages of redundancy on a clean link: one loss never leaves a gap the next message does not fill. */
const MIN_REDUNDANCY = 2;
/** Seqs per loss-measurement window. */
const LOSS_WINDOW = 32;
/** Most header bytes of an INPUT message before its inputs (fixed 8, varints, echo, epoch, loss, 8 checksums, input header). */
const MAX_HEAD_BYTES = 8 + 5 + 3 + 5 + 1 + 1 + 2 + 80 + 3;

/**
 * The input exchange of a full mesh (wire version 2). Each peer sends each other peer at most one
 * INPUT message per call (once per frame), and fewer when nothing changed:
 * - at once when its input changed (the receiver would mispredict), when checksums are due or a
 *   retransmission is due, and otherwise every `H` frames (the heartbeat), where `H` is the largest
 *   gap that keeps the receiver inside its prediction window at the measured RTT
 *   (`maxPrediction + inputDelay − RTT/2 − 1` frames, 1..{@link MAX_HEARTBEAT_FRAMES}): held inputs
 *   are predicted right, so they only need confirming before the window fills;
 * - a message with new inputs carries them plus those of the last `K` messages, `K` sized by the
 *   loss the receiver reports (2 on a clean link, enough for a 1/1000 residual at the measured loss,
 *   at most 8); a message with nothing new (a heartbeat, a stall) carries everything
 *   unacknowledged, and so does one sent once the oldest unacknowledged frame is older than an RTT
 *   plus the heartbeat (a retransmission);
 * - acks, `held`, the time sync, the RTT echo, the host decision count, the measured loss and the
 *   checksum exchange ride in the same message.
 * Buffers, views and the message record are reused: the steady state allocates nothing.
 * @internal
 */
export class InputExchange {
  private readonly outBuf: Uint8Array;
  private readonly encodeIn: Uint8Array;
  private readonly streamBuf: Uint8Array;
  private readonly decodeOut: Uint8Array;
  private readonly msg: InputMessage = blankInputMessage();
  private readonly streamHeader: InputStreamHeaderInfo = {
    startFrame: 0,
    frameCount: 0,
    inputSize: 0,
    hasReference: false,
  };
  private readonly decodeOptions: {
    header: InputStreamHeaderInfo;
    maxBytes: number;
    offset: number;
    length: number;
    reference: Uint8Array | undefined;
  };
  private readonly streamSpec = { startFrame: 0, frameCount: 0, inputSize: 0 };
  private readonly outViews: Uint8Array[] = [];
  /** Per player: 1 while its inputs are not taken from INPUT messages (its leave is being decided). */
  private readonly frozen = new Uint8Array(16);
  private readonly frameMs: number;
  /**
   * The frame of the last loaded state (0 before any): queues restart there, so a receiver may not
   * keep the input before it, and the first input of a message is XORed against its predecessor
   * only after it.
   */
  refAfter = 0;
  /** Set by the session: the checksum exchange whose data rides in INPUT messages. */
  checksums: ChecksumExchange | undefined;

  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly timeSync: TimeSync,
    private readonly role: HostRole,
    private readonly clock: Clock,
    private readonly localPlayer: number,
    fps: number,
    /** The local input delay (frames), for the heartbeat. */
    private readonly inputDelay: () => number,
    /** Whether the session runs (before, a message goes out at every call). */
    private readonly running: () => boolean,
  ) {
    const ib = timeline.inputBytes;
    const streamMax = inputStreamMaxEncodedSize(INPUT_STREAM_MAX_FRAMES, ib);
    this.outBuf = new Uint8Array(MAX_HEAD_BYTES + streamMax);
    this.streamBuf = new Uint8Array(streamMax + this.outBuf.length);
    this.encodeIn = new Uint8Array(INPUT_STREAM_MAX_FRAMES * ib);
    this.decodeOut = new Uint8Array(INPUT_STREAM_MAX_FRAMES * ib);
    this.decodeOptions = {
      header: this.streamHeader,
      maxBytes: this.decodeOut.length,
      offset: 0,
      length: 0,
      reference: undefined,
    };
    this.frameMs = 1000 / fps;
  }

  /** Stops taking `player`'s inputs from INPUT messages (its leave is being decided). */
  freeze(player: number): void {
    this.frozen[player] = 1;
  }

  /** Takes `player`'s inputs again (a new incarnation entered its slot). */
  unfreeze(player: number): void {
    this.frozen[player] = 0;
  }

  /** The host decision count an INPUT message carries (decoded into the reused record). */
  epochOf(data: Uint8Array): number {
    const t = this.timeline;
    readInputMessage(data, this.msg, t.currentFrame, t.queues[this.localPlayer]!.lastFrame + 1);
    return this.msg.epoch;
  }

  /** Takes every player's inputs again but `player`'s (the old host's report requests are void). */
  unfreezeAllBut(player: number): void {
    for (let p = 0; p < this.timeline.players; p++) if (p !== player) this.frozen[p] = 0;
  }

  /** The heartbeat towards `r` in frames: the longest gap that keeps it inside its prediction window. */
  heartbeatFrames(r: Remote): number {
    if (r.rttSamples === 0) return 1;
    const h = Math.floor(this.timeline.maxPrediction + this.inputDelay() - r.rttMs / 2 / this.frameMs - 1);
    return h < 1 ? 1 : Math.min(h, MAX_HEARTBEAT_FRAMES);
  }

  /** Messages of redundancy for the loss `r` reports: enough that all copies are lost with odds ≤ 1/1000. */
  private redundancy(r: Remote): number {
    const p = r.lossOut;
    if (p < 0.005) return MIN_REDUNDANCY;
    if (p >= 0.5) return NEW_FROM_RING;
    return Math.max(MIN_REDUNDANCY, Math.min(NEW_FROM_RING, Math.ceil(Math.log(0.001) / Math.log(p))));
  }

  /** Whether any local input in (`after`, `upTo`] differs from the one before it. */
  private changed(after: number, upTo: number): boolean {
    const q = this.timeline.queues[this.localPlayer]!;
    if (after < 0) return upTo >= 0;
    let prev = q.input(after);
    if (prev === undefined) return true;
    const n = this.timeline.inputBytes;
    for (let f = after + 1; f <= upTo; f++) {
      const cur = q.input(f);
      if (cur === undefined) return true;
      for (let k = 0; k < n; k++) if (cur[k] !== prev[k]) return true;
      prev = cur;
    }
    return false;
  }

  /** Sends each connected peer an INPUT message when one is due (see the class comment). */
  send(now: number): void {
    const t = this.timeline;
    const q = t.queues[this.localPlayer]!;
    const newest = q.lastFrame;
    const running = this.running();
    for (const r of this.peers.list) {
      if (!r.connected) continue;
      const h = this.heartbeatFrames(r);
      const ackNext = Math.max(r.ackNext, q.oldestFrame);
      const retransmit =
        ackNext <= r.sentUpTo &&
        now - r.frameSentAt[ackNext & 255]! >= r.rttMs + (h + 2) * this.frameMs &&
        r.sentUpTo - ackNext < 256;
      const sums = this.checksums?.due(r) === true;
      const due =
        !running ||
        retransmit ||
        sums ||
        now - r.lastSendAt >= h * this.frameMs - 0.5 ||
        (newest > r.sentUpTo && this.changed(r.sentUpTo, newest));
      if (!due) continue;
      this.sendTo(r, now, newest, ackNext, retransmit, sums);
    }
  }

  private sendTo(r: Remote, now: number, newest: number, ackNext: number, retransmit: boolean, sums: boolean): void {
    const t = this.timeline;
    const q = t.queues[this.localPlayer]!;
    const ib = t.inputBytes;
    const m = this.msg;
    const seqFull = r.sendCount++;
    const slot = seqFull & 255;
    r.seqSent[slot] = seqFull;
    r.seqSentAt[slot] = now;
    // Whole numbers: the encoder writes their low 16 bits.
    m.seq = seqFull & 0xffff;
    m.frame = t.currentFrame;
    m.ack = t.queues[r.player]!.lastFrame + 1;
    const unread = t.unreadFrame;
    m.held = Math.min(unread, HELD_ALL);
    this.timeSync.stamp(m, r, now);
    m.epoch = this.role.epoch;
    m.loss = Math.min(255, Math.round(r.lossIn * 256));
    m.sumCount = 0;
    if (sums) this.checksums!.writeInto(m, r);
    let n = writeInputMessageHead(this.outBuf, m);
    // The inputs: the new ones and those of the last K messages, or all unacknowledged ones again.
    const newFrom = r.sentUpTo + 1;
    r.newFrom[r.sendCount % NEW_FROM_RING] = newFrom;
    let from: number;
    // A retransmission, or a message with nothing new (a heartbeat, a stall): everything unacknowledged.
    if (retransmit || newFrom > newest) from = ackNext;
    else {
      const k = this.redundancy(r);
      from = newFrom;
      for (let i = 1; i < k && i < r.sendCount; i++) {
        const f = r.newFrom[(r.sendCount - i + NEW_FROM_RING) % NEW_FROM_RING]!;
        if (f < from) from = f;
      }
      if (from < ackNext) from = ackNext;
    }
    if (from < q.oldestFrame) from = q.oldestFrame;
    const count = Math.min(newest - from + 1, INPUT_STREAM_MAX_FRAMES);
    if (count > 0) {
      for (let i = 0; i < count; i++) {
        this.encodeIn.set(q.input(from + i)!, i * ib);
        r.frameSentAt[(from + i) & 255] = now;
      }
      const spec = this.streamSpec;
      spec.startFrame = from;
      spec.frameCount = count;
      spec.inputSize = ib;
      // XOR against frame from − 1 only where the receiver surely keeps it (not across a loaded state).
      const ref = from > this.refAfter && from > r.noRefBefore ? q.input(from - 1) : undefined;
      const sn = encodeInputStream(spec, this.encodeIn, ref, this.streamBuf, 0);
      n = writeInputs(this.outBuf, n, this.streamBuf, sn);
      if (from + count - 1 > r.sentUpTo) r.sentUpTo = from + count - 1;
    }
    r.lastSendAt = now;
    this.peers.send(r, INPUT_CHANNEL, this.outView(n));
  }

  /** An INPUT message from `r`: its timing, acks and checksums, then the inputs that extend its player's queue. */
  onInput(r: Remote, data: Uint8Array): void {
    const m = this.msg;
    const t = this.timeline;
    readInputMessage(data, m, t.currentFrame, t.queues[this.localPlayer]!.lastFrame + 1);
    const now = this.clock.now();
    // Liveness by progress: a replayed (old) message is not news; `held` only grows; only a new
    // message tells how many host decisions the sender has applied.
    const fresh = !r.inputSeen || (((m.seq - r.newestSeq) & 0xffff) << 16) >> 16 > 0;
    if (fresh) {
      this.countSeq(r, m.seq);
      r.inputSeen = true;
      r.newestSeq = m.seq;
      r.freshInputAt = now;
      r.decisions = m.epoch;
      r.echoSeq = m.seq;
      r.echoAt = now;
    }
    this.timeSync.observe(r, m, now);
    r.lossOut = m.loss / 256;
    if (m.held > r.held) r.held = m.held;
    if (!r.caughtUp && m.held >= r.entryFrame) r.caughtUp = true;
    if (m.ack > r.ackNext) r.ackNext = m.ack;
    if (m.sumCount > 0) this.checksums?.onChecksums(r, m);
    // Host inputs made after a decision this peer has not applied yet wait for it (they are resent).
    // Inputs this peer does not take now (not the sender's fault: it is not suspected for them).
    r.inputsHeld = (r.peer === this.role.hostPeer && m.epoch !== this.role.epoch) || this.frozen[r.player] === 1;
    if (r.inputsHeld || m.inputCount === 0) return;
    const sn = inputStreamOf(data, m, t.inputBytes, this.streamBuf);
    const q = t.queues[r.player]!;
    let ref: Uint8Array | undefined;
    if (m.inputRef) {
      // The sender XORed the first input against frame start − 1: without it here, the packet is
      // of no use (it starts before what we keep, or after a gap).
      ref = q.input(m.inputStart - 1);
      if (ref === undefined) return;
    }
    this.decodeOptions.reference = ref;
    this.take(r.player, this.streamBuf, 0, sn);
  }

  /** Counts a fresh seq of `r` into its loss window. */
  private countSeq(r: Remote, seq16: number): void {
    const full = r.newestSeqFull < 0 ? seq16 : resolveAfter(seq16, r.newestSeqFull);
    const step = r.newestSeqFull < 0 ? 1 : full - r.newestSeqFull;
    r.newestSeqFull = full;
    r.lossExpected += step;
    r.lossReceived++;
    if (r.lossExpected >= LOSS_WINDOW) {
      const loss = 1 - r.lossReceived / r.lossExpected;
      r.lossIn = r.lossIn * 0.5 + Math.max(0, loss) * 0.5;
      r.lossExpected = 0;
      r.lossReceived = 0;
    }
  }

  /**
   * Decodes an input stream of one player (`bytes[offset, offset + length)`, the protocol codec's
   * packet, whole) and confirms the frames that extend its queue.
   */
  take(player: number, bytes: Uint8Array, offset = 0, length = bytes.length - offset): void {
    this.decodeOptions.offset = offset;
    this.decodeOptions.length = length;
    try {
      decodeInputStream(bytes, this.decodeOut, this.decodeOptions);
    } finally {
      this.decodeOptions.reference = undefined;
    }
    const sh = this.streamHeader;
    if (sh.inputSize !== this.timeline.inputBytes)
      throw new DecodeError('bad-value', 5, `input size ${sh.inputSize}, expected ${this.timeline.inputBytes}`);
    const q = this.timeline.queues[player]!;
    const ib = sh.inputSize;
    const next = q.lastFrame + 1;
    if (sh.startFrame > next) return; // a gap: wait for a packet that starts earlier
    for (let i = Math.max(0, next - sh.startFrame); i < sh.frameCount; i++) {
      this.timeline.confirm(player, sh.startFrame + i, this.decodeOut, i * ib);
    }
  }

  /** The last (up to 128) inputs of `player` before `frame`, as an input stream, so peers that missed some can confirm them. */
  lastInputs(player: number, frame: number): Uint8Array | undefined {
    const q = this.timeline.queues[player]!;
    const from = Math.max(q.oldestFrame, frame - 128, 0);
    const count = frame - from;
    if (count <= 0) return undefined;
    const ib = this.timeline.inputBytes;
    for (let i = 0; i < count; i++) this.encodeIn.set(q.input(from + i)!, i * ib);
    const buf = new Uint8Array(inputStreamMaxEncodedSize(count, ib));
    const n = encodeInputStream({ startFrame: from, frameCount: count, inputSize: ib }, this.encodeIn, undefined, buf);
    return buf.subarray(0, n);
  }

  /** A view of the first `n` bytes of the output buffer, made once per length. */
  private outView(n: number): Uint8Array {
    let v = this.outViews[n];
    if (v === undefined) {
      v = this.outBuf.subarray(0, n);
      this.outViews[n] = v;
    }
    return v;
  }
}

/** The whole number ≡ `v16` (mod 2^16) in (prev − 32768, prev + 32768]. */
function resolveAfter(v16: number, prev: number): number {
  return prev + ((((v16 - prev) & 0xffff) << 16) >> 16);
}

import type { Emitter } from '@netplay/transport';
import { CONTROL_CHANNEL } from './channels.js';
import type { SessionEventMap } from './events.js';
import type { HostRole } from './host-role.js';
import { CHECKSUMS_PER_MESSAGE, type InputMessage } from './input-message.js';
import { encodeByteFrameTail, MessageType } from './messages.js';
import type { PeerSet } from './peer-set.js';
import { type Remote, SUMS_KEPT } from './remote.js';
import type { Timeline } from './timeline.js';

/** Copies of each new set of checksums after the first, and frames between them. */
const COPIES = 2;
const COPY_GAP = 2;
/** Host savestates kept for repairs (those of the last exchange frames). */
const CHECKPOINTS = 4;

/**
 * Desync detection and repair: every `interval` frames, once a frame is final, each peer sends its
 * checksum to all others and compares it with theirs; a mismatch emits `desync-detected`, and the
 * host answers it with its savestate of that frame (kept for the last four exchange frames) or else
 * its newest final one (LOAD, reason repair). Checksums carry the count of repairs their sender
 * applied, so the host ignores the ones computed before its last repair reached that peer.
 *
 * Checksums ride inside INPUT messages (wire version 2): a new checksum goes out in the next three
 * INPUT messages to each peer at least two frames apart, each carrying the sender's latest eight,
 * so a lost one is made up for by its copies or, at worst, by the next exchange. (On the reliable
 * control channel one checksum lost a few times in a row held back every later control message,
 * the host's repair included, for seconds.) Everything is kept in preallocated rings: the exchange
 * allocates nothing (the host's savestate copies reuse their buffers).
 * @internal
 */
export class ChecksumExchange {
  /** Mismatching checksums seen. */
  desyncs = 0;
  /** Own checksums: a ring of frames (−1 free) and their 8 bytes (through a u64 view). */
  private readonly ownFrames = new Int32Array(SUMS_KEPT).fill(-1);
  private readonly ownWords = new BigUint64Array(SUMS_KEPT);
  private readonly ownBytes = new Uint8Array(this.ownWords.buffer);
  private ownAt = 0;
  private readonly cpFrames = new Int32Array(CHECKPOINTS).fill(-1);
  private readonly cpStates: Uint8Array[] = [];
  private readonly cpViews: (Uint8Array | undefined)[] = [];
  private cpAt = 0;
  private repairsApplied = 0;
  private nextChecksumFrame: number;

  constructor(
    /** Exchange interval in frames (0: off). */
    readonly interval: number,
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly role: HostRole,
    private readonly stateSource: ((frame: number) => Uint8Array | undefined) | undefined,
    private readonly emitter: Emitter<SessionEventMap>,
  ) {
    this.nextChecksumFrame = interval;
  }

  /** Whether the checksum of the state of `frame` is exchanged. */
  needs(frame: number): boolean {
    return this.interval > 0 && frame % this.interval === 0;
  }

  /** Takes our checksums of the exchange frames that became final, compares, and queues them for every peer. */
  exchange(other: number): void {
    if (this.interval === 0) return;
    let fresh = false;
    while (this.nextChecksumFrame < other) {
      const f = this.nextChecksumFrame;
      this.nextChecksumFrame += this.interval;
      // Copied as bytes: a bigint read from the timeline's ring would be a new heap object.
      const slot = this.ownAt;
      if (!this.timeline.checksumInto(f, this.ownBytes, slot * 8)) continue;
      fresh = true;
      this.ownAt = (this.ownAt + 1) % SUMS_KEPT;
      this.ownFrames[slot] = f;
      if (this.role.isHost) this.keepCheckpoint(f);
      for (const r of this.peers.list) {
        if (!r.connected) continue;
        for (let i = 0; i < SUMS_KEPT; i++) {
          if (r.sumFrames[i] !== f) continue;
          r.sumFrames[i] = -1;
          this.compare(r, f, slot, r.sumBytes, i * 8);
        }
      }
    }
    if (!fresh) return;
    const now = this.timeline.currentFrame;
    for (const r of this.peers.list) {
      r.sumCopies = COPIES + 1;
      r.nextSumFrame = now;
    }
  }

  /** Whether a message to `r` now should carry checksums (then {@link writeInto} fills them). */
  due(r: Remote): boolean {
    return r.sumCopies > 0 && this.timeline.currentFrame >= r.nextSumFrame;
  }

  /** Puts our latest checksums (newest first) into `m` and counts one copy sent to `r`. */
  writeInto(m: InputMessage, r: Remote): void {
    let n = 0;
    for (let k = 1; k <= SUMS_KEPT && n < CHECKSUMS_PER_MESSAGE; k++) {
      const slot = (this.ownAt - k + SUMS_KEPT) % SUMS_KEPT;
      const f = this.ownFrames[slot]!;
      if (f < 0) break;
      m.sumFrames[n] = f;
      for (let b = 0; b < 8; b++) m.sumBytes[n * 8 + b] = this.ownBytes[slot * 8 + b]!;
      n++;
    }
    m.sumCount = n;
    m.sumRepairs = this.repairsApplied;
    r.sumCopies--;
    r.nextSumFrame = this.timeline.currentFrame + COPY_GAP;
  }

  /** The checksums of an INPUT message from `r`: each is compared now, or kept until our own of that frame is final. */
  onChecksums(r: Remote, m: InputMessage): void {
    // Computed before our last repair reached that peer (or before the one just sent): stale.
    if (this.role.isHost && m.sumRepairs !== r.repairsSent) return;
    // Oldest first: the first mismatch is the one reported (and repaired).
    for (let i = m.sumCount - 1; i >= 0; i--) {
      const frame = m.sumFrames[i]!;
      if (this.wasCompared(r, frame)) continue;
      const mine = this.ownSlot(frame);
      if (mine >= 0) {
        this.compare(r, frame, mine, m.sumBytes, i * 8);
        // A repair just went out: the rest of this message is that peer's diverged run.
        if (this.role.isHost && m.sumRepairs !== r.repairsSent) return;
      } else if (frame >= this.nextChecksumFrame) this.keepTheirs(r, frame, m.sumBytes, i * 8);
    }
  }

  /** After loading a host state at `frame` (`repair`: one sent to repair a desync): checksums before it are history. */
  afterLoad(frame: number, repair: boolean): void {
    // Checksums from the loaded frame on are recomputed by the replay and sent again.
    if (this.interval > 0) this.nextChecksumFrame = (Math.floor(frame / this.interval) + 1) * this.interval;
    // After a repair, our older checksums are those of the diverged run: never send them again.
    for (let i = 0; i < SUMS_KEPT; i++) {
      const f = this.ownFrames[i]!;
      if (f >= 0 && (repair || f >= frame)) this.ownFrames[i] = -1;
    }
    for (const r of this.peers.list) {
      for (let i = 0; i < SUMS_KEPT; i++) {
        if (r.sumFrames[i]! >= 0 && r.sumFrames[i]! <= frame) r.sumFrames[i] = -1;
        if (r.compared[i]! >= frame) r.compared[i] = -1;
      }
      r.sumCopies = 0;
    }
    if (repair) this.repairsApplied = (this.repairsApplied + 1) & 0xff;
  }

  private ownSlot(frame: number): number {
    for (let i = 0; i < SUMS_KEPT; i++) if (this.ownFrames[i] === frame) return i;
    return -1;
  }

  private wasCompared(r: Remote, frame: number): boolean {
    for (let i = 0; i < SUMS_KEPT; i++) if (r.compared[i] === frame) return true;
    return false;
  }

  private keepTheirs(r: Remote, frame: number, bytes: Uint8Array, at: number): void {
    let slot = -1;
    let oldest = 0;
    for (let i = 0; i < SUMS_KEPT; i++) {
      const f = r.sumFrames[i]!;
      if (f === frame || f < 0) {
        slot = i;
        break;
      }
      if (slot < 0 || f < oldest) {
        slot = i;
        oldest = f;
      }
    }
    r.sumFrames[slot] = frame;
    for (let b = 0; b < 8; b++) r.sumBytes[slot * 8 + b] = bytes[at + b]!;
  }

  /** Keeps the host's savestate of exchange frame `f` (in a reused buffer), to repair at exactly that frame. */
  private keepCheckpoint(f: number): void {
    const st = this.stateSource?.(f);
    if (st === undefined) return;
    const slot = this.cpAt;
    this.cpAt = (this.cpAt + 1) % CHECKPOINTS;
    let buf = this.cpStates[slot];
    if (buf === undefined || buf.length < st.length) {
      buf = new Uint8Array(st.length);
      this.cpStates[slot] = buf;
      this.cpViews[slot] = undefined;
    }
    buf.set(st);
    let view = this.cpViews[slot];
    if (view === undefined || view.length !== st.length) {
      view = buf.subarray(0, st.length);
      this.cpViews[slot] = view;
    }
    this.cpFrames[slot] = f;
  }

  private checkpoint(frame: number): Uint8Array | undefined {
    for (let i = 0; i < CHECKPOINTS; i++) if (this.cpFrames[i] === frame) return this.cpViews[i];
    return undefined;
  }

  private compare(r: Remote, frame: number, mineSlot: number, theirs: Uint8Array, at: number): void {
    r.compared[r.comparedAt] = frame;
    r.comparedAt = (r.comparedAt + 1) % SUMS_KEPT;
    let same = true;
    for (let b = 0; b < 8; b++) if (this.ownBytes[mineSlot * 8 + b] !== theirs[at + b]) same = false;
    if (same) return;
    this.desyncs++;
    const remote = new DataView(theirs.buffer, theirs.byteOffset + at, 8).getBigUint64(0);
    this.emitter.emit('desync-detected', { frame, peer: r.peer, local: this.ownWords[mineSlot]!, remote });
    if (!this.role.isHost) return;
    const t = this.timeline;
    // The host's own state of that very frame when it kept it, else its newest final state.
    let at2 = frame;
    let state = this.checkpoint(frame);
    if (state === undefined) {
      at2 = Math.min(t.otherFrame, t.currentFrame);
      state = this.stateSource?.(at2);
    }
    if (state === undefined) return;
    r.repairsSent = (r.repairsSent + 1) & 0xff;
    // Checksums of that peer kept for frames we had not finalized yet came from its diverged run:
    // compared later, they would ask for a second repair. Its checksums after the repair come
    // with the new count.
    this.peers.send(r, CONTROL_CHANNEL, encodeByteFrameTail(MessageType.Load, 0, at2, state));
  }
}

import type { Emitter } from '@netplay/transport';
import { CONTROL_CHANNEL, INPUT_CHANNEL } from './channels.js';
import type { SessionEventMap } from './events.js';
import type { HostRole } from './host-role.js';
import {
  CHECKSUMS_PER_MESSAGE,
  decodeChecksums,
  encodeByteFrameTail,
  encodeChecksums,
  type FrameChecksum,
  MessageType,
} from './messages.js';
import type { PeerSet } from './peer-set.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/** Own checksums kept (sent again with each new one) and peers' checksums awaiting ours. */
const KEPT = 16;
/** Copies of each CHECKSUM message after the first, and frames between them. */
const COPIES = 2;
const COPY_GAP = 2;

/**
 * Desync detection and repair: every `interval` frames, once a frame is final, each peer sends its
 * checksum to all others (CHECKSUM) and compares it with theirs; a mismatch emits
 * `desync-detected`, and the host answers it with its savestate of that frame (kept for the last
 * four exchange frames) or else its newest final one (LOAD, reason repair). Checksums carry the
 * count of repairs their sender applied, so the host ignores the ones computed before its last
 * repair reached that peer.
 *
 * CHECKSUMs travel on the unreliable input channel, each sent three times two frames apart and
 * carrying the sender's latest eight checksums: a lost one is made up for by its copies or, at
 * worst, by the next exchange. (On the reliable control channel, one checksum lost a few
 * times in a row held back every later control message, the host's repair included, for seconds:
 * head-of-line blocking behind the retransmission backoff.)
 * @internal
 */
export class ChecksumExchange {
  /** Mismatching checksums seen. */
  desyncs = 0;
  private readonly ownSums = new Map<number, bigint>();
  private readonly checkpoints = new Map<number, Uint8Array>();
  private repairsApplied = 0;
  private nextChecksumFrame: number;
  /** The last CHECKSUM message, its copies still to send and the frame of the next one. */
  private lastMessage: Uint8Array | undefined;
  private copiesLeft = 0;
  private nextCopyFrame = 0;

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

  /** Sends our checksums of the exchange frames that became final, and compares. */
  exchange(other: number): void {
    if (this.interval === 0) return;
    let fresh = false;
    while (this.nextChecksumFrame < other) {
      const f = this.nextChecksumFrame;
      this.nextChecksumFrame += this.interval;
      const sum = this.timeline.checksumOf(f);
      if (sum === undefined) continue;
      fresh = true;
      this.ownSums.set(f, sum);
      if (this.role.isHost) {
        // Keep the host's savestate of the last few exchange frames, to repair at exactly that frame.
        const st = this.stateSource?.(f);
        if (st !== undefined) this.checkpoints.set(f, st.slice());
        if (this.checkpoints.size > 4) this.checkpoints.delete(this.checkpoints.keys().next().value!);
      }
      if (this.ownSums.size > KEPT) this.ownSums.delete(this.ownSums.keys().next().value!);
      for (const r of this.peers.list) {
        if (!r.connected) continue;
        const theirs = r.sums.get(f);
        if (theirs !== undefined) {
          r.sums.delete(f);
          this.compare(r, f, sum, theirs);
        }
      }
    }
    const now = this.timeline.currentFrame;
    if (fresh) {
      this.lastMessage = encodeChecksums(this.repairsApplied, this.latest());
      this.copiesLeft = COPIES;
      this.nextCopyFrame = now + COPY_GAP;
    } else if (this.copiesLeft > 0 && now >= this.nextCopyFrame) {
      this.copiesLeft--;
      this.nextCopyFrame = now + COPY_GAP;
    } else return;
    const msg = this.lastMessage!;
    for (const r of this.peers.list) if (r.connected) this.peers.send(r, INPUT_CHANNEL, msg);
  }

  /** A CHECKSUM from `r`: each checksum is compared now, or kept until our own of that frame is final. */
  onMessage(r: Remote, data: Uint8Array): void {
    const m = decodeChecksums(data);
    // Oldest first: the first mismatch is the one reported (and repaired).
    for (let i = m.sums.length - 1; i >= 0; i--) {
      // Computed before our last repair reached that peer (or before the one just sent): stale.
      if (this.role.isHost && m.repairs !== r.repairsSent) return;
      const { frame, checksum } = m.sums[i]!;
      if (r.compared.has(frame)) continue;
      const mine = this.ownSums.get(frame);
      if (mine !== undefined) this.compare(r, frame, mine, checksum);
      else if (frame >= this.nextChecksumFrame) {
        r.sums.set(frame, checksum);
        if (r.sums.size > KEPT) r.sums.delete(r.sums.keys().next().value!);
      }
    }
  }

  /** After loading a host state at `frame` (`repair`: one sent to repair a desync): checksums before it are history. */
  afterLoad(frame: number, repair: boolean): void {
    // Checksums from the loaded frame on are recomputed by the replay and sent again.
    if (this.interval > 0) this.nextChecksumFrame = (Math.floor(frame / this.interval) + 1) * this.interval;
    // After a repair, our older checksums are those of the diverged run: never send them again.
    for (const f of [...this.ownSums.keys()]) if (repair || f >= frame) this.ownSums.delete(f);
    for (const r of this.peers.list) {
      for (const f of [...r.sums.keys()]) if (f <= frame) r.sums.delete(f);
      for (const f of [...r.compared]) if (f >= frame) r.compared.delete(f);
    }
    if (repair) this.repairsApplied = (this.repairsApplied + 1) & 0xff;
    this.copiesLeft = 0;
  }

  /** Our newest checksums, newest first (at most {@link CHECKSUMS_PER_MESSAGE}). */
  private latest(): FrameChecksum[] {
    const all = [...this.ownSums];
    const out: FrameChecksum[] = [];
    for (let i = all.length - 1; i >= 0 && out.length < CHECKSUMS_PER_MESSAGE; i--)
      out.push({ frame: all[i]![0], checksum: all[i]![1] });
    return out;
  }

  private compare(r: Remote, frame: number, mine: bigint, theirs: bigint): void {
    r.compared.add(frame);
    if (r.compared.size > KEPT) r.compared.delete(r.compared.values().next().value!);
    if (mine === theirs) return;
    this.desyncs++;
    this.emitter.emit('desync-detected', { frame, peer: r.peer, local: mine, remote: theirs });
    if (!this.role.isHost) return;
    const t = this.timeline;
    // The host's own state of that very frame when it kept it, else its newest final state.
    let at = frame;
    let state = this.checkpoints.get(frame);
    if (state === undefined) {
      at = Math.min(t.otherFrame, t.currentFrame);
      state = this.stateSource?.(at);
    }
    if (state === undefined) return;
    r.repairsSent = (r.repairsSent + 1) & 0xff;
    this.peers.send(r, CONTROL_CHANNEL, encodeByteFrameTail(MessageType.Load, 0, at, state));
  }
}

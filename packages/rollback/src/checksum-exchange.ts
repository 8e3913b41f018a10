import type { Emitter } from '@netplay/transport';
import { CONTROL_CHANNEL } from './channels.js';
import type { SessionEventMap } from './events.js';
import type { HostRole } from './host-role.js';
import { decodeChecksum, encodeByteFrameTail, encodeChecksum, MessageType } from './messages.js';
import type { PeerSet } from './peer-set.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/**
 * Desync detection and repair: every `interval` frames, once a frame is final, each peer sends its
 * checksum to all others (CHECKSUM) and compares it with theirs; a mismatch emits
 * `desync-detected`, and the host answers it with its savestate of that frame (kept for the last
 * four exchange frames) or else its newest final one (LOAD, reason repair). Checksums carry the
 * count of repairs their sender applied, so the host ignores the ones computed before its last
 * repair reached that peer.
 * @internal
 */
export class ChecksumExchange {
  /** Mismatching checksums seen. */
  desyncs = 0;
  private readonly ownSums = new Map<number, bigint>();
  private readonly checkpoints = new Map<number, Uint8Array>();
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

  /** Sends our checksums of the exchange frames that became final, and compares. */
  exchange(other: number): void {
    if (this.interval === 0) return;
    while (this.nextChecksumFrame < other) {
      const f = this.nextChecksumFrame;
      this.nextChecksumFrame += this.interval;
      const sum = this.timeline.checksumOf(f);
      if (sum === undefined) continue;
      this.ownSums.set(f, sum);
      if (this.role.isHost) {
        // Keep the host's savestate of the last few exchange frames, to repair at exactly that frame.
        const st = this.stateSource?.(f);
        if (st !== undefined) this.checkpoints.set(f, st.slice());
        if (this.checkpoints.size > 4) this.checkpoints.delete(this.checkpoints.keys().next().value!);
      }
      if (this.ownSums.size > 16) this.ownSums.delete(this.ownSums.keys().next().value!);
      const msg = encodeChecksum(f, sum, this.repairsApplied);
      for (const r of this.peers.list) {
        if (!r.connected) continue;
        this.peers.send(r, CONTROL_CHANNEL, msg);
        const theirs = r.sums.get(f);
        if (theirs !== undefined) {
          r.sums.delete(f);
          this.compare(r, f, sum, theirs);
        }
      }
    }
  }

  /** A CHECKSUM from `r`: compared now, or kept until our own checksum of that frame is final. */
  onMessage(r: Remote, data: Uint8Array): void {
    const m = decodeChecksum(data);
    // Computed before our last repair reached that peer: stale.
    if (this.role.isHost && m.repairs !== r.repairsSent) return;
    const mine = this.ownSums.get(m.frame);
    if (mine !== undefined) this.compare(r, m.frame, mine, m.checksum);
    else if (m.frame >= this.nextChecksumFrame) {
      r.sums.set(m.frame, m.checksum);
      if (r.sums.size > 16) r.sums.delete(r.sums.keys().next().value!);
    }
  }

  /** After loading a host state at `frame` (`repair`: one sent to repair a desync): checksums before it are history. */
  afterLoad(frame: number, repair: boolean): void {
    // Checksums from the loaded frame on are recomputed by the replay and sent again.
    if (this.interval > 0) this.nextChecksumFrame = (Math.floor(frame / this.interval) + 1) * this.interval;
    for (const f of [...this.ownSums.keys()]) if (f >= frame) this.ownSums.delete(f);
    for (const r of this.peers.list) for (const f of [...r.sums.keys()]) if (f <= frame) r.sums.delete(f);
    if (repair) this.repairsApplied = (this.repairsApplied + 1) & 0xff;
  }

  private compare(r: Remote, frame: number, mine: bigint, theirs: bigint): void {
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

import type { Emitter } from '@netplay/transport';
import type { EndAgreement } from './end-agreement.js';
import type { SessionEventMap } from './events.js';
import type { HostRole } from './host-role.js';
import type { PeerSet } from './peer-set.js';
import type { Quorum } from './quorum.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/** Why a {@link P2PSession} ended (event `ended`, {@link P2PSession.endReason}). */
export type SessionEndReason =
  /** The host removed this peer's player (it was silent or stalled too long), at the frame of `playerLeftAt`. */
  | 'removed'
  /**
   * This peer's group lost quorum and holds no host: the host is gone and the group could not elect
   * another (the group's peers agree on it: README, "End agreement").
   */
  | 'host-lost'
  /** This peer's group, the host in it, lost quorum (it is cut off from the majority) and did not get it back. */
  | 'partitioned';

/**
 * Which frames are final, and the end of a session that must not play on. A frame is final when
 * this peer simulated it with every real input (RetroArch's `other`) AND every member reported
 * holding every input of it (the `held` field of INPUT): whatever a quorum later decides, a removal
 * frame is after the last input some member holds, so no member's final frame can be undone by a
 * removal it did not see. While this peer's group lacks quorum its finals stop where they are; when
 * even the peers it is still connected to could not give it quorum, or it lacked quorum for
 * `disconnectMs`, the group agrees on its end ({@link EndAgreement}) and the session ends there
 * (`partitioned`, or `host-lost` when the host is not in the group); a peer told by its host that
 * it was removed ends with `removed`.
 * @internal
 */
export class Finality {
  private frozen = false;
  private frozenAt = 0;
  private lackingSince = -1;
  private reason: SessionEndReason | undefined;

  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly quorum: Quorum,
    private readonly role: HostRole,
    private readonly emitter: Emitter<SessionEventMap>,
    private readonly disconnectMs: number,
    private readonly agreement: EndAgreement,
  ) {}

  /** Why the session ended, or undefined while it runs. */
  get endReason(): SessionEndReason | undefined {
    return this.reason;
  }

  /** The first frame every member reported holding every input of (capped by this peer's own). */
  private held(): number {
    const t = this.timeline;
    let f = t.unreadFrame;
    for (const r of this.peers.list) {
      if (t.queues[r.player]!.disconnectFrame !== Number.POSITIVE_INFINITY) continue;
      if (r.held < f) f = r.held;
    }
    return f;
  }

  /** The last final frame (states before and at it are final everywhere). */
  get confirmedFrame(): number {
    if (this.frozen) return this.frozenAt;
    return Math.min(this.timeline.otherFrame, this.held());
  }

  /**
   * Checks quorum (call after the liveness check): freezes finals without it; past the limit, the
   * group's end agreement (end-agreement.ts), then the end at the agreed frame with the agreed reason.
   */
  check(now: number): void {
    if (this.reason !== undefined) return;
    if (this.quorum.has()) {
      if (this.frozen) this.agreement.reset();
      this.frozen = false;
      this.lackingSince = -1;
      return;
    }
    if (!this.frozen) {
      this.frozenAt = this.confirmedFrame;
      this.frozen = true;
    }
    if (this.lackingSince < 0) this.lackingSince = now;
    const a = this.agreement;
    if (!a.started) {
      if (this.quorum.has(true) && !(this.disconnectMs > 0 && now - this.lackingSince >= this.disconnectMs)) return;
      a.start(now, this.frozenAt, this.role.isHost, (r: Remote) => this.quorum.inGroup(r, false));
    }
    const agreed = a.settle(now, this.frozenAt, this.role.isHost);
    if (agreed === undefined) return;
    let frame = agreed.frame;
    // Its inputs are all here (every member reported holding them before it became final
    // anywhere); the frame is final here once simulated with them, or, past the wait, what is.
    const simulated = this.timeline.otherFrame;
    if (frame > simulated) {
      if (!a.overdue(now)) return;
      frame = Math.max(this.frozenAt, simulated);
    }
    this.endAt(agreed.reason, frame);
    a.ended(frame, this.role.isHost);
  }

  /** An END of the end agreement from `r` (answered with this peer's last final frame). */
  onEnd(r: Remote, data: Uint8Array): void {
    this.agreement.onEnd(r, data, this.confirmedFrame, this.role.isHost);
  }

  /** Ends the session for `reason`: finals stay where they are (at most `upTo`, if given). */
  end(reason: SessionEndReason, upTo?: number): void {
    if (this.reason !== undefined) return;
    let frame = this.confirmedFrame;
    if (upTo !== undefined && frame > upTo) frame = upTo;
    this.endAt(reason, frame);
  }

  private endAt(reason: SessionEndReason, frame: number): void {
    this.frozenAt = frame;
    this.frozen = true;
    this.reason = reason;
    this.emitter.emit('ended', { reason, frame });
  }
}

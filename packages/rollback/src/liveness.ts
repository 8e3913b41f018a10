import type { Clock, Emitter } from '@netplay/transport';
import type { SessionEventMap } from './events.js';
import type { PeerSet } from './peer-set.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/**
 * Whether the remote peers are alive: the session runs once every connected peer has been heard
 * from (`synchronizing`, `synchronized`, `running`). Liveness is by progress, not by bytes: while
 * the session waits on a peer (it is stalled by the prediction window), only the advance of that
 * peer's confirmed inputs counts as life; header-only or replayed INPUT messages, checksums and
 * undecodable bytes do not. While the session does not wait on a peer, any message counts. A peer
 * without life for `interruptMs` is reported `interrupted` (and `resumed` when it counts again), and
 * one without life for `disconnectMs` is dropped (on the host, removed at an agreed frame).
 *
 * Which peers the session waits on, when it is stalled: the *suspects* — members whose confirmed
 * inputs lag behind the frame they report being at (they simulated frames whose inputs they did not
 * give: header-only INPUT), or that sent no new INPUT message for `interruptMs` (silent, paused,
 * withholding or replaying old messages). A peer that lags only because it is itself stalled (it gave
 * every input it has) is excused while a suspect exists, so an honest peer stuck behind a stalling
 * one is not blamed for it. With no suspect, the peers whose inputs block the window are waited on,
 * after `interruptMs` of grace for one that is itself stalled by an input this peer holds (it was
 * starved by a peer that fed this one: the peers it waits on blame that one); that grace starts only
 * once the leave of a player this peer lost, whose input it may lack, is decided (for `disconnectMs`
 * at most), since the LEAVE brings that player's last inputs.
 * A peer that has not applied the same host decisions as this one (a LEAVE on its way) is excused,
 * for `disconnectMs` at most.
 * @internal
 */
export class Liveness {
  /** True once every connected peer has been heard from. */
  running = false;
  private announced = false;

  constructor(
    private readonly peers: PeerSet,
    private readonly timeline: Timeline,
    private readonly emitter: Emitter<SessionEventMap>,
    private readonly clock: Clock,
    private readonly interruptMs: number,
    private readonly disconnectMs: number,
    /** Drops a peer without life too long (the session's `disconnectPeer`). */
    private readonly drop: (peer: string) => void,
    /** True while the session waits for remote inputs (stalled by the prediction window, not paused). */
    private readonly stalled: () => boolean,
    /** Host decisions this peer applied (the host: broadcast), mod 256. */
    private readonly decisions: () => number,
  ) {}

  /** A message of `r` arrived. */
  heard(r: Remote): void {
    r.lastHeard = this.clock.now();
    if (!r.synchronized) {
      r.synchronized = true;
      this.emitter.emit('synchronized', { peer: r.peer });
      this.checkRunning();
    }
  }

  /** Starts the session once no connected peer is still unheard. */
  checkRunning(): void {
    if (this.running) return;
    for (const r of this.peers.list) if (r.connected && !r.synchronized) return;
    this.running = true;
    this.emitter.emit('running', { frame: this.timeline.currentFrame });
  }

  /** Whether playing peer `r` (its next missing frame `next`) gives reason to suspect it stalls the game. */
  private suspect(r: Remote, next: number, now: number): boolean {
    return (next < r.remoteFrame && !r.inputsHeld) || now - r.freshInputAt >= this.interruptMs;
  }

  /**
   * Whether `r` is excused because it has not applied the same host decisions as this peer (a LEAVE
   * held up by retransmissions stalls it through no fault of its own): for `disconnectMs` at most,
   * so a peer that claims so forever is waited on after that.
   */
  private awaitingDecision(r: Remote, now: number): boolean {
    if (r.decisions === this.decisions()) {
      r.decisionsApartSince = -1;
      return false;
    }
    if (r.decisionsApartSince < 0) r.decisionsApartSince = now;
    return now - r.decisionsApartSince < this.disconnectMs;
  }

  /**
   * Reports the peers still awaited (once), notes progress, reports the peers without life, and
   * drops those without life too long.
   */
  checkSilence(now: number): void {
    if (!this.running && !this.announced) {
      this.announced = true;
      for (const r of this.peers.list) if (!r.synchronized) this.emitter.emit('synchronizing', { peer: r.peer });
    }
    const t = this.timeline;
    const stalled = this.running && this.stalled();
    const unread = t.unreadFrame;
    let suspects = 0;
    for (const r of this.peers.list) {
      if (!r.connected) continue;
      const q = t.queues[r.player]!;
      const next = q.lastFrame + 1;
      if (next > r.progressFrame) {
        // Its inputs advanced: alive as of its last message.
        if (r.lastHeard > r.lastUseful) r.lastUseful = r.lastHeard;
        r.progressFrame = next;
      }
      r.excused = this.awaitingDecision(r, now);
      if (stalled && q.disconnectFrame === Number.POSITIVE_INFINITY && !r.excused && this.suspect(r, next, now))
        suspects++;
    }
    for (const r of this.peers.list) {
      if (!r.connected) continue;
      r.graced = false;
      if (!stalled) r.blockedSince = -1;
      if (!stalled || !this.waitedOn(r, unread, suspects > 0, now)) {
        // In its grace a starved peer lives by its new INPUT messages only (each says it is starved).
        const life = r.graced ? r.freshInputAt : r.lastHeard;
        if (life > r.lastUseful) r.lastUseful = life;
      }
      const silent = now - r.lastUseful;
      if (!r.interrupted && silent >= this.interruptMs) {
        r.interrupted = true;
        this.emitter.emit('interrupted', { peer: r.peer, silentMs: silent });
      } else if (r.interrupted && silent < this.interruptMs) {
        r.interrupted = false;
        r.resumedAt = now;
        this.emitter.emit('resumed', { peer: r.peer });
      }
      if (this.disconnectMs > 0 && silent >= this.disconnectMs) this.drop(r.peer);
    }
  }

  /** Whether the stalled session waits on `r`: a suspect, or (with none) a peer whose inputs block the window. */
  private waitedOn(r: Remote, unread: number, anySuspect: boolean, now: number): boolean {
    const q = this.timeline.queues[r.player]!;
    if (q.disconnectFrame !== Number.POSITIVE_INFINITY || r.excused) return false;
    const next = q.lastFrame + 1;
    if (anySuspect) return this.suspect(r, next, now);
    if (next > unread) {
      r.blockedSince = -1;
      return false;
    }
    return !this.blockedElsewhere(r, unread, now);
  }

  /**
   * Whether `r` is stalled by an input this peer holds: the first frame it lacks an input of (its
   * `held`) is below this peer's unread frame, and the frame it reports is its `held` plus the window.
   */
  starvedHere(r: Remote, unread = this.timeline.unreadFrame): boolean {
    return r.held < unread && r.remoteFrame >= r.held + this.timeline.maxPrediction;
  }

  /**
   * Whether `r`, which blocks this peer's window, is itself stalled by an input this peer holds (its
   * `held` is below this peer's unread frame, and the frame it reports is at its `held` plus the
   * window): the one it waits on fed this peer but starved it, so the blame is for the peers it
   * waits on to give (the host among them decides); waiting on `r` here would remove an honest peer
   * (the starved host, which then ends `partitioned`). For `interruptMs` at most, so a peer that
   * claims so forever is waited on after that; meanwhile only its new INPUT messages count as life.
   */
  private blockedElsewhere(r: Remote, unread: number, now: number): boolean {
    if (!this.starvedHere(r, unread)) {
      r.blockedSince = -1;
      r.leaveWaitSince = -1;
      return false;
    }
    // Starved by a player this peer lost whose leave is undecided (its LEAVE brings the inputs): the
    // grace starts after that leave, or after `disconnectMs` of it (a peer that withholds its REPORT).
    if (this.leaveBrings(r.held)) {
      if (r.leaveWaitSince < 0) r.leaveWaitSince = now;
      if (now - r.leaveWaitSince < this.disconnectMs) r.blockedSince = now;
    } else r.leaveWaitSince = -1;
    if (r.blockedSince < 0) r.blockedSince = now;
    r.graced = now - r.blockedSince < this.interruptMs;
    return r.graced;
  }

  /**
   * Whether a player this peer lost (its link closed) and whose leave is not decided yet may be the
   * one a peer holding every input before `held` lacks: this peer holds that player's input of
   * `held`, and the host's LEAVE carries the player's last inputs to every peer.
   */
  private leaveBrings(held: number): boolean {
    for (const p of this.peers.list) {
      if (p.connected) continue;
      const q = this.timeline.queues[p.player]!;
      if (q.disconnectFrame === Number.POSITIVE_INFINITY && q.lastFrame >= held) return true;
    }
    return false;
  }
}

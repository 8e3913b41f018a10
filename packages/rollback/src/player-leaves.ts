import { DecodeError } from '@netplay/protocol';
import type { Emitter } from '@netplay/transport';
import { CONTROL_CHANNEL } from './channels.js';
import { RollbackError } from './errors.js';
import type { SessionEventMap } from './events.js';
import type { HostRole } from './host-role.js';
import type { InputExchange } from './input-exchange.js';
import type { Liveness } from './liveness.js';
import { decodeByteFrameTail, encodeByteFrameTail, MessageType } from './messages.js';
import type { PeerSet } from './peer-set.js';
import type { Quorum } from './quorum.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/** A leave the host is deciding: the peers whose report it awaits. */
interface PendingLeave {
  readonly waiting: Set<string>;
}

/**
 * Leaves agreed by reports (RetroArch's host decides them). When a player's link to the host
 * breaks, the host asks every peer to stop taking that player's inputs and to report the ones it
 * holds (REPORT_REQUEST, REPORT); once every peer still connected has answered it removes the
 * player at the frame after the last input anyone holds and broadcasts that frame with the
 * player's last inputs (LEAVE). So every peer removes it at the same frame, and no peer ever has
 * to undo a frame it took as final. There is no deadline: deciding without a connected peer's
 * report may undo frames that peer took as final (its report can be held up for seconds by
 * retransmissions, or by the peer noticing a host leave late); a peer that stops answering
 * altogether is dropped by the liveness timeout, which ends the wait.
 * @internal
 */
export class PlayerLeaves {
  private readonly pending = new Map<number, PendingLeave>();
  /**
   * REPORT_REQUESTs from a peer that is not (yet) this peer's host, by sender: the players asked
   * about. A successor elected after the host left may ask before this peer has noticed the host
   * is gone; the request is answered when this peer follows that successor.
   */
  private readonly deferred = new Map<string, Set<number>>();
  /** Host: the LEAVE of each player it removed, told again to that player's peer if it talks. */
  private readonly told = new Map<number, Uint8Array>();

  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly inputs: InputExchange,
    private readonly role: HostRole,
    private readonly liveness: Liveness,
    private readonly emitter: Emitter<SessionEventMap>,
    private readonly quorum: Quorum,
    private readonly localPlayer: number,
    /** This peer's own player was removed at `frame` (the session ends with reason `removed`). */
    private readonly removedSelf: (frame: number) => void,
  ) {}

  /**
   * Host: a player's link broke. Every peer is asked to stop taking that player's inputs and to
   * report the ones it holds; once every peer still connected has answered, the player leaves at
   * the frame after the last input anyone holds, so no peer ever has to undo a frame it took as
   * final.
   */
  start(player: number): void {
    const q = this.timeline.queues[player]!;
    if (q.disconnectFrame !== Number.POSITIVE_INFINITY || this.pending.has(player)) return;
    this.inputs.freeze(player);
    const waiting = new Set<string>();
    for (const r of this.peers.list) {
      if (!r.connected || r.player === player) continue;
      waiting.add(r.peer);
      this.peers.send(r, CONTROL_CHANNEL, encodeByteFrameTail(MessageType.ReportRequest, player, 0, undefined));
    }
    this.pending.set(player, { waiting });
    this.finish();
  }

  /**
   * New host: starts the leave of every player whose peer this one lost (the old host's, and those
   * of earlier hosts that lost their link before deciding: a chain of lost hosts).
   */
  startAllLost(): void {
    for (const r of this.peers.list) if (!r.connected) this.start(r.player);
  }

  /**
   * Host: decides the pending leaves whose reports are all in (peers that left are not awaited),
   * only while its group has quorum (a host cut off from the majority decides nothing).
   */
  finish(): void {
    if (this.pending.size === 0 || !this.quorum.has()) return;
    for (const [player, pending] of [...this.pending]) {
      if (pending.waiting.size > 0) continue;
      this.pending.delete(player);
      this.remove(player);
    }
  }

  /** Host: leaves still being decided (a player may not enter meanwhile). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** A new incarnation entered `player`'s slot: the old one's LEAVE is no longer told to anyone. */
  entered(player: number): void {
    this.told.delete(player);
  }

  /** `peer` is gone: no report is awaited from it, and its deferred report requests are void. */
  forget(peer: string): void {
    this.deferred.delete(peer);
    for (const pending of this.pending.values()) pending.waiting.delete(peer);
  }

  /** A REPORT_REQUEST from the host (`r`): stop taking that player's inputs and report the ones held. */
  onReportRequest(r: Remote, data: Uint8Array): void {
    const m = decodeByteFrameTail(data, 'REPORT_REQUEST');
    if (m.byte >= this.timeline.players) throw new DecodeError('bad-value', 1, `player ${m.byte}`);
    this.report(r, m.byte);
  }

  /**
   * A REPORT_REQUEST from `r`, which is not this peer's host: kept, and answered if this peer
   * comes to follow `r` (it is the successor of a host this peer has not yet seen leave). Left
   * unanswered, the successor would decide the old host's leave without the inputs this peer
   * holds, at a frame this peer may already have taken as final.
   */
  deferReportRequest(r: Remote, data: Uint8Array): void {
    const m = decodeByteFrameTail(data, 'REPORT_REQUEST');
    if (m.byte >= this.timeline.players) throw new DecodeError('bad-value', 1, `player ${m.byte}`);
    let players = this.deferred.get(r.peer);
    if (players === undefined) {
      players = new Set();
      this.deferred.set(r.peer, players);
    }
    players.add(m.byte);
  }

  /**
   * Host migration: this peer now follows `host`; answers its deferred requests. The others' are
   * kept: a peer that noticed its host and the lowest member leave in the same check follows that
   * member first and the next one at once, and the next one's request came before (seed
   * -310995711, 5 players: dropping it there left the new host waiting for this peer's report
   * forever). A request of a peer this one drops goes with it ({@link forget}).
   */
  followed(host: Remote): void {
    const players = this.deferred.get(host.peer);
    if (players === undefined) return;
    this.deferred.delete(host.peer);
    for (const p of players)
      if (this.timeline.queues[p]!.disconnectFrame === Number.POSITIVE_INFINITY) this.report(host, p);
  }

  /** Whether any report request is kept (deferred) at all. */
  get hasDeferred(): boolean {
    return this.deferred.size > 0;
  }

  /** The requests of `host` (this peer's host) kept while it had no life here: answered now. */
  answerDeferred(host: Remote): void {
    const players = this.deferred.get(host.peer);
    if (players === undefined) return;
    this.deferred.delete(host.peer);
    for (const p of players)
      if (this.timeline.queues[p]!.disconnectFrame === Number.POSITIVE_INFINITY) this.report(host, p);
  }

  /** Host migration: this peer is the host now; requests of other would-be hosts are void. */
  became(): void {
    this.deferred.clear();
  }

  /** Stops taking `player`'s inputs and reports the ones held to the host `r`. */
  private report(r: Remote, player: number): void {
    this.inputs.freeze(player);
    const q = this.timeline.queues[player]!;
    const next = q.lastFrame + 1;
    this.peers.send(
      r,
      CONTROL_CHANNEL,
      encodeByteFrameTail(MessageType.Report, player, next, this.inputs.lastInputs(player, next)),
    );
  }

  /** Host: a REPORT from `peer`, with the leaving player's inputs it holds. */
  onReport(peer: string, data: Uint8Array): void {
    if (!this.role.isHost) throw new RollbackError('protocol', `${peer} sent a REPORT to a non-host`);
    const m = decodeByteFrameTail(data, 'REPORT');
    if (m.byte >= this.timeline.players) throw new DecodeError('bad-value', 1, `player ${m.byte}`);
    const pending = this.pending.get(m.byte);
    if (pending === undefined) return;
    if (m.tail.length > 0) this.inputs.take(m.byte, m.tail);
    pending.waiting.delete(peer);
    this.finish();
  }

  /** A LEAVE from the host: the player is removed at the frame it decided. */
  onLeave(data: Uint8Array): void {
    const m = decodeByteFrameTail(data, 'LEAVE');
    const player = m.byte;
    if (player >= this.timeline.players) throw new DecodeError('bad-value', 1, `player ${player}`);
    if (m.tail.length > 0) this.inputs.take(player, m.tail);
    if (player === this.localPlayer) {
      this.removedSelf(m.frame);
      return;
    }
    const q = this.timeline.queues[player]!;
    if (q.disconnectFrame !== Number.POSITIVE_INFINITY) return;
    if (q.lastFrame + 1 < m.frame)
      throw new RollbackError('protocol', `player ${player} leaves at ${m.frame} but inputs stop at ${q.lastFrame}`);
    this.timeline.disconnect(player, m.frame);
    for (const r of this.peers.list) if (r.player === player) r.connected = false;
    this.emitter.emit('player-left', { player, frame: m.frame });
    this.liveness.checkRunning();
  }

  /**
   * Host: a message came from `r`, whose player it removed: tells it again (at most once per
   * `intervalMs`), so a peer that wakes from a pause learns it was removed.
   */
  tellRemoved(r: Remote, now: number, intervalMs: number): void {
    const leave = this.told.get(r.player);
    if (leave === undefined || !this.role.isHost || now - r.removedNoticeAt < intervalMs) return;
    r.removedNoticeAt = now;
    this.peers.send(r, CONTROL_CHANNEL, leave);
  }

  /** Host: removes `player` at the frame after its last input held, and tells everybody. */
  private remove(player: number): void {
    const q = this.timeline.queues[player]!;
    if (q.disconnectFrame !== Number.POSITIVE_INFINITY) return;
    const frame = q.lastFrame + 1;
    const leave = encodeByteFrameTail(MessageType.Leave, player, frame, this.inputs.lastInputs(player, frame));
    this.role.broadcastDecision(leave);
    // The removed peer is told too, if its link still carries anything (it ends with `removed`).
    this.told.set(player, leave);
    for (const r of this.peers.list)
      if (r.player === player && !r.connected) this.peers.send(r, CONTROL_CHANNEL, leave);
    this.timeline.disconnect(player, frame);
    this.emitter.emit('player-left', { player, frame });
  }
}

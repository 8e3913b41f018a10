import { DecisionLog } from './decision-log.js';
import { RollbackError } from './errors.js';
import type { PeerSet } from './peer-set.js';
import type { SpectatorServer } from './spectator-server.js';

/**
 * Which peer is the host, and the count of its decisions. The host broadcasts the decisions that
 * change the timeline (LEAVE, MODE, LOAD) to every peer and synced spectator, and its INPUT
 * messages carry how many it sent (mod 256); another peer counts the ones it applied and ignores
 * host inputs made after a decision it has not applied yet (control messages travel on another
 * channel than inputs and may arrive later).
 * @internal
 */
export class HostRole {
  private hostFlag: boolean;
  private hostId: string | undefined;
  private decisions = 0;
  /** The decisions sent or applied, kept for re-sending (decision-log.ts). */
  readonly log: DecisionLog;

  constructor(
    isHost: boolean,
    hostPeer: string | undefined,
    private readonly peers: PeerSet,
    private readonly spectators: SpectatorServer,
  ) {
    this.hostFlag = isHost;
    this.hostId = isHost ? undefined : hostPeer;
    this.log = new DecisionLog(peers);
  }

  /** Whether this peer is the host. */
  get isHost(): boolean {
    return this.hostFlag;
  }

  /** The host's peer id (undefined on the host). */
  get hostPeer(): string | undefined {
    return this.hostId;
  }

  /** Host: timeline-changing broadcasts sent; others: such host messages applied (mod 256). */
  get epoch(): number {
    return this.decisions;
  }

  /** Throws unless this peer is the host. */
  require(what: string): void {
    if (!this.hostFlag) throw new RollbackError('bad-state', `only the host may ${what}`);
  }

  /** Whether a host-only message from `peer` comes from this peer's host. */
  isFrom(peer: string): boolean {
    return !this.hostFlag && peer === this.hostId;
  }

  /** Not the host: a decision of the host was applied (kept, to re-send it if this peer becomes host). */
  applied(decision: Uint8Array): void {
    this.decisions = (this.decisions + 1) & 0xff;
    this.log.record(this.decisions, decision);
  }

  /** Whether a DECISION numbered `count` is the next one this peer expects (else a copy, or early). */
  expects(count: number): boolean {
    return count === ((this.decisions + 1) & 0xff);
  }

  /** A player that entered mid-game starts with the host's decision count right after its ENTER. */
  startAt(decisions: number): void {
    this.decisions = decisions & 0xff;
  }

  /** Sends a control message to every connected player and every synced spectator. */
  broadcast(data: Uint8Array): void {
    this.peers.sendToConnected(data);
    this.spectators.sendToSynced(data);
  }

  /**
   * Host: broadcasts a decision that changes the timeline (LEAVE, ENTER, MODE, LOAD), counting it:
   * to players as DECISION with its count (re-sent to a peer that lacks it), to spectators as is.
   */
  broadcastDecision(data: Uint8Array): void {
    this.decisions = (this.decisions + 1) & 0xff;
    this.peers.sendToConnected(this.log.record(this.decisions, data));
    this.spectators.sendToSynced(data);
  }

  /** Host migration: this peer is the host from now on. */
  become(): void {
    this.hostFlag = true;
    this.hostId = undefined;
  }

  /** Host migration: `peer` is the host from now on. */
  follow(peer: string): void {
    this.hostId = peer;
  }
}

import { DecodeError } from '@netplay/protocol';
import { CONTROL_CHANNEL } from './channels.js';
import type { HostRole } from './host-role.js';
import type { Liveness } from './liveness.js';
import { MessageType } from './messages.js';
import type { PeerSet } from './peer-set.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/** LOST: `u8 20, u8 player` (peer → its host): the sender dropped that player. */
export function encodeLost(player: number): Uint8Array {
  return new Uint8Array([MessageType.Lost, player]);
}

/** A LOST the host has no evidence for yet: the reporter, and when its LOST arrived. */
interface Unproven {
  readonly reporter: Remote;
  readonly at: number;
}

/**
 * Drops of one member by another, decided by the host (README, "Finality and partitions", rule 4).
 * Inputs travel in a full mesh, so a non-host that dropped a player (no life for `disconnectMs`, or
 * that player's DROPPED) can no longer play with it, and waits for that player's inputs which only
 * a LEAVE would bring. It tells its host (LOST); the host, if it still hears both, drops one of
 * them, and the usual leave (REPORT_REQUEST, REPORT, LEAVE) removes it at an agreed frame:
 * - the named player, once the host has evidence of its fault: it is or was without life at the
 *   host within the last `disconnectMs` (`interrupted` now, or `resumed` since), or the reporter
 *   is stalled by an input the host holds (the named player fed the host but starved it);
 * - else the reporter, when the host still has no such evidence `interruptMs` plus the named
 *   player's round trip after the LOST came: the host hears the named player well and sees the
 *   reporter want for nothing, so the fault is the reporter's (its link, its pause) or a lie, and
 *   a lying peer can only remove itself. (A player that died is `interrupted` here by then, even
 *   if its last messages were still on their way when the LOST came, or its link closed here.)
 * Either way the others play on after one report round trip (at most that wait more), instead of
 * the reporter stalling until the host's own timeout blames it (seed 719763688: the honest
 * reporter was frozen 4.7 s and removed).
 * @internal
 */
export class DropReports {
  /** LOSTs without evidence yet, by the player they name (the first reporter). */
  private readonly unproven = new Map<number, Unproven>();

  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly role: HostRole,
    private readonly liveness: Liveness,
    private readonly interruptMs: number,
    private readonly disconnectMs: number,
    /** The host's own drop (the session's `disconnectPeer`): starts the leave. */
    private readonly drop: (peer: string) => void,
  ) {}

  /** Not the host: this peer dropped `r` (a member, not the host): tells its host, if it still hears it. */
  dropped(r: Remote): void {
    if (this.role.isHost || r.peer === this.role.hostPeer || !this.member(r.player)) return;
    const host = this.role.hostPeer === undefined ? undefined : this.peers.byPeer.get(this.role.hostPeer);
    if (host?.connected === true) this.peers.send(host, CONTROL_CHANNEL, encodeLost(r.player));
  }

  /** Host: a LOST from `reporter`: drops the named player or, later, the reporter (see the class). */
  onLost(reporter: Remote, data: Uint8Array, now: number): void {
    if (data.length !== 2) throw new DecodeError('bad-length', 0, `LOST of ${data.length} bytes`);
    const player = data[1]!;
    if (player >= this.timeline.players) throw new DecodeError('bad-value', 1, `player ${player}`);
    if (!this.role.isHost || this.unproven.has(player)) return;
    this.unproven.set(player, { reporter, at: now });
    this.check(now);
  }

  /** Host, at every liveness check: decides the LOSTs whose evidence (or its absence) is in. */
  check(now: number): void {
    if (this.unproven.size === 0) return;
    for (const [player, u] of this.unproven) {
      const lost = this.peers.list.find((p) => p.player === player);
      const reporter = u.reporter;
      // Gone here too (its leave is under way), not a member, or the reporter gone: nothing to decide.
      if (
        lost === undefined ||
        lost === reporter ||
        !lost.connected ||
        !this.member(player) ||
        !reporter.connected ||
        !this.member(reporter.player) ||
        !this.role.isHost
      ) {
        this.unproven.delete(player);
        continue;
      }
      if (lost.interrupted || now - lost.resumedAt < this.disconnectMs || this.liveness.starvedHere(reporter)) {
        this.unproven.delete(player);
        this.drop(lost.peer);
      } else if (now - u.at >= this.interruptMs + lost.rttMs) {
        this.unproven.delete(player);
        this.drop(reporter.peer);
      }
    }
  }

  private member(player: number): boolean {
    return this.timeline.queues[player]!.disconnectFrame === Number.POSITIVE_INFINITY;
  }
}

import type { HostRole } from './host-role.js';
import type { PeerSet } from './peer-set.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/**
 * The quorum rule of finality (README, "Finality and partitions"). The *membership* is the set of
 * players still playing (agreed by the host's decisions); this peer's *group* is itself plus the
 * members it hears usefully (connected and not interrupted: see {@link Liveness}). A group has
 * quorum when it holds a strict majority of the membership, or exactly half of it including the
 * host. Only a peer with quorum decides a membership change or takes over as host; a peer without
 * it stops marking frames final, and ends when even its connected peers could not give it quorum.
 * @internal
 */
export class Quorum {
  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly role: HostRole,
    private readonly localPlayer: number,
  ) {}

  /** Whether this peer may become the host (a joiner: once it holds every input before its entry). */
  selfReady: () => boolean = () => true;

  private member(player: number): boolean {
    return this.timeline.queues[player]!.disconnectFrame === Number.POSITIVE_INFINITY;
  }

  /** Whether `r` is in this peer's group (`reachable`: connected counts, interrupted or not). */
  inGroup(r: Remote, reachable: boolean): boolean {
    return r.connected && (reachable || !r.interrupted) && this.member(r.player);
  }

  /**
   * Whether this peer's group has quorum. `reachable`: count every connected member, interrupted or
   * not (the best the group can become without a peer coming back). `without`: leave that peer out
   * and do not count the host in (a takeover).
   */
  has(reachable = false, without?: Remote, newcomers = 0): boolean {
    let members = 0;
    let group = 0;
    let host = false;
    if (this.member(this.localPlayer)) {
      members++;
      group++;
      if (this.role.isHost && without === undefined) host = true;
    }
    for (const r of this.peers.list) {
      // A player that left on its own is out of the membership already, whatever the frame its
      // leave is decided at: two players closing at once must not leave the host without quorum.
      if (!this.member(r.player) || r.leftVoluntarily) continue;
      members++;
      // `newcomers`: admission check, as if those joiners and every one not caught up never came.
      if (r === without || !this.inGroup(r, reachable) || (newcomers > 0 && !r.caughtUp)) continue;
      group++;
      if (without === undefined && r.peer === this.role.hostPeer) host = true;
    }
    members += newcomers;
    if (members === 0) return true;
    return 2 * group > members || (2 * group === members && host);
  }

  /**
   * Host takeover when `oldHost` is outside this peer's group: the group without it must have quorum
   * (a strict majority of members heard usefully); the successor is the connected member with the
   * lowest slot (peers that agree on who is connected elect the same one, even while one of them is
   * briefly interrupted). Returns `'none'` when the group lacks quorum, `'self'` or the successor.
   */
  successor(oldHost: Remote): 'none' | 'self' | Remote {
    if (!this.has(false, oldHost)) return 'none';
    let best: Remote | undefined;
    for (const r of this.peers.list) {
      // A player that entered mid-game is no successor before it holds every input before its entry.
      if (r === oldHost || !this.inGroup(r, true) || !r.caughtUp) continue;
      if (best === undefined || r.player < best.player) best = r;
    }
    if (!this.selfReady()) return best ?? 'none';
    return best !== undefined && best.player < this.localPlayer ? best : 'self';
  }
}

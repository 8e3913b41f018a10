import type { Emitter } from '@netplay/transport';
import type { SessionEventMap } from './events.js';
import type { HostRole } from './host-role.js';
import type { InputExchange } from './input-exchange.js';
import type { PeerSet } from './peer-set.js';
import type { PlayerLeaves } from './player-leaves.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/**
 * Host migration: when a peer loses its link to the host, the connected peer with the lowest
 * player slot (this one included) becomes the host (`host-changed`), and removes the old host's
 * player like any leaver. Every peer elects the same successor as long as they agree on who is
 * connected.
 * @internal
 */
export class HostMigration {
  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly inputs: InputExchange,
    private readonly role: HostRole,
    private readonly leaves: PlayerLeaves,
    private readonly emitter: Emitter<SessionEventMap>,
    private readonly localPlayer: number,
  ) {}

  /** The host is gone: elect the next one; if it is this peer, start the old host's leave. */
  migrate(oldHost: Remote): void {
    // Report requests of the old host that it never followed with a decision are void.
    this.inputs.unfreezeAllBut(oldHost.player);
    const next = this.successor(oldHost.peer);
    if (next === undefined) {
      this.role.become();
      this.leaves.became();
      this.emitter.emit('host-changed', { peer: undefined, frame: this.timeline.currentFrame });
      this.leaves.start(oldHost.player);
    } else {
      this.role.follow(next.peer);
      this.leaves.followed(next);
      this.emitter.emit('host-changed', { peer: next.peer, frame: this.timeline.currentFrame });
    }
  }

  /** The connected peer with the lowest slot but `excluding`, or undefined when this peer's slot is lower. */
  private successor(excluding: string | undefined): Remote | undefined {
    let best: Remote | undefined;
    for (const r of this.peers.list) {
      if (!r.connected || r.peer === excluding) continue;
      if (best === undefined || r.player < best.player) best = r;
    }
    return best !== undefined && best.player < this.localPlayer ? best : undefined;
  }
}

import type { Emitter } from '@netplay/transport';
import type { SessionEventMap } from './events.js';
import type { HostRole } from './host-role.js';
import type { InputExchange } from './input-exchange.js';
import type { PlayerLeaves } from './player-leaves.js';
import type { Quorum } from './quorum.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/**
 * Host migration under the quorum rule: when a peer loses its link to the host, it may take over
 * only when its group without the old host has quorum (a strict majority of the members); then the
 * connected member with the lowest player slot (this one included) becomes the host
 * (`host-changed`) and removes the old host's player like any leaver. Without quorum the peer keeps
 * no host and tries again at every check ({@link retry}); if quorum never comes, the session ends
 * (`host-lost`). Every peer elects the same successor as long as they agree on who is connected.
 * @internal
 */
export class HostMigration {
  /** The host this peer lost and has not replaced yet (no quorum to take over). */
  private lost: Remote | undefined;

  constructor(
    private readonly timeline: Timeline,
    private readonly inputs: InputExchange,
    private readonly role: HostRole,
    private readonly leaves: PlayerLeaves,
    private readonly quorum: Quorum,
    private readonly emitter: Emitter<SessionEventMap>,
  ) {}

  /** True while this peer lost its host and could not elect a successor. */
  get hostLost(): boolean {
    return this.lost !== undefined;
  }

  /** The host is gone: elect the next one (if the group has quorum); if it is this peer, start the old host's leave. */
  migrate(oldHost: Remote): void {
    // Report requests of the old host that it never followed with a decision are void.
    this.inputs.unfreezeAllBut(oldHost.player);
    this.lost = oldHost;
    this.retry();
  }

  /** Elects a successor of the lost host once the group has quorum without it. */
  retry(): void {
    const oldHost = this.lost;
    if (oldHost === undefined) return;
    const next = this.quorum.successor(oldHost);
    if (next === 'none') return;
    this.lost = undefined;
    if (next === 'self') {
      this.role.become();
      this.leaves.became();
      this.emitter.emit('host-changed', { peer: undefined, frame: this.timeline.currentFrame });
      this.leaves.start(oldHost.player);
      this.leaves.startAllLost();
    } else {
      this.role.follow(next.peer);
      this.leaves.followed(next);
      this.emitter.emit('host-changed', { peer: next.peer, frame: this.timeline.currentFrame });
    }
  }
}

import type { ClientServerServer, LockstepRunner } from '@netplay/lockstep';
import { SessionError } from './errors.js';
import type { Peer } from './host-peer.js';

/**
 * Scheduler peer ids of lockstep-cs spectators start here: above every player slot (a slot is a
 * u8, 255 meaning spectator), so a spectator's id never names a port.
 */
export const FIRST_SPECTATOR_ID = 0x1000;

/**
 * lockstep-cs spectators at the host: each is a watcher of the host's `ClientServerServer`
 * (@netplay/lockstep `addWatcher`): it gets the state at the start of the server's next frame (a
 * page delta against the power-on state, deflated, on `sync`) and every frame's data from there,
 * never affects the game (no port; its inputs, chat and commands are dropped by the server) and is
 * never waited for. A spectator admitted before the server runs waits and is added when it starts.
 * One that trails the server by more than `maxWatcherLagFrames` (its own progress reports) is
 * dropped by the server; {@link removed} names it so that the host refuses it with the reason.
 */
export class LockstepSpectators {
  private nextId = FIRST_SPECTATOR_ID;
  private readonly ids = new Map<Peer, number>();
  private readonly byId = new Map<number, Peer>();
  private server: ClientServerServer | undefined;
  private runner: LockstepRunner | undefined;

  /** The server started: every spectator admitted so far becomes a watcher. */
  attach(server: ClientServerServer, runner: LockstepRunner): void {
    this.server = server;
    this.runner = runner;
    for (const [peer, id] of this.ids) this.watch(peer, id);
  }

  /** Admits `peer` (the host has sent it SYNC with the power-on state). */
  admit(peer: Peer): void {
    const id = this.nextId++;
    this.ids.set(peer, id);
    this.byId.set(id, peer);
    if (this.server !== undefined) this.watch(peer, id);
  }

  /** A spectator left: the server stops streaming to it. */
  forget(peer: Peer): void {
    const id = this.ids.get(peer);
    if (id === undefined) return;
    this.ids.delete(peer);
    this.byId.delete(id);
    this.server?.removeWatcher(id);
    this.runner?.removePeer(id);
  }

  /**
   * The server removed scheduler peer `id` at `frame`: if it is a spectator (it fell behind), the
   * spectator and the refusal the host closes it with; undefined for a player.
   */
  removed(id: number, frame: number): { peer: Peer; error: SessionError } | undefined {
    const peer = this.byId.get(id);
    if (peer === undefined) return undefined;
    this.forget(peer);
    return {
      peer,
      error: new SessionError(
        'removed',
        `removed at frame ${frame}: this spectator fell too far behind the game (its frames queued at the host reached the limit)`,
      ),
    };
  }

  private watch(peer: Peer, id: number): void {
    this.server?.addWatcher(id);
    this.runner?.addPeer(id, peer.conn);
  }
}

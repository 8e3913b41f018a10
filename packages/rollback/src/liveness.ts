import type { Clock, Emitter } from '@netplay/transport';
import type { SessionEventMap } from './events.js';
import type { PeerSet } from './peer-set.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/**
 * Whether the remote peers are alive: the session runs once every connected peer has been heard
 * from (`synchronizing`, `synchronized`, `running`); a peer silent for `interruptMs` is reported
 * `interrupted` (and `resumed` when heard again), and one silent for `disconnectMs` is dropped.
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
    /** Drops a peer that has been silent too long (the session's `disconnectPeer`). */
    private readonly drop: (peer: string) => void,
  ) {}

  /** A message of `r` arrived. */
  heard(r: Remote): void {
    r.lastHeard = this.clock.now();
    if (r.interrupted) {
      r.interrupted = false;
      this.emitter.emit('resumed', { peer: r.peer });
    }
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

  /** Reports the peers still awaited (once), then the silent ones, and drops those silent too long. */
  checkSilence(now: number): void {
    if (!this.running && !this.announced) {
      this.announced = true;
      for (const r of this.peers.list) if (!r.synchronized) this.emitter.emit('synchronizing', { peer: r.peer });
    }
    for (const r of this.peers.list) {
      if (!r.connected) continue;
      const silent = now - r.lastHeard;
      if (!r.interrupted && silent >= this.interruptMs) {
        r.interrupted = true;
        this.emitter.emit('interrupted', { peer: r.peer, silentMs: silent });
      }
      if (this.disconnectMs > 0 && silent >= this.disconnectMs) this.drop(r.peer);
    }
  }
}

import type { Clock, Timeouts } from '@netplay/transport';

/** What {@link PeerLiveness.judge} concludes. */
export const Silence = {
  /** Heard recently enough, or already reported. */
  Fine: 0,
  /** Silent for `interruptMs`: emit `interrupted` (once per silence). */
  Interrupted: 1,
  /** Silent for `disconnectMs`: the connection is over. */
  Gone: 2,
} as const;
export type Silence = (typeof Silence)[keyof typeof Silence];

/**
 * Whether the peer is alive, by what we hear from it: a silence of `interruptMs` interrupts the
 * connection (once, until something is heard again: `resumed`), one of `disconnectMs` ends it.
 * Any valid DATA packet counts as hearing; keepalive Pings keep an idle link heard.
 * @internal
 */
export class PeerLiveness {
  /** When the peer was last heard. */
  lastHeard: number;
  /** When the silence that interrupted the connection began (−1: not interrupted). */
  private interruptedSince = -1;

  constructor(
    private readonly clock: Clock,
    private readonly timeouts: Timeouts,
  ) {
    this.lastHeard = clock.now();
  }

  /** The peer was heard just now; returns how long the interruption it ends lasted, or −1. */
  heard(open: boolean): number {
    const now = this.clock.now();
    this.lastHeard = now;
    if (this.interruptedSince < 0 || !open) return -1;
    const since = this.interruptedSince;
    this.interruptedSince = -1;
    return now - since;
  }

  /** Judges the silence now (`open`: the connection is open). */
  judge(open: boolean): Silence {
    const silent = this.clock.now() - this.lastHeard;
    if (silent >= this.timeouts.disconnectMs) return Silence.Gone;
    if (open && silent >= this.timeouts.interruptMs && this.interruptedSince < 0) {
      this.interruptedSince = this.lastHeard;
      return Silence.Interrupted;
    }
    return Silence.Fine;
  }
}

/**
 * The finality watermark of the P2P modes (issue 13). On the star topology every message passes
 * through the host, so the host's view of every input is a superset of everyone's, and the host
 * runs frame k only once it holds every input of k: "the host ran through k" means "k is final for
 * everyone" (a removal the host decides later cuts after k). A non-host that runs a frame with its
 * own input the host never got (it was cut off) must not call it final: its finals stop at the
 * host's progress, which the host sends with its pings (`0x15, u32 frames run`, see
 * `frame-advance-wire.ts`).
 */
export class HostWatermark {
  /** Frames the host is known to have run (0 .. `hostRan − 1`); on the host itself, unused. */
  private hostRan = 0;

  /** `isHost`: this peer is the host (its own runs are final; it sends the progress). */
  constructor(readonly isHost: boolean) {}

  /** A host-progress message from the host: it has run `frames` frames (older news is ignored). */
  heard(frames: number): void {
    if (frames > this.hostRan) this.hostRan = frames;
  }

  /** Frames the host is known to have run. */
  get frames(): number {
    return this.hostRan;
  }

  /** The last frame final for a peer that has run `next` frames (and, for a removed peer, up to `cut − 1`). */
  final(next: number, cut = Infinity): number {
    // Comparisons, not Math.min (called every tick): Math.min with the default `Infinity` may
    // hand back a heap number.
    // biome-ignore lint/complexity/useMathMinMax: see above
    const upTo = this.isHost ? next : next < this.hostRan ? next : this.hostRan;
    // biome-ignore lint/complexity/useMathMinMax: see above
    return (upTo < cut ? upTo : cut) - 1;
  }
}

import type { SessionEndReason } from './finality.js';

/** Events of a {@link P2PSession} or {@link SpectatorSession}, subscribed with `session.on(type, handler)`. */
export interface SessionEventMap {
  /** Waiting for the first message of `peer`. */
  synchronizing: { readonly peer: string };
  /** The first message of `peer` arrived. */
  synchronized: { readonly peer: string };
  /** Every peer is synchronized: frames advance from now on. */
  running: { readonly frame: number };
  /** `peer` has been silent for `silentMs` (the session keeps predicting, then stalls). */
  interrupted: { readonly peer: string; readonly silentMs: number };
  /** `peer` is heard again. */
  resumed: { readonly peer: string };
  /** The link to `peer` is gone (closed, or silent past the disconnect timeout). */
  disconnected: { readonly peer: string };
  /** `player` is removed from `frame` on (decided by the host; every peer gets the same frame). */
  'player-left': { readonly player: number; readonly frame: number };
  /** `peer` plays slot `player` from `frame` on (host's ENTER; a rejoin or a new player mid-game; neutral before). */
  'player-entered': { readonly player: number; readonly peer: string; readonly frame: number };
  /** `player` starts (`playing: true`) or stops playing at `frame`, decided by the host (its peer stays connected). */
  'mode-changed': { readonly player: number; readonly frame: number; readonly playing: boolean };
  /** The host left and `peer` took over (undefined: this peer is the host now), from about `frame`. */
  'host-changed': { readonly peer: string | undefined; readonly frame: number };
  /** A spectator joined, starting from the host's savestate of `frame`. */
  'spectator-joined': { readonly peer: string; readonly frame: number };
  /** The checksums of the confirmed `frame` differ between this peer and `peer`. */
  'desync-detected': { readonly frame: number; readonly peer: string; readonly local: bigint; readonly remote: bigint };
  /** The host's savestate of `frame` was loaded (and the frames since replayed). */
  'desync-repaired': { readonly frame: number };
  /** This peer runs ahead of the others: skip `frames` frames (time sync). */
  'wait-recommended': { readonly frames: number };
  /** The host paused (`paused: true`) or resumed the game at its `frame`. */
  paused: { readonly paused: boolean; readonly frame: number };
  /**
   * The session ended and must not play on (P2PSession only): `reason` says why (`removed`,
   * `host-lost`, `partitioned`); `frame` is its last final frame (`confirmedFrame`, which stays).
   * From now on `advanceFrame` returns no requests and nothing is sent or received.
   */
  ended: { readonly reason: SessionEndReason; readonly frame: number };
  /** A peer sent bytes that could not be decoded or break the protocol; they were dropped. */
  'protocol-error': { readonly peer: string; readonly error: Error };
}

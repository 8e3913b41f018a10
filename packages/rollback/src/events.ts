import type { SessionEndReason } from './finality.js';

/** Events of a {@link P2PSession} or {@link SpectatorSession}, subscribed with `session.on(type, handler)`. */
export interface SessionEventMap {
  /** Waiting for the first message of `peer`. */
  synchronizing: {
    /** Id of the peer not heard from yet (as in `remotes`); emitted once per such peer, before `running`. */
    readonly peer: string;
  };
  /** The first message of `peer` arrived. */
  synchronized: {
    /** Id of the peer just heard from (as in `remotes`; on a `SpectatorSession`, the host). */
    readonly peer: string;
  };
  /** Every peer is synchronized: frames advance from now on. */
  running: {
    /** The frame play starts from: 0 on a fresh game, the state's frame for a joiner or spectator. */
    readonly frame: number;
  };
  /** `peer` has been silent for `silentMs` (the session keeps predicting, then stalls). */
  interrupted: {
    /** Id of the peer that stopped delivering what the game needs (as in `remotes`). */
    readonly peer: string;
    /**
     * How long, in ms of the session's clock, the peer had gone without a useful message when the
     * event fired: at least `interruptMs` (default 750), usually just past it.
     */
    readonly silentMs: number;
  };
  /** `peer` is heard again. */
  resumed: {
    /** Id of the peer heard again after an `interrupted` event (as in `remotes`). */
    readonly peer: string;
  };
  /** The link to `peer` is gone (closed, or silent past the disconnect timeout). */
  disconnected: {
    /**
     * Id of the peer whose link this session dropped (as in `remotes`); its player is then removed
     * at a frame the host decides (`player-left`).
     */
    readonly peer: string;
  };
  /** `player` is removed from `frame` on (decided by the host; every peer gets the same frame). */
  'player-left': {
    /** The slot removed, 0-based (0..players − 1). */
    readonly player: number;
    /** The first frame at which the slot reads neutral input; the same on every peer. */
    readonly frame: number;
  };
  /** `peer` plays slot `player` from `frame` on (host's ENTER; a rejoin or a new player mid-game; neutral before). */
  'player-entered': {
    /** The slot entered, 0-based (0..players − 1). */
    readonly player: number;
    /** Id of the peer that plays it from now on (a rejoining or a new peer). */
    readonly peer: string;
    /** The entry frame: the slot's first frame of real input, the same on every peer. */
    readonly frame: number;
  };
  /** `player` starts (`playing: true`) or stops playing at `frame`, decided by the host (its peer stays connected). */
  'mode-changed': {
    /** The slot whose peer switches, 0-based (0..players − 1). */
    readonly player: number;
    /** The first frame of the new mode (real inputs from it, or neutral from it), the same on every peer. */
    readonly frame: number;
    /** True: the slot starts playing at `frame`; false: it spectates (neutral input) from `frame`. */
    readonly playing: boolean;
  };
  /** The host left and `peer` took over (undefined: this peer is the host now), from about `frame`. */
  'host-changed': {
    /** Id of the new host, or undefined when this peer was elected (the lowest connected slot with quorum). */
    readonly peer: string | undefined;
    /** This peer's current frame when it learned of the change (an approximation: not a decided frame). */
    readonly frame: number;
  };
  /** A spectator joined, starting from the host's savestate of `frame`. */
  'spectator-joined': {
    /** Id of the spectator (as the host knows it; relayed by the host to the other players). */
    readonly peer: string;
    /** The frame of the host's savestate the spectator starts from; it receives inputs from there. */
    readonly frame: number;
  };
  /** The checksums of the confirmed `frame` differ between this peer and `peer`. */
  'desync-detected': {
    /** The confirmed frame whose checksums differ (a multiple of `checksumInterval`, default 60). */
    readonly frame: number;
    /** Id of the peer whose checksum differs from this one's. */
    readonly peer: string;
    /** This peer's 64-bit checksum of the state of `frame` (the core's `checksum()`), unsigned. */
    readonly local: bigint;
    /** The 64-bit checksum `peer` sent for the same frame, unsigned. */
    readonly remote: bigint;
  };
  /** The host's savestate of `frame` was loaded (and the frames since replayed). */
  'desync-repaired': {
    /** The frame of the host's savestate that was loaded; the frames from it to the current one were resimulated. */
    readonly frame: number;
  };
  /** This peer runs ahead of the others: skip `frames` frames (time sync). */
  'wait-recommended': {
    /**
     * Whole frames to skip so the others catch up: the largest averaged frame advantage over a
     * peer, rounded, 1..`maxPrediction`; at most one event per `waitInterval` frames (default 60). `RollbackGame.tick` skips them itself when
     * `timeSync` is on.
     */
    readonly frames: number;
  };
  /** The host paused (`paused: true`) or resumed the game at its `frame`. */
  paused: {
    /** True: the host paused the game (frames stop advancing); false: it resumed. */
    readonly paused: boolean;
    /** The host's current frame when it paused or resumed (carried in its PAUSE message). */
    readonly frame: number;
  };
  /**
   * The session ended and must not play on (P2PSession only): `reason` says why (`removed`,
   * `host-lost`, `partitioned`); `frame` is its last final frame (`confirmedFrame`, which stays).
   * The peers of a group that lost quorum end with one reason at one frame (the end agreement).
   * From now on `advanceFrame` returns no requests and nothing is sent or received.
   */
  ended: {
    /** Why: `removed` (the host removed this player), `host-lost` or `partitioned` (no quorum). */
    readonly reason: SessionEndReason;
    /** The last final frame (`confirmedFrame` at the end); the states up to it stay valid. */
    readonly frame: number;
  };
  /** A peer sent bytes that could not be decoded or break the protocol; they were dropped. */
  'protocol-error': {
    /** Id of the peer that sent the bytes; its `badMessages` count in `PeerStats` goes up by one. */
    readonly peer: string;
    /**
     * What was wrong: a `DecodeError` of @netplay/protocol (malformed bytes) or a
     * {@link RollbackError} with code `protocol` or `version`.
     */
    readonly error: Error;
  };
}

import type { Clock } from '@netplay/transport';
import type { SendFn } from './channels.js';
import type { Predictor } from './predictor.js';

/** A remote player of a {@link P2PSession}. */
export interface RemotePlayer {
  /** The peer's id (what `send` and `receive` use, e.g. its address). */
  readonly peer: string;
  /** The slot it plays (or would play). */
  readonly player: number;
  /** True if the peer starts as a spectator in the mesh: its slot is empty until the host lets it play. */
  readonly spectating?: boolean;
}

/** Options of {@link P2PSession}. */
export interface P2PSessionOptions {
  /** Number of player slots, 2..16. */
  readonly players: number;
  /** Bytes of one player's input per frame. */
  readonly inputBytes: number;
  /** The slot of this peer's player. */
  readonly localPlayer: number;
  /** The other players, one per remote peer (full mesh: every peer talks to every other). */
  readonly remotes: readonly RemotePlayer[];
  /** True if this peer starts as a spectator (its slot empty until the host lets it play). */
  readonly spectating?: boolean;
  /** True on the host: the peer that decides leaves, syncs spectators and repairs desyncs. */
  readonly isHost?: boolean;
  /** The host's peer id (on the other peers). */
  readonly hostPeer?: string;
  /** Time source (a `ManualClock` in tests). */
  readonly clock: Clock;
  /** Where messages go. */
  readonly send: SendFn;
  /** Frames that may be simulated with predicted inputs before the session stalls (default 8). */
  readonly maxPrediction?: number;
  /** Local input delay in frames (default 0), changeable with {@link P2PSession.inputDelay}. */
  readonly inputDelay?: number;
  /** How remote inputs are guessed (default: repeat the last one). */
  readonly predictor?: Predictor;
  /** Exchange checksums of confirmed frames every this many frames (default 60; 0 disables). */
  readonly checksumInterval?: number;
  /**
   * Savestates by frame (e.g. `(f) => driver.stateOf(f)`): the host needs it to sync spectators and
   * repair desyncs.
   */
  readonly stateSource?: (frame: number) => Uint8Array | undefined;
  /** Frames per second of the game (default 60), for time sync. */
  readonly fps?: number;
  /** Silence in ms after which a peer is reported interrupted (default 750). */
  readonly interruptMs?: number;
  /** Silence in ms after which a peer is dropped (default 5000; 0: never). */
  readonly disconnectMs?: number;
  /** Frames between two `wait-recommended` events (default 60). */
  readonly waitInterval?: number;
  /**
   * Enter a running game (issue 15): the WELCOME bytes and the state the host's
   * {@link P2PSession.admitPlayer} returned. The session starts at the state's frame (the first
   * `advanceFrame` once running loads it) and plays from the entry frame; `remotes` are the players
   * of the slots that play or enter (the welcome tells which).
   */
  readonly join?: {
    /** The WELCOME bytes of the host's admission ({@link PlayerAdmission.welcome}), as shipped. */
    readonly welcome: Uint8Array;
    /** The host's savestate of the welcome's state frame ({@link PlayerAdmission.state}), as shipped. */
    readonly state: Uint8Array;
  };
}

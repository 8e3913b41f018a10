import type { Core } from '@netplay/state';
import type { Clock } from '@netplay/transport';
import type { LinkOptions } from './client-links.js';
import type { ContentInfo } from './content.js';
import type { SessionError } from './errors.js';
import type { ChatEvent } from './host-control.js';
import type { RosterEntry } from './messages.js';
import type { SessionMode } from './mode.js';
import type { RejoinTarget } from './rejoin-message.js';

/** Options of {@link NetplayClient}. */
export interface NetplayClientOptions {
  /** The client's core (same core id, version and content as the host's). */
  readonly core: Core;
  /** What the client runs. */
  readonly content: ContentInfo;
  /** Time source for the scheduler and the handshake timeout. */
  readonly clock: Clock;
  /** The nick the client asks for (the host may rename it, see {@link JoinInfo.nick}). */
  readonly nick: string;
  /** The session's password, if it has one. */
  readonly password?: string;
  /** Join as a spectator (default false: take a player slot). */
  readonly spectate?: boolean;
  /** Frames per second of the game (default 60). */
  readonly fps?: number;
  /** The handshake must finish within this many ms (default 10 000). */
  readonly handshakeTimeoutMs?: number;
  /** Rollback: prediction window (default the scheduler's, 8). */
  readonly maxPrediction?: number;
  /** Rollback: frames between checksum exchanges (default the scheduler's, 60). Use the host's value. */
  readonly checksumInterval?: number;
  /**
   * Source of a u32 for frame-advance's event-order seed (default: `crypto.getRandomValues`).
   * Inject a seeded `Prng`'s `nextU32` for reproducible tests.
   */
  readonly randomU32?: () => number;
  /** Test hook: the session protocol version announced in HELLO (default {@link SESSION_PROTOCOL_VERSION}). */
  readonly protocolVersion?: number;
  /**
   * Ports (local players, couch + online) this client drives (default 1; 1..16). The host gives
   * them in one slot's block or refuses (`bad-argument`: more than its `maxLocalPlayers`). `tick`
   * then takes their inputs end to end (or one array per port); they travel in one message.
   */
  readonly localPlayers?: number;
  /**
   * Rollback: direct links to the other players (issue 17), used when the host chooses them (its
   * `links` option): a `listen` factory (UDP / WebSocket: a listener this client opens; WebRTC: a
   * room of the signaling server) and a `connect` factory. With links, the game goes on under a
   * new host when the host leaves (`host-left`, `host-changed`). Absent: the host's relay only.
   */
  readonly links?: LinkOptions;
  /**
   * Rollback, after a host hand-over (issue 15): this client is a player who left coming back to
   * the elected host (connect to its `address`; the nick must be the one it played under). It
   * sends REJOIN with `slot` and `token` after INFO. Take it from the old client's
   * {@link NetplayClient.rejoinTarget}. Needs `links` (the new host relays nothing).
   */
  readonly rejoin?: RejoinTarget;
}

/** What the client learned from the host's CHALLENGE and SYNC. */
export interface JoinInfo {
  /** The nick the host assigned (the requested one, or e.g. `"bob (2)"` if it was taken). */
  readonly nick: string;
  /** The host's nick (its peer id). */
  readonly hostNick: string;
  /** The scheduler the host chose. */
  readonly mode: SessionMode;
  /** This client's player slot (0-based), or undefined for a spectator. */
  readonly slot: number | undefined;
  /** Player slots of the session. */
  readonly players: number;
  /** Frames of input delay. */
  readonly inputDelay: number;
  /** The frame the client starts from (players: the host's SYNC frame; spectators: the scheduler syncs them). */
  readonly frame: number;
  /** The players (slot and nick) at the time of SYNC. */
  readonly roster: readonly RosterEntry[];
  /** The core ports this client drives, its local players' in order (empty for a spectator). */
  readonly ports: readonly number[];
}

/** Events of a {@link NetplayClient}. */
export interface NetplayClientEventMap {
  /** Admitted as a player; the host waits for more players (`joined` of `players`, the host included). */
  waiting: {
    /** Players admitted so far, the host and this client included (from the host's WAIT). */
    readonly joined: number;
    /** Player slots of the session (the host's `players` option): the game starts when `joined` reaches it. */
    readonly players: number;
  };
  /** The handshake is done; the scheduler runs from now on. */
  joined: JoinInfo;
  /** Lockstep modes: frame `frame` ran on the client's core (read its state in the handler). */
  frame: {
    /** The frame number (0-based, from the game's start, the same numbering as the host's) that just ran on this client's core. */
    readonly frame: number;
    /** Every port's input of that frame, port 0 first (`players × portsPerSlot × inputBytes` bytes; valid in the handler only). */
    readonly inputs: Uint8Array;
  };
  /** A chat line relayed by the host (every peer gets the lines in the same order: `seq` 0, 1, 2, …). */
  chat: ChatEvent;
  /** The game paused at `frame` (lockstep: the first paused frame, the same on every peer; rollback: the host's frame). */
  paused: {
    /** The frame the pause took effect at, as the host's COMMAND names it: lockstep, the first frame no peer runs until the resume; rollback, the host's frame. */
    readonly frame: number;
  };
  /** The game resumed at `frame`. */
  resumed: {
    /** The first frame run again after the pause, as the host's COMMAND names it. */
    readonly frame: number;
  };
  /** Every peer starts `frame` from the power-on state. */
  reset: {
    /** The frame that every peer, this one included, runs from the core's power-on state. */
    readonly frame: number;
  };
  /**
   * Lockstep modes: frames up to `frame` are final (issue 13). lockstep-cs: every frame run. P2P
   * modes: only frames the host has run too (its progress reaches this peer with its pings), so
   * this trails the `frame` events; frames run after the last `final` (a client cut off from the
   * host, or removed) may differ from the host's and are never final.
   */
  final: {
    /** The newest final frame of this client (0-based; only grows): every frame up to it equals the host's. */
    readonly frame: number;
  };
  /**
   * Rollback with direct links: the host's connection closed (`nick`, at this client's `frame`);
   * the game goes on while the scheduler elects a new host (`host-changed`) or ends it (`closed`
   * with `host-lost` or `partitioned`, at the same final frame on every peer).
   */
  'host-left': {
    /** The nick of the host that left. */
    readonly nick: string;
    /** This client's current frame when it saw the host's connection close (not a final frame). */
    readonly frame: number;
  };
  /** Rollback: the scheduler's migration made `nick` the host (`self`: this client) at its `frame`. */
  'host-changed': {
    /** The new host's nick (this client's own when `self`). */
    readonly nick: string;
    /** This client's current frame when its scheduler chose the new host (each peer's own frame, not one agreed on). */
    readonly frame: number;
    /** True when this client is the new host: it now takes on the host's duties. */
    readonly self: boolean;
  };
  /** The session ended: `error` says why (a refusal, a timeout, or `closed`). Last event. */
  closed: {
    /** Why the session ended: a refusal's code and message (e.g. `bad-password`), `timeout`, `host-lost`, `removed`, `partitioned`, or `closed` for a plain close. */
    readonly error: SessionError;
  };
}

/** Stage of a {@link NetplayClient}. */
export type NetplayClientState = 'handshaking' | 'playing' | 'spectating' | 'closed';

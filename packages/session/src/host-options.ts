import type { Core } from '@netplay/state';
import type { Clock } from '@netplay/transport';
import type { HostAdmissionOptions } from './admission.js';
import type { ContentInfo } from './content.js';
import type { SessionError } from './errors.js';
import type { ChatEvent } from './host-control.js';
import type { RosterEntry } from './messages.js';
import type { SessionMode } from './mode.js';

/** Options of {@link NetplayHost}. */
export interface NetplayHostOptions extends HostAdmissionOptions {
  /** The host's core (power-on or loaded state: frame 0 of the session is the state it holds). */
  readonly core: Core;
  /** What the host runs; clients must match it exactly. */
  readonly content: ContentInfo;
  /** Time source for the scheduler and the handshake timeout. */
  readonly clock: Clock;
  /** The host's own nick (default `"host"`); it is also its peer id in the scheduler. */
  readonly nick?: string;
  /** The scheduler (default `rollback`). */
  readonly mode?: SessionMode;
  /**
   * Player slots including the host's (default 2): rollback, lockstep-p2p and frame-advance 2–16
   * (the game starts when every slot is filled; the host relays the clients' messages to each
   * other), lockstep-cs 2 up to the core's ports (at most 255; the game starts with the first
   * client, later ones join late).
   */
  readonly players?: number;
  /** Spectators admitted at most (default 8). */
  readonly maxSpectators?: number;
  /** Password clients must prove (salted SHA-256); none if undefined or empty. */
  readonly password?: string;
  /** Frames of input delay every player uses (default 0, at most 255). */
  readonly inputDelay?: number;
  /**
   * Source of the per-connection u32 salt (default: `crypto.getRandomValues`). Inject a seeded
   * `Prng`'s `nextU32` for reproducible tests.
   */
  readonly randomU32?: () => number;
  /** Frames per second of the game (default 60). */
  readonly fps?: number;
  /**
   * A client must finish the handshake (the pre-auth timeout of {@link HostAdmissionOptions.admission})
   * within this many ms (default 5 000).
   */
  readonly handshakeTimeoutMs?: number;
  /** Rollback: prediction window (default the scheduler's, 8). */
  readonly maxPrediction?: number;
  /** Rollback: frames between checksum exchanges (default the scheduler's, 60). */
  readonly checksumInterval?: number;
  /**
   * Rollback with 3 or more players: set up direct links between the players that offer them
   * (their `links` client option) before the game starts, so their messages to each other skip the
   * host and the game can go on under a new host when this one leaves (issues 17, 15). `timeoutMs`
   * (default 3 000) bounds each of the two waits (addresses, links); a pair not linked in time keeps
   * the relay. Default false: the host relays every client-to-client message.
   */
  readonly links?:
    | boolean
    | {
        /** Ms each of the two waits (addresses, then links) may take before the pairs not linked keep the host's relay (default 3 000). */
        readonly timeoutMs?: number;
      };
  /**
   * Ports (local players, couch + online) the host drives (default 1): its slot's first ports. The
   * host's `tick` takes their inputs end to end (or one array per port).
   */
  readonly localPlayers?: number;
  /**
   * Ports each player slot holds (default `localPlayers`, 1..16): slot s owns ports
   * `s × maxLocalPlayers …`, so the core needs `players × maxLocalPlayers` ports. A client asking
   * for more is refused with `bad-argument`. lockstep-p2p: `maxLocalPlayers × inputBytes` ≤ 4.
   */
  readonly maxLocalPlayers?: number;
}

/** A connected peer as the host sees it. */
export interface HostPeerInfo {
  /** The nick the host assigned (unique); undefined before HELLO. */
  readonly nick: string | undefined;
  /** Player slot (0 is the host), or undefined for a spectator or before admission. */
  readonly slot: number | undefined;
  /** `handshaking` (before SYNC), `playing` or `spectating` (a spectator admitted before the start waits for it). */
  readonly stage: 'handshaking' | 'playing' | 'spectating';
  /** The transport's remote address. */
  readonly remoteAddress: string;
}

/** Events of a {@link NetplayHost}. */
export interface NetplayHostEventMap {
  /** A client passed the handshake (a player got SYNC, or a spectator was admitted). */
  'peer-joined': {
    /** The nick the host assigned the client (its HELLO nick, or `nick (2)`, … when that was taken). */
    readonly nick: string;
    /** The player slot it got (1 .. players − 1; the host holds 0), or undefined for a spectator. */
    readonly slot: number | undefined;
    /** True when a player who left came back with its nick into the slot it had (lockstep-cs rejoin). */
    readonly rejoined?: boolean;
  };
  /** A client was refused; its connection is closed with `error.closeReason`. */
  'peer-refused': {
    /** The nick it asked for or was assigned; undefined when it was refused before its HELLO was read. */
    readonly nick: string | undefined;
    /** The transport's address of the refused connection (`Connection.remoteAddress`, e.g. `"1.2.3.4:5000"`). */
    readonly remoteAddress: string;
    /** Why: its `code` (e.g. `bad-password`, `server-full`, `protocol`) and a message naming what was wrong; the peer got the same in REFUSE. */
    readonly error: SessionError;
  };
  /** An admitted client's connection closed. */
  'peer-left': {
    /** The nick the host had assigned the client. */
    readonly nick: string;
    /** The player slot it held (now free for the next player or its rejoin), or undefined for a spectator. */
    readonly slot: number | undefined;
    /** The connection's close reason: `"<code>: <message>"` when the host refused or removed it (see `SessionError.fromCloseReason`), else the transport's reason. */
    readonly reason: string;
  };
  /** The first player joined: the scheduler runs from `frame`. */
  started: {
    /** The frame the scheduler starts at: 0 (the host's core state when it started is everyone's frame 0). */
    readonly frame: number;
    /** The players at the start: the host first (slot 0), then each admitted player with its slot and nick, as sent in SYNC. */
    readonly roster: readonly RosterEntry[];
  };
  /**
   * The host's scheduler (rollback or lockstep) ended by the finality rule (`error.code` is `removed`,
   * `host-lost` or `partitioned`; `frame` is its last final frame). Every client connection is
   * closed with `error.closeReason`; `tick` does nothing more.
   */
  ended: {
    /** The host's last final frame: every frame up to it agrees with every peer's; none after it is final. */
    readonly frame: number;
    /** Why the game ended: `code` `removed`, `host-lost` or `partitioned`, and a message naming the frame and the cause. */
    readonly error: SessionError;
  };
  /** Lockstep modes: frames up to `frame` are final (the host's: every frame it ran; emitted after each). */
  final: {
    /** The newest final frame (0-based, grows by one or more each time). */
    readonly frame: number;
  };
  /** Lockstep modes: frame `frame` ran on the host's core (read its state in the handler). */
  frame: {
    /** The frame number (0-based, from the game's start) that just ran on the host's core. */
    readonly frame: number;
    /** Every port's input of that frame, port 0 first (`players × maxLocalPlayers × inputBytes` bytes; valid in the handler only). */
    readonly inputs: Uint8Array;
  };
  /** A chat line (the host's or a client's, relayed to every client in this order: `seq` 0, 1, 2, …). */
  chat: ChatEvent;
  /** The game paused at `frame` (lockstep: the first paused frame on every peer; rollback: the host's frame). */
  paused: {
    /** The frame the pause took effect at: lockstep, the first frame no peer runs until the resume; rollback, the host's current frame. */
    readonly frame: number;
  };
  /** The game resumed at `frame`. */
  resumed: {
    /** The first frame run again after the pause (the same on every peer in lockstep). */
    readonly frame: number;
  };
  /** Every peer starts `frame` from the power-on state. */
  reset: {
    /** The frame that every peer runs from the core's power-on state (the same frame on every peer). */
    readonly frame: number;
  };
}

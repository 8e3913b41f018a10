import type { ClientServerServer, LockstepRunner } from '@netplay/lockstep';
import type { CoreDriver, P2PSession } from '@netplay/rollback';
import type { Core } from '@netplay/state';
import type { Clock, Emitter } from '@netplay/transport';
import type { HostGuard } from './admission.js';
import type { HostControl } from './host-control.js';
import type { HandshakeHost } from './host-handshake.js';
import type { HostLinks } from './host-links.js';
import type { HostP2P } from './host-lockstep.js';
import type { NetplayHostEventMap, NetplayHostOptions } from './host-options.js';
import type { Peer } from './host-peer.js';
import type { SlotMemory } from './host-rejoin.js';
import type { RollbackRejoins } from './host-rollback-rejoin.js';
import type { LockstepSpectators } from './host-spectators.js';
import type { LockstepFinality } from './lockstep-finality.js';
import type { SessionMode } from './mode.js';
import type { RelayFramer } from './relay.js';

/** The host's running game: its mode's scheduler once started (every field undefined before). */
export interface HostGame {
  /** Rollback: the scheduler. */
  session: P2PSession | undefined;
  /** Rollback: the driver that runs the scheduler's requests on the core. */
  driver: CoreDriver | undefined;
  /** Rollback: frames time sync asked the host to skip. */
  wait: number;
  /** lockstep-cs: the server. */
  server: ClientServerServer | undefined;
  /** Lockstep: the runner. */
  runner: LockstepRunner | undefined;
  /** Lockstep: the finality rule's watcher of the runner's scheduler. */
  finality: LockstepFinality | undefined;
  /** Lockstep: the core the runner drives (a `SlotCore` over the host's core unless the layout is the identity). */
  lockstepCore: Core | undefined;
  /** lockstep-p2p and frame-advance: the host's scheduler, the mode's wire and one routed connection per client slot. */
  p2p: HostP2P | undefined;
}

/** A game that has not started. */
export function newHostGame(): HostGame {
  return {
    session: undefined,
    driver: undefined,
    wait: 0,
    server: undefined,
    runner: undefined,
    finality: undefined,
    lockstepCore: undefined,
    p2p: undefined,
  };
}

/** True once the scheduler runs. */
export function gameStarted(game: HostGame): boolean {
  return game.session !== undefined || game.runner !== undefined;
}

/** The next frame the host simulates (0 before the start). */
export function gameFrame(game: HostGame): number {
  return game.session?.currentFrame ?? game.runner?.schedulerRef.nextFrame ?? 0;
}

/**
 * What `NetplayHost` shares with the modules that admit, start, route and drop its peers: its
 * settings, its peers and their indexes, its parts, and the running game.
 */
export interface HostContext {
  readonly mode: SessionMode;
  readonly nick: string;
  /** Player slots, the host's included. */
  readonly players: number;
  readonly inputDelay: number;
  readonly core: Core;
  readonly clock: Clock;
  readonly options: NetplayHostOptions;
  /** Players can enter the running game (rejoin, mid-game join): see `joinsMidGame`. */
  readonly rejoins: boolean;
  /** The host's state when the session was created (lockstep: the power-on state every peer shares). */
  readonly initialState: Uint8Array;
  readonly game: HostGame;
  /** Every connection, from arrival to close. */
  readonly peers: Set<Peer>;
  readonly byNick: Map<string, Peer>;
  /** Admitted players by slot (rollback and P2P lockstep relay). */
  readonly bySlot: Map<number, Peer>;
  /** Who held which slot, for rejoins. */
  readonly slots: SlotMemory;
  /** Rollback: nicks of admitted peers that left; the scheduler knows them as peer ids, so nobody gets them again. */
  readonly retired: Set<string>;
  readonly guard: HostGuard<Peer>;
  /** The handshake steps' view of the host. */
  readonly handshake: HandshakeHost;
  /** Local players, chat, pause / resume, reset. */
  readonly control: HostControl;
  /** Rollback: direct links between the players, if the `links` option is on. */
  readonly links: HostLinks;
  /** Rollback: players entering the running game. */
  readonly entering: RollbackRejoins;
  /** Lockstep spectators. */
  readonly watchers: LockstepSpectators;
  readonly framer: RelayFramer;
  readonly emitter: Emitter<NetplayHostEventMap>;
  randomU32(): number;
}

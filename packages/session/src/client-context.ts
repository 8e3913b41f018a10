import type { LockstepRunner } from '@netplay/lockstep';
import type { CoreDriver, P2PSession, SpectatorSession } from '@netplay/rollback';
import type { Core } from '@netplay/state';
import type { Connection, Emitter, Unsubscribe } from '@netplay/transport';
import type { ClientControl } from './client-control.js';
import type { ClientMesh } from './client-mesh.js';
import type { JoinInfo, NetplayClientEventMap, NetplayClientOptions } from './client-options.js';
import type { SessionError } from './errors.js';
import type { LockstepFinality } from './lockstep-finality.js';
import type { P2PLockstepShape } from './p2p-lockstep.js';
import { RelayFramer } from './relay.js';
import type { RoutedConnection } from './routed-connection.js';

/** Game messages kept until the scheduler runs (they may arrive before SYNC is handled). */
export const MAX_EARLY_MESSAGES = 1024;

/** A client's running game: its mode's scheduler once SYNC arrived (every scheduler undefined before). */
export interface ClientGame {
  /** Rollback: a player's scheduler. */
  p2p: P2PSession | undefined;
  /** Rollback: a spectator's scheduler. */
  watch: SpectatorSession | undefined;
  /** Rollback: the driver that runs the scheduler's requests on the core. */
  driver: CoreDriver | undefined;
  /** Rollback: frames time sync asked this player to skip. */
  wait: number;
  /** Rollback, entering a running game (ENTRY): the host's WELCOME and state, for the scheduler's `join`. */
  entry: { welcome: Uint8Array; state: Uint8Array } | undefined;
  /** Lockstep: the runner. */
  runner: LockstepRunner | undefined;
  /** Lockstep: the finality rule's watcher of the runner's scheduler. */
  finality: LockstepFinality | undefined;
  /** Lockstep: the core the runner drives (a `SlotCore` unless the layout is the identity). */
  lockstepCore: Core | undefined;
  /** lockstep-p2p and frame-advance: the mode's wire and one routed connection per other player's slot. */
  routed: { readonly shape: P2PLockstepShape; readonly routes: Map<number, RoutedConnection> } | undefined;
  /** Game messages that arrived before the scheduler (at most {@link MAX_EARLY_MESSAGES}). */
  readonly early: Array<{ channel: string; data: Uint8Array }>;
  /** Rollback relay: peer nick → player slot, and back. */
  readonly slotOf: Map<string, number>;
  readonly nickOf: Map<number, string>;
  readonly framer: RelayFramer;
}

/** A game that has not started. */
export function newClientGame(): ClientGame {
  return {
    p2p: undefined,
    watch: undefined,
    driver: undefined,
    wait: 0,
    entry: undefined,
    runner: undefined,
    finality: undefined,
    lockstepCore: undefined,
    routed: undefined,
    early: [],
    slotOf: new Map(),
    nickOf: new Map(),
    framer: new RelayFramer(),
  };
}

/** What `NetplayClient` shares with the modules that start its game and route its messages. */
export interface ClientContext {
  readonly core: Core;
  /** The connection to the host. */
  readonly conn: Connection;
  readonly options: NetplayClientOptions;
  readonly control: ClientControl;
  readonly emitter: Emitter<NetplayClientEventMap>;
  readonly game: ClientGame;
  /** Handlers to remove when the session ends (the first two: the host connection's). */
  readonly offs: Unsubscribe[];
  /** Rollback: the direct links and the hand-over, if `links` was given (after CHALLENGE). */
  mesh(): ClientMesh | undefined;
  /** The host's nick (after CHALLENGE). */
  hostNick(): string | undefined;
  /** The client is admitted in `stage` with `info` (`joined` is emitted by the caller). */
  enter(stage: 'playing' | 'spectating', info: JoinInfo): void;
  /** Refuses the host (REFUSE + close) and ends with `error`. */
  fail(error: SessionError): void;
  /** A message from the host (the early game messages are replayed through it once the game runs). */
  message(channel: string, data: Uint8Array): void;
}

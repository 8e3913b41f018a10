import type { Core } from '@netplay/state';
import {
  type Clock,
  type Connection,
  type Handler,
  OptionChecks,
  systemClock,
  type Unsubscribe,
  withDefault,
} from '@netplay/transport';
import { CONTROL_CHANNEL, INPUT_CHANNEL } from './channels.js';
import { ConnectionSet } from './connections.js';
import { CoreDriver } from './driver.js';
import { RollbackError } from './errors.js';
import type { SessionEventMap } from './events.js';
import type { SessionEndReason } from './finality.js';
import { P2PSession } from './p2p-session.js';
import type { Predictor } from './predictor.js';
import type { SessionRequest } from './requests.js';
import type { PeerStats, SessionStats } from './session-stats.js';
import { SpectatorSession } from './spectator-session.js';

/** Options of {@link rollback}: everything but the connections, which the builder's chain adds. */
export interface RollbackOptions {
  /** The game: any @netplay/state `Core` (its `ports` must be at least `players`). */
  readonly core: Core;
  /** Number of player slots, 2..16. */
  readonly players: number;
  /** The slot of this peer's player, 0..players − 1. */
  readonly local: number;
  /** The slot of the host's player (default 0): it decides leaves, serves spectators and repairs desyncs. */
  readonly host?: number;
  /** Time source (default `systemClock`; the simulated network's `net.clock` in tests). */
  readonly clock?: Clock;
  /** Local input delay in frames, 0..30 (default 0). */
  readonly inputDelay?: number;
  /** Frames simulated on predicted inputs before the session stalls, 0..120 (default 8; 0 is plain lockstep). */
  readonly maxPrediction?: number;
  /** Frames between checksum exchanges, a non-negative integer (default 60; 0 disables desync detection). */
  readonly checksumInterval?: number;
  /** Frames per second of the game, in (0, 1000] (default 60). */
  readonly fps?: number;
  /** Ms without life after which a peer is reported interrupted (default 750). */
  readonly interruptMs?: number;
  /** Ms without life after which a peer is dropped, ≥ `interruptMs` (default 5000; 0: never). */
  readonly disconnectMs?: number;
  /** Frames between two `wait-recommended` events, ≥ 1 (default 60). */
  readonly waitInterval?: number;
  /** How remote inputs are guessed (default `repeatLastInput`). */
  readonly predictor?: Predictor;
  /** Let {@link RollbackGame.tick} skip the frames time sync recommends (default true). */
  readonly timeSync?: boolean;
}

/** The same options with every default filled in (what {@link RollbackBuilder.options} holds). */
export type ResolvedRollbackOptions = Required<Omit<RollbackOptions, 'predictor'>> & {
  /** The predictor given, or undefined when none was (the session then repeats each player's last input). */
  readonly predictor: Predictor | undefined;
};

function invalid(option: string, message: string): RollbackError {
  return new RollbackError('invalid-option', `${option}: ${message}`, undefined, option);
}

const check = new OptionChecks(invalid);
const def = withDefault;

function isCore(core: unknown): core is Core {
  if (typeof core !== 'object' || core === null) return false;
  const c = core as Partial<Record<keyof Core, unknown>>;
  return (
    typeof c.inputBytes === 'number' &&
    typeof c.stateBytes === 'number' &&
    typeof c.ports === 'number' &&
    typeof c.setInput === 'function' &&
    typeof c.advance === 'function' &&
    typeof c.saveInto === 'function' &&
    typeof c.load === 'function' &&
    typeof c.checksum === 'function'
  );
}

/**
 * Checks `options` and fills in the defaults.
 * @throws RollbackError `invalid-option`, with `option` naming the first option that is wrong.
 */
export function resolveRollbackOptions(options: RollbackOptions): ResolvedRollbackOptions {
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object');
  const core = options.core;
  if (!isCore(core)) throw invalid('core', 'must implement the @netplay/state Core contract');
  if (!Number.isInteger(core.inputBytes) || core.inputBytes < 1)
    throw invalid('core', `inputBytes must be a positive integer, got ${core.inputBytes}`);
  const players = check.integer('players', options.players, 2, 16);
  if (players > core.ports) throw invalid('players', `${players} players but the core has ${core.ports} ports`);
  const local = check.integer('local', options.local, 0, players - 1);
  const host = check.integer('host', def(options.host, 0), 0, players - 1);
  const clock = check.clock('clock', def(options.clock, systemClock));
  const inputDelay = check.integer('inputDelay', def(options.inputDelay, 0), 0, 30);
  const maxPrediction = check.integer('maxPrediction', def(options.maxPrediction, 8), 0, 120);
  const checksumInterval = check.integer('checksumInterval', def(options.checksumInterval, 60), 0, 2 ** 31 - 1);
  const fps = def(options.fps, 60);
  if (typeof fps !== 'number' || !(fps > 0 && fps <= 1000)) throw invalid('fps', `must be in (0, 1000], got ${fps}`);
  const interruptMs = check.finite('interruptMs', def(options.interruptMs, 750), 0);
  const disconnectMs = check.finite('disconnectMs', def(options.disconnectMs, 5000), 0);
  if (disconnectMs !== 0 && disconnectMs < interruptMs)
    throw invalid('disconnectMs', `must be 0 or ≥ interruptMs (${interruptMs}), got ${disconnectMs}`);
  const waitInterval = check.integer('waitInterval', def(options.waitInterval, 60), 1, 2 ** 31 - 1);
  const predictor = check.optionalFunction('predictor', options.predictor);
  const timeSync = check.boolean('timeSync', def(options.timeSync, true));
  return {
    core,
    players,
    local,
    host,
    clock,
    inputDelay,
    maxPrediction,
    checksumInterval,
    fps,
    interruptMs,
    disconnectMs,
    waitInterval,
    predictor,
    timeSync,
  };
}

function checkConnection(option: string, connection: Connection): void {
  if (typeof connection !== 'object' || connection === null || typeof connection.send !== 'function')
    throw invalid(option, 'must be a @netplay/transport Connection');
  const names = connection.channels.map((c) => c.name);
  if (!names.includes(INPUT_CHANNEL) || !names.includes(CONTROL_CHANNEL))
    throw invalid(option, `the connection must declare ROLLBACK_CHANNELS (has ${names.join(', ') || 'none'})`);
}

/**
 * Builds a rollback session for one peer, GGRS-style: options first (checked, defaults filled in),
 * then one connection per remote player and per spectator, then {@link start}.
 *
 * ```ts
 * const game = rollback({ core, players: 2, local: 0 }).remote(1, conn).start();
 * every frame: game.tick(padBytes);
 * ```
 */
export class RollbackBuilder {
  /** The checked options, defaults filled in. */
  readonly options: ResolvedRollbackOptions;
  private readonly remotes = new Map<number, { peer: string; connection: Connection }>();
  private readonly watchers: Array<{ peer: string; connection: Connection }> = [];
  private started = false;

  constructor(options: RollbackOptions) {
    this.options = resolveRollbackOptions(options);
  }

  /**
   * The connection to the peer playing slot `player` (every other slot needs one: a full mesh).
   * `peer` names it in events and stats (default `player<n>`).
   * @throws RollbackError `invalid-option` (`option` = `remote(<player>)`) for a bad slot, a slot
   * given twice, the local slot, or a connection without the rollback channels.
   */
  remote(player: number, connection: Connection, peer = `player${player}`): this {
    const o = this.options;
    const name = `remote(${String(player)})`;
    if (!Number.isInteger(player) || player < 0 || player >= o.players)
      throw invalid(name, `player must be 0..${o.players - 1}`);
    if (player === o.local) throw invalid(name, `slot ${player} is the local player`);
    if (this.remotes.has(player)) throw invalid(name, `slot ${player} is given twice`);
    checkConnection(name, connection);
    this.checkPeerName(name, peer);
    this.remotes.set(player, { peer, connection });
    return this;
  }

  /**
   * A spectator's connection (host only): it watches through a `SpectatorSession` (see
   * {@link rollbackSpectator}); `peer` names it (default `spectator<n>`).
   * @throws RollbackError `invalid-option` (`option` = `spectator`) on a peer that is not the host.
   */
  spectator(connection: Connection, peer = `spectator${this.watchers.length}`): this {
    if (this.options.local !== this.options.host)
      throw invalid('spectator', `only the host (slot ${this.options.host}) serves spectators`);
    checkConnection('spectator', connection);
    this.checkPeerName('spectator', peer);
    this.watchers.push({ peer, connection });
    return this;
  }

  private checkPeerName(option: string, peer: string): void {
    if (typeof peer !== 'string' || peer.length === 0) throw invalid(option, 'peer name must be a non-empty string');
    for (const r of this.remotes.values()) if (r.peer === peer) throw invalid(option, `peer name ${peer} is taken`);
    for (const w of this.watchers) if (w.peer === peer) throw invalid(option, `peer name ${peer} is taken`);
  }

  /**
   * Creates the session, its `CoreDriver` and the bindings to the connections.
   * @throws RollbackError `invalid-option` (`option` = `remote`) when a slot has no connection, or
   * when called twice.
   */
  start(): RollbackGame {
    const o = this.options;
    if (this.started) throw invalid('start', 'the builder already started its session');
    const missing: number[] = [];
    for (let p = 0; p < o.players; p++) if (p !== o.local && !this.remotes.has(p)) missing.push(p);
    if (missing.length > 0) throw invalid('remote', `no connection for player slot(s) ${missing.join(', ')}`);
    this.started = true;
    const conns = new ConnectionSet();
    let driver: CoreDriver | undefined;
    const hostPeer = o.local === o.host ? undefined : this.remotes.get(o.host)!.peer;
    const session = new P2PSession({
      players: o.players,
      inputBytes: o.core.inputBytes,
      localPlayer: o.local,
      remotes: [...this.remotes].map(([player, r]) => ({ peer: r.peer, player })),
      isHost: o.local === o.host,
      ...(hostPeer !== undefined ? { hostPeer } : {}),
      clock: o.clock,
      send: conns.send,
      maxPrediction: o.maxPrediction,
      inputDelay: o.inputDelay,
      checksumInterval: o.checksumInterval,
      fps: o.fps,
      interruptMs: o.interruptMs,
      disconnectMs: o.disconnectMs,
      waitInterval: o.waitInterval,
      ...(o.predictor !== undefined ? { predictor: o.predictor } : {}),
      stateSource: (frame) => driver?.stateOf(frame),
    });
    driver = new CoreDriver(o.core, session.ringFrames);
    const offs: Unsubscribe[] = [];
    for (const r of this.remotes.values()) offs.push(conns.bind(r.peer, r.connection, session));
    for (const w of this.watchers) offs.push(conns.bind(w.peer, w.connection, session));
    return new RollbackGame(session, driver, conns, offs, o.timeSync);
  }
}

/**
 * Starts building a rollback session: `rollback({ core, players: 2, local: 0 }).remote(1, conn).start()`.
 * @throws RollbackError `invalid-option`, with `option` naming the first bad option.
 */
export function rollback(options: RollbackOptions): RollbackBuilder {
  return new RollbackBuilder(options);
}

/** Counts the frames a step simulated for the first time (resimulations left out). */
function newFrames(requests: readonly SessionRequest[]): number {
  let n = 0;
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i]!;
    if (r.kind === 'advance' && !r.resimulating) n++;
  }
  return n;
}

/**
 * A running rollback session (what {@link RollbackBuilder.start} returns): call {@link tick} once
 * per frame with the local input; it carries out the session's save/load/advance requests on the
 * core. The low-level `session` and `driver` stay reachable for anything the game needs beyond.
 */
export class RollbackGame {
  private wait = 0;
  private readonly offWait: Unsubscribe;

  /** @internal Made by {@link RollbackBuilder.start}. */
  constructor(
    /** The sans-I/O session (requests, events, stats, host commands). */
    readonly session: P2PSession,
    /** Carries the requests out on the core; `driver.stateOf(frame)` reads stored states. */
    readonly driver: CoreDriver,
    private readonly conns: ConnectionSet,
    private readonly offs: Unsubscribe[],
    timeSync: boolean,
  ) {
    this.offWait = timeSync
      ? session.on('wait-recommended', ({ frames }) => {
          this.wait = Math.max(this.wait, frames);
        })
      : () => {};
  }

  /** The core driven. */
  get core(): Core {
    return this.driver.core;
  }

  /**
   * One frame: hands `input` (`core.inputBytes` bytes) to the session and runs what it asks of
   * the core. When time sync recommended waiting, the frame is skipped instead (the session only
   * keeps its links alive). Returns the number of new frames simulated: 1, or 0 when waiting,
   * stalled (the prediction window is full) or ended.
   * @throws RollbackError `bad-argument` for an input of the wrong size; `state-unavailable` if a
   * rollback names a state no longer stored.
   */
  tick(input: Uint8Array): number {
    const s = this.session;
    if (this.wait > 0) {
      this.wait--;
      s.poll();
      return 0;
    }
    s.addLocalInput(input);
    const requests = s.advanceFrame();
    this.driver.run(requests, s);
    return newFrames(requests);
  }

  /** Subscribes to a session event (see `SessionEventMap`); returns the unsubscribe function. */
  on<K extends keyof SessionEventMap>(type: K, handler: Handler<SessionEventMap, K>): Unsubscribe {
    return this.session.on(type, handler);
  }

  /** The next frame to simulate. */
  get currentFrame(): number {
    return this.session.currentFrame;
  }

  /** The last frame final for every peer (its state never changes again). */
  get confirmedFrame(): number {
    return this.session.confirmedFrame;
  }

  /** Why the session ended, or undefined while it runs. */
  get endReason(): SessionEndReason | undefined {
    return this.session.endReason;
  }

  /** Rollbacks, stalls, desyncs (see `SessionStats`). */
  get stats(): SessionStats {
    return this.session.stats;
  }

  /** Per-peer RTT, frame advantage, bandwidth (see `PeerStats`). */
  peerStats(): PeerStats[] {
    return this.session.peerStats();
  }

  /** Messages dropped because a connection was closed or full. */
  get droppedMessages(): number {
    return this.conns.dropped;
  }

  /**
   * Stops listening to the connections (it does not close them: they belong to the caller, who
   * closes them to tell the peers it left).
   */
  stop(): void {
    this.offWait();
    for (const off of this.offs.splice(0)) off();
  }
}

/** Options of {@link rollbackSpectator}. */
export interface RollbackSpectatorOptions {
  /** The same game as the players' (its state is replaced by the host's savestate on joining). */
  readonly core: Core;
  /** Confirmed frames buffered beyond which two frames run per tick (default 4). */
  readonly catchUpThreshold?: number;
}

/**
 * Builds a spectator: `rollbackSpectator({ core }).host(conn).start()`; the host's builder lists
 * the other end with {@link RollbackBuilder.spectator}.
 */
export class RollbackSpectatorBuilder {
  private readonly core: Core;
  private readonly catchUpThreshold: number;
  private hostConnection: Connection | undefined;

  constructor(options: RollbackSpectatorOptions) {
    if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object');
    if (!isCore(options.core)) throw invalid('core', 'must implement the @netplay/state Core contract');
    this.core = options.core;
    this.catchUpThreshold = check.integer('catchUpThreshold', def(options.catchUpThreshold, 4), 1, 1000);
  }

  /** The connection to the host. */
  host(connection: Connection): this {
    checkConnection('host', connection);
    this.hostConnection = connection;
    return this;
  }

  /**
   * Creates the spectator session and binds it to the host's connection.
   * @throws RollbackError `invalid-option` (`option` = `host`) without a host connection.
   */
  start(): RollbackSpectatorGame {
    const connection = this.hostConnection;
    if (connection === undefined) throw invalid('host', 'call host(connection) before start()');
    const conns = new ConnectionSet();
    const session = new SpectatorSession({
      hostPeer: 'host',
      send: conns.send,
      catchUpThreshold: this.catchUpThreshold,
    });
    const driver = new CoreDriver(this.core, session.ringFrames);
    const off = conns.bind('host', connection, session);
    return new RollbackSpectatorGame(session, driver, off);
  }
}

/** Starts building a spectator of a rollback session. */
export function rollbackSpectator(options: RollbackSpectatorOptions): RollbackSpectatorBuilder {
  return new RollbackSpectatorBuilder(options);
}

/** A running spectator: call {@link tick} once per frame. */
export class RollbackSpectatorGame {
  /** @internal Made by {@link RollbackSpectatorBuilder.start}. */
  constructor(
    /** The sans-I/O spectator session. */
    readonly session: SpectatorSession,
    /** Carries its requests out on the core. */
    readonly driver: CoreDriver,
    private readonly off: Unsubscribe,
  ) {}

  /** The core driven. */
  get core(): Core {
    return this.driver.core;
  }

  /** One frame: runs the next confirmed frame(s) the host streamed; returns how many ran. */
  tick(): number {
    const requests = this.session.advanceFrame();
    this.driver.run(requests, this.session);
    return newFrames(requests);
  }

  /** The next frame to simulate (undefined before the host's savestate arrived). */
  get currentFrame(): number | undefined {
    return this.session.currentFrame;
  }

  /** Subscribes to a session event; returns the unsubscribe function. */
  on<K extends keyof SessionEventMap>(type: K, handler: Handler<SessionEventMap, K>): Unsubscribe {
    return this.session.on(type, handler);
  }

  /** Stops listening to the host's connection (it does not close it). */
  stop(): void {
    this.off();
  }
}

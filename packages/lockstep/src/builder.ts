import type { Core } from '@netplay/state';
import {
  type Clock,
  type Connection,
  OptionChecks,
  systemClock,
  type Unsubscribe,
  withDefault,
} from '@netplay/transport';
import { CLIENT_SERVER_CHANNELS, ClientServerServer } from './client-server.js';
import { ClientServerClient } from './client-server-client.js';
import { LockstepError } from './errors.js';
import { FRAME_ADVANCE_CHANNELS, FrameAdvancePeer } from './frame-advance.js';
import type { EndReason, LivenessOptions, LockstepEvent } from './liveness.js';
import type { LoggedFrame } from './log.js';
import { MESH_CHANNELS, MeshPeer } from './mesh.js';
import type { PeerReport } from './report.js';
import { LockstepRunner } from './runner.js';
import type { FrameRequest, LockstepScheduler } from './types.js';

/** The three lockstep modes: FCE Ultra's client-server, MAMEHub's mesh, FS-UAE's frame-advance. */
export type LockstepMode = 'client-server' | 'mesh' | 'frame-advance';

/** Options of {@link lockstep}: everything but the connections, which the builder's chain adds. */
export interface LockstepOptions {
  /** The game: any @netplay/state `Core` (mesh: `inputBytes` 1..4). */
  readonly core: Core;
  /** Which scheduler runs. */
  readonly mode: LockstepMode;
  /** This peer's id, 0..65535, unique in the session; the other peers name it so in {@link LockstepBuilder.peer}. */
  readonly id: number;
  /**
   * The port this peer's input drives, 0..ports − 1 (default: its id). A client-server client's port
   * is the one the server gives it (`peer(id, conn, port)` on the server), so it is not an option there;
   * a server may pass -1 to have no player.
   */
  readonly port?: number;
  /** The id of the host (client-server: the server), default 0. */
  readonly host?: number;
  /** Time source (default `systemClock`; `net.clock` on the simulated network). */
  readonly clock?: Clock;
  /** Frame duration in ms, > 0 and ≤ 1000 (default 1000 / 60). */
  readonly frameMs?: number;
  /** When frame 0 is due on `clock` (default: `clock.now()` at start). Mesh and frame-advance peers must agree on it. */
  readonly startMs?: number;
  /** Extra delay in ms added to the latency estimate (mesh and frame-advance; default 0). */
  readonly extraDelayMs?: number;
  /** Frame-advance: seed of the event-order PRNG (default: the id); client-server: the UDP magic (default 1). */
  readonly seed?: number;
  /** Frame-advance: give every player the session's largest latency (default false). */
  readonly equalize?: boolean;
  /** Liveness by progress (defaults 750 / 5000 ms). */
  readonly liveness?: LivenessOptions;
  /** Keep every frame run in {@link LockstepGame.log} (default false). */
  readonly log?: boolean;
  /** Called after each frame ran (the request and its `inputs` are reused: copy what you keep). */
  readonly onFrame?: (req: FrameRequest) => void;
}

/** The options with their defaults filled in. */
export interface ResolvedLockstepOptions {
  /** As {@link LockstepOptions.core}, default filled in. */
  readonly core: Core;
  /** As {@link LockstepOptions.mode}, default filled in. */
  readonly mode: LockstepMode;
  /** As {@link LockstepOptions.id}, default filled in. */
  readonly id: number;
  /** As {@link LockstepOptions.port}, default filled in. */
  readonly port: number;
  /** As {@link LockstepOptions.host}, default filled in. */
  readonly host: number;
  /** As {@link LockstepOptions.clock}, default filled in. */
  readonly clock: Clock;
  /** As {@link LockstepOptions.frameMs}, default filled in. */
  readonly frameMs: number;
  /** As {@link LockstepOptions.startMs}, default filled in. */
  readonly startMs: number | undefined;
  /** As {@link LockstepOptions.extraDelayMs}, default filled in. */
  readonly extraDelayMs: number;
  /** As {@link LockstepOptions.seed}, default filled in. */
  readonly seed: number;
  /** As {@link LockstepOptions.equalize}, default filled in. */
  readonly equalize: boolean;
  /** As {@link LockstepOptions.liveness}, default filled in. */
  readonly liveness: LivenessOptions | undefined;
  /** As {@link LockstepOptions.log}, default filled in. */
  readonly log: boolean;
  /** As {@link LockstepOptions.onFrame}, default filled in. */
  readonly onFrame: ((req: FrameRequest) => void) | undefined;
}

function invalid(option: string, message: string): LockstepError {
  return new LockstepError('invalid-option', `${option}: ${message}`, option);
}

const check = new OptionChecks(invalid);
const def = withDefault;

const MODES: readonly LockstepMode[] = ['client-server', 'mesh', 'frame-advance'];

/**
 * Checks `options` and fills in the defaults.
 * @throws LockstepError `invalid-option`, with `option` naming the first option that is wrong.
 */
export function resolveLockstepOptions(options: LockstepOptions): ResolvedLockstepOptions {
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object');
  const core = options.core as Partial<Core> | null | undefined;
  if (
    typeof core !== 'object' ||
    core === null ||
    typeof core.ports !== 'number' ||
    typeof core.inputBytes !== 'number' ||
    typeof core.advance !== 'function' ||
    typeof core.setInput !== 'function' ||
    typeof core.saveInto !== 'function' ||
    typeof core.load !== 'function'
  )
    throw invalid('core', 'must implement the @netplay/state Core contract');
  const mode = options.mode;
  if (!MODES.includes(mode)) throw invalid('mode', `must be one of ${MODES.join(', ')}, got ${String(mode)}`);
  if (mode === 'mesh' && !(core.inputBytes >= 1 && core.inputBytes <= 4))
    throw invalid('core', `the mesh carries 1..4 input bytes per port, the core has ${core.inputBytes}`);
  const id = check.integer('id', options.id, 0, 65535);
  const host = check.integer('host', def(options.host, 0), 0, 65535);
  const isServer = mode === 'client-server' && id === host;
  if (mode === 'client-server' && !isServer && options.port !== undefined)
    throw invalid('port', 'a client-server client gets its port from the server (peer(id, conn, port) there)');
  const isClient = mode === 'client-server' && !isServer;
  const port = isClient ? -1 : check.integer('port', def(options.port, id), isServer ? -1 : 0, core.ports - 1);
  const clock = check.clock('clock', def(options.clock, systemClock));
  const frameMs = check.finite('frameMs', def(options.frameMs, 1000 / 60), 0);
  if (frameMs === 0 || frameMs > 1000) throw invalid('frameMs', `must be in (0, 1000], got ${frameMs}`);
  const startMs = options.startMs === undefined ? undefined : check.finite('startMs', options.startMs, 0);
  const extraDelayMs = check.finite('extraDelayMs', def(options.extraDelayMs, 0), 0);
  const seed = check.integer('seed', def(options.seed, mode === 'frame-advance' ? id : 1), -(2 ** 31), 2 ** 32 - 1);
  const equalize = check.boolean('equalize', def(options.equalize, false));
  const liveness = options.liveness;
  if (liveness !== undefined) {
    if (typeof liveness !== 'object' || liveness === null) throw invalid('liveness', 'must be an object');
    if (liveness.interruptMs !== undefined) check.finite('liveness', liveness.interruptMs, 0);
    if (liveness.disconnectMs !== undefined) check.finite('liveness', liveness.disconnectMs, 0);
  }
  const log = check.boolean('log', def(options.log, false));
  const onFrame = check.optionalFunction('onFrame', options.onFrame);
  return {
    core: core as Core,
    mode,
    id,
    port,
    host,
    clock,
    frameMs,
    startMs,
    extraDelayMs,
    seed,
    equalize,
    liveness,
    log,
    onFrame,
  };
}

/** The channels a connection must declare for `mode`. */
export function lockstepChannels(mode: LockstepMode) {
  return mode === 'client-server' ? CLIENT_SERVER_CHANNELS : mode === 'mesh' ? MESH_CHANNELS : FRAME_ADVANCE_CHANNELS;
}

/**
 * Builds a lockstep peer: options first (checked, defaults filled in), then one connection per
 * other peer ({@link peer}), then {@link start}.
 *
 * ```ts
 * const game = lockstep({ core, mode: 'mesh', id: 0 }).peer(1, conn1).peer(2, conn2).start();
 * whenever the pad changes: game.tick(padBytes);
 * ```
 */
export class LockstepBuilder {
  /** The checked options, defaults filled in. */
  readonly options: ResolvedLockstepOptions;
  private readonly peers = new Map<number, { connection: Connection; port: number }>();
  private started = false;

  constructor(options: LockstepOptions) {
    this.options = resolveLockstepOptions(options);
  }

  /**
   * The connection to peer `id` (opened with {@link lockstepChannels} of the mode). `port` is the
   * port that peer drives (default: its id); a client-server client lists only the server.
   * @throws LockstepError `invalid-option` (`option` = `peer(<id>)`) for a bad id or port, an id
   * given twice or equal to this peer's, a port taken, or a connection without the mode's channels.
   */
  peer(id: number, connection: Connection, port = id): this {
    const o = this.options;
    const name = `peer(${String(id)})`;
    check.integer(name, id, 0, 65535);
    if (id === o.id) throw invalid(name, `${id} is this peer's own id`);
    if (this.peers.has(id)) throw invalid(name, `peer ${id} is given twice`);
    const isClient = o.mode === 'client-server' && o.id !== o.host;
    if (isClient && id !== o.host)
      throw invalid(name, `a client-server client connects to the server (${o.host}) only`);
    if (!isClient) {
      check.integer(name, port, 0, o.core.ports - 1);
      if (port === o.port) throw invalid(name, `port ${port} is this peer's own`);
      for (const p of this.peers.values()) if (p.port === port) throw invalid(name, `port ${port} is taken`);
    }
    if (typeof connection !== 'object' || connection === null || typeof connection.send !== 'function')
      throw invalid(name, 'must be a @netplay/transport Connection');
    const have = new Set(connection.channels.map((c) => c.name));
    const missing = lockstepChannels(o.mode).filter((c) => !have.has(c.name));
    if (missing.length > 0)
      throw invalid(name, `the connection lacks channel(s) ${missing.map((c) => c.name).join(', ')} of ${o.mode}`);
    this.peers.set(id, { connection, port });
    return this;
  }

  /**
   * Creates the scheduler and its `LockstepRunner`, connected to every peer, and starts it.
   * @throws LockstepError `invalid-option` (`option` = `peer`) when a non-host lacks its host's
   * connection or no peer was given; (`start`) when called twice.
   */
  start(): LockstepGame {
    const o = this.options;
    if (this.started) throw invalid('start', 'the builder already started its session');
    if (this.peers.size === 0) throw invalid('peer', 'no peer: add one with peer(id, connection)');
    if (o.id !== o.host && !this.peers.has(o.host)) throw invalid('peer', `no connection to the host ${o.host}`);
    this.started = true;
    const core = o.core;
    const startMs = o.startMs ?? o.clock.now();
    const common = { ports: core.ports, inputBytes: core.inputBytes, frameMs: o.frameMs, startMs };
    const liveness = o.liveness !== undefined ? { liveness: o.liveness } : {};
    let scheduler: LockstepScheduler;
    let server: ClientServerServer | undefined;
    if (o.mode === 'client-server') {
      if (o.id === o.host) {
        server = new ClientServerServer({ id: o.id, port: o.port, magic: o.seed >>> 0, ...common, ...liveness });
        scheduler = server;
      } else scheduler = new ClientServerClient({ id: o.id, server: o.host, ...common, ...liveness });
    } else if (o.mode === 'mesh') {
      const members = [...this.peers].map(([id, p]) => ({ id, port: p.port }));
      members.push({ id: o.id, port: o.port });
      members.sort((a, b) => (a.id === o.host ? -1 : b.id === o.host ? 1 : a.id - b.id));
      scheduler = new MeshPeer({ id: o.id, members, extraDelayMs: o.extraDelayMs, ...common, ...liveness });
    } else {
      scheduler = new FrameAdvancePeer({
        id: o.id,
        port: o.port,
        peers: [...this.peers.keys()],
        host: o.host,
        seed: o.seed,
        extraDelayMs: o.extraDelayMs,
        equalize: o.equalize,
        ...common,
        ...liveness,
      });
    }
    const game = new LockstepGame(scheduler);
    const runner = new LockstepRunner({
      clock: o.clock,
      scheduler,
      core,
      log: o.log,
      ...(o.onFrame !== undefined ? { onFrame: o.onFrame } : {}),
      onTurn: () => game.drain(),
      peers: [...this.peers].map(([id, p]) => [id, p.connection] as const),
    });
    if (server !== undefined) {
      for (const [id, p] of this.peers) server.addClient(id, p.port);
      runner.pump();
    }
    game.attach(runner);
    return game;
  }
}

/**
 * Starts building a lockstep peer: `lockstep({ core, mode: 'mesh', id: 0 }).peer(1, conn).start()`.
 * @throws LockstepError `invalid-option`, with `option` naming the first bad option.
 */
export function lockstep(options: LockstepOptions): LockstepBuilder {
  return new LockstepBuilder(options);
}

/**
 * A running lockstep peer (what {@link LockstepBuilder.start} returns). Frames run on the clock's
 * timers as their inputs arrive; {@link tick} hands the local input over (call it every frame or
 * whenever the input changes).
 */
export class LockstepGame {
  private runnerRef: LockstepRunner | undefined;
  private readonly handlers: Array<(event: LockstepEvent) => void> = [];
  private lastFrames = 0;

  /** @internal Made by {@link LockstepBuilder.start}. */
  constructor(
    /** The sans-I/O scheduler (mode-specific calls: chat, commands, late join). */
    readonly scheduler: LockstepScheduler,
  ) {}

  /** @internal */
  attach(runner: LockstepRunner): void {
    this.runnerRef = runner;
    this.drain();
  }

  /** @internal Hands the scheduler's events to the handlers (the runner calls it after every turn). */
  drain(): void {
    const events = (this.scheduler as { events?: LockstepEvent[] }).events;
    if (events === undefined) return;
    while (events.length > 0) {
      const e = events.shift()!;
      for (const h of this.handlers) h(e);
    }
  }

  /** The runner (connections, clock, core, log, report). */
  get runner(): LockstepRunner {
    return this.runnerRef!;
  }

  /**
   * Hands the local input (`core.inputBytes` bytes) to the scheduler (an unchanged input costs
   * nothing); returns the frames run since the previous call.
   */
  tick(input: Uint8Array): number {
    this.runner.setLocalInput(input);
    const n = this.runner.framesRun;
    const d = n - this.lastFrames;
    this.lastFrames = n;
    return d;
  }

  /** Subscribes to interruptions, removals and the end; returns the unsubscribe function. */
  on(handler: (event: LockstepEvent) => void): Unsubscribe {
    this.handlers.push(handler);
    return () => {
      const i = this.handlers.indexOf(handler);
      if (i >= 0) this.handlers.splice(i, 1);
    };
  }

  /** Frames run so far. */
  get framesRun(): number {
    return this.runner.framesRun;
  }

  /** The last frame final for every member (-1: none). */
  get finalFrame(): number {
    return (this.scheduler as { finalFrame?: number }).finalFrame ?? this.scheduler.nextFrame - 1;
  }

  /** Why this peer ended (it runs no more frames), or undefined while it runs. */
  get endReason(): EndReason | undefined {
    return (this.scheduler as { endReason?: EndReason }).endReason;
  }

  /** Every frame run, with the `log` option. */
  get log(): readonly LoggedFrame[] {
    return this.runner.log;
  }

  /** Input latency, stalls and traffic (see `PeerReport`). */
  report(): PeerReport {
    return this.runner.report();
  }

  /** Stops the timer and message delivery (the connections stay open: they are the caller's). */
  stop(): void {
    this.runner.stop();
  }
}

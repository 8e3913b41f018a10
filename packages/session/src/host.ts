import type { LockstepRunner, PeerReport } from '@netplay/lockstep';
import type { CoreDriver, P2PSession, PeerStats, SessionStats } from '@netplay/rollback';
import type { Core } from '@netplay/state';
import {
  type Clock,
  type Connection,
  Emitter,
  type EventSource,
  type Handler,
  type Listener,
  type Unsubscribe,
} from '@netplay/transport';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, HostGuard } from './admission.js';
import { SessionError } from './errors.js';
import { admitPeer } from './host-admit.js';
import { peerClosed, refusePeer } from './host-close.js';
import { gameFrame, gameStarted, type HostContext, newHostGame } from './host-context.js';
import { type ChatEvent, HostControl } from './host-control.js';
import { hostMessage } from './host-dispatch.js';
import { HostLinks } from './host-links.js';
import type { HostPeerInfo, NetplayHostEventMap, NetplayHostOptions } from './host-options.js';
import { newPeer, type Peer, sendControl } from './host-peer.js';
import { joinsMidGame, replacedBy, SlotMemory } from './host-rejoin.js';
import { RollbackRejoins } from './host-rollback-rejoin.js';
import { roomError, uniqueNick } from './host-room.js';
import { checkHostShape } from './host-shape.js';
import { LockstepSpectators } from './host-spectators.js';
import { hostRoster, syncMessage } from './host-sync.js';
import type { SessionMode } from './mode.js';
import { RelayFramer } from './relay.js';
import { checkSchedulerOptions } from './scheduler-options.js';

export type { HostPeerInfo, NetplayHostEventMap, NetplayHostOptions } from './host-options.js';

const defaultRandomU32 = (): number => {
  const a = new Uint32Array(1);
  globalThis.crypto.getRandomValues(a);
  return a[0] ?? 0;
};

/**
 * The host of a netplay session. Feed it connections (`accept`, or `listen` on a `Listener`); it
 * runs the handshake with each (version, unique nick, salted password, core and content check),
 * refuses with a typed {@link SessionError} (sent as REFUSE and as the close reason) or admits;
 * once every player slot is filled it starts the scheduler and syncs the players (and the
 * spectators, mid-game too) from its savestate. Call {@link tick} once per frame with the host's
 * input. Nothing here reads wall time or `Math.random`.
 */
export class NetplayHost implements EventSource<NetplayHostEventMap> {
  /** The host's nick (its peer id in the scheduler). */
  readonly nick: string;
  /** The chosen scheduler. */
  readonly mode: SessionMode;
  /** Player slots, the host's included. */
  readonly players: number;
  /** Frames of input delay. */
  readonly inputDelay: number;
  /** The host's core. */
  readonly core: Core;
  private readonly emitter = new Emitter<NetplayHostEventMap>();
  private readonly clock: Clock;
  private readonly maxSpectators: number;
  private readonly handshakeTimeoutMs: number;
  private readonly guard: HostGuard<Peer>;
  private readonly peers = new Set<Peer>();
  private readonly byNick = new Map<string, Peer>();
  /** Admitted players by slot (rollback and P2P lockstep relay). */
  private readonly bySlot = new Map<number, Peer>();
  /** Rollback: nicks of admitted peers that left; the scheduler knows them as peer ids, so nobody gets them again. */
  private readonly retired = new Set<string>();
  /** The running game (its mode's scheduler, once started). */
  private readonly game = newHostGame();
  /** Local players, chat, pause / resume, reset (issue 15). */
  private readonly control: HostControl;
  /** Rollback: players entering the running game (rejoin, mid-game join; issue 15). */
  private readonly entering: RollbackRejoins;
  /** What the modules that admit, start, route and drop peers share of this host. */
  private readonly ctx: HostContext;
  private closed = false;

  /**
   * @throws SessionError `unsupported-mode` or `bad-argument` for options this version cannot run
   * (scheduler options are checked by the rollback or lockstep builder's rules; the message names
   * the option).
   */
  constructor(options: NetplayHostOptions) {
    this.core = options.core;
    this.clock = options.clock;
    this.nick = options.nick ?? 'host';
    this.mode = options.mode ?? 'rollback';
    this.players = options.players ?? 2;
    this.inputDelay = options.inputDelay ?? 0;
    this.maxSpectators = options.maxSpectators ?? 8;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.guard = new HostGuard<Peer>(options, this.handshakeTimeoutMs);
    const randomU32 = options.randomU32 ?? defaultRandomU32;
    const rejoins = joinsMidGame(this.mode);
    const slots = new SlotMemory();
    checkHostShape(this);
    checkSchedulerOptions({
      mode: this.mode,
      core: this.core,
      players: this.players,
      inputDelay: this.inputDelay,
      fps: options.fps,
      maxPrediction: options.maxPrediction,
      checksumInterval: options.checksumInterval,
    });
    const state = new Uint8Array(this.core.stateBytes);
    const initialState = state.subarray(0, this.core.saveInto(state));
    this.entering = new RollbackRejoins({
      ...{ session: () => this.game.session, frameMs: 1000 / (options.fps ?? 60), roster: () => hostRoster(this.ctx) },
      ...{ peers: this.peers, bySlot: this.bySlot, byNick: this.byNick, slots, players: this.players },
      initialState,
      syncMessage: (slot, frame, roster, st) => syncMessage(this.ctx, slot, frame, roster, st),
      send: sendControl,
      replaced: (peer, error) => refusePeer(this.ctx, peer, error, false),
      joined: (nick, slot, rejoined) =>
        this.emitter.emit('peer-joined', { nick, slot, ...(rejoined ? { rejoined } : {}) }),
      links: () => this.ctx.links,
    });
    this.control = new HostControl(
      {
        mode: this.mode,
        nick: this.nick,
        frame: () => this.frame,
        started: () => this.started,
        rollback: () => this.game.session,
        server: () => this.game.server,
        setLockstepInput: (input) => this.game.runner?.setLocalInput(input),
        admitted: () => [...this.peers].filter((p) => p.stage === 'playing' || p.stage === 'spectating'),
        send: sendControl,
        refuse: (peer, error) => refusePeer(this.ctx, peer, error),
        chat: (e) => this.emitter.emit('chat', e),
        command: (kind, frame) => this.emitter.emit(kind, { frame }),
      },
      this.core,
      this.players,
      options,
    );
    this.ctx = {
      ...{ mode: this.mode, nick: this.nick, players: this.players, inputDelay: this.inputDelay, core: this.core },
      ...{ clock: this.clock, options, rejoins, initialState, game: this.game, randomU32 },
      ...{ peers: this.peers, byNick: this.byNick, bySlot: this.bySlot, slots, retired: this.retired },
      ...{ guard: this.guard, control: this.control, entering: this.entering, framer: new RelayFramer() },
      links: HostLinks.of(this.mode, options, this.clock, randomU32, sendControl),
      watchers: new LockstepSpectators((p, e) => refusePeer(this.ctx, p, e, false)),
      emitter: this.emitter,
      handshake: {
        mode: this.mode,
        nick: this.nick,
        password: options.password,
        content: options.content,
        guard: this.guard,
        now: () => this.clock.now(),
        randomU32,
        roomError: (peer) => this.control.portsError(peer) ?? this.fullError(peer.spectate, peer),
        assignNick: (peer, asked) => {
          // A spectator never replaces a player (it would take over a connection it does not play).
          const rejoin = rejoins && !peer.spectate;
          peer.replaces = rejoin ? replacedBy(this.peers, asked, peer.address, peer, this.clock.now()) : undefined;
          peer.nick = peer.replaces !== undefined ? asked : this.uniqueNick(asked, !peer.spectate);
          if (peer.replaces === undefined) this.byNick.set(peer.nick, peer);
          return peer.nick;
        },
        send: sendControl,
        refuse: (peer, error) => refusePeer(this.ctx, peer, error),
        admit: (peer) => admitPeer(this.ctx, peer),
      },
    };
  }

  /** Ports the host drives (`localPlayers`, default 1): ports 0 … localPlayers − 1. */
  get localPlayers(): number {
    return this.control.localPlayers;
  }

  /** True while the game is paused. */
  get paused(): boolean {
    return this.control.paused;
  }

  /** Sends a chat line to every client (and emits `chat`). @throws SessionError `bad-argument` if empty or over 256 bytes. */
  chat(text: string): ChatEvent {
    return this.control.chat(text);
  }

  /** Pauses every peer at an agreed frame (`paused` event). @throws SessionError before the start. */
  pause(): void {
    this.control.setPaused(true);
  }

  /** Resumes every peer at an agreed frame (`resumed` event). */
  resume(): void {
    this.control.setPaused(false);
  }

  /** Every peer loads the power-on state at one agreed frame (`reset` event). @throws SessionError before the start. */
  reset(): void {
    this.control.reset();
  }

  on<K extends keyof NetplayHostEventMap>(type: K, handler: Handler<NetplayHostEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  /** True once the first player joined and the scheduler runs. */
  get started(): boolean {
    return gameStarted(this.game);
  }

  /** The lockstep runner (lockstep modes, after {@link started}); `report()` gives latency and traffic. */
  get lockstep(): LockstepRunner | undefined {
    return this.game.runner;
  }

  /** Lockstep report (latency, stalls, bytes/s) of the host's player; undefined in rollback or before the start. */
  lockstepReport(): PeerReport | undefined {
    return this.game.runner?.report();
  }

  /** The rollback scheduler (after {@link started}). */
  get rollback(): P2PSession | undefined {
    return this.game.session;
  }

  /** The driver that runs the scheduler's requests on the core (after {@link started}). */
  get driver(): CoreDriver | undefined {
    return this.game.driver;
  }

  /** The next frame the host simulates (0 before the start). */
  get frame(): number {
    return gameFrame(this.game);
  }

  /** Lockstep modes: the last final frame (as the last `final` event said; -1: none); undefined in rollback. */
  get finalFrame(): number | undefined {
    return this.game.finality?.finalFrame;
  }

  /** Scheduler stats (undefined before the start). */
  get stats(): SessionStats | undefined {
    return this.game.session?.stats;
  }

  /** Per-peer scheduler stats (empty before the start). */
  peerStats(): readonly PeerStats[] {
    return this.game.session?.peerStats() ?? [];
  }

  /** Every connected peer, in connection order. */
  peerList(): HostPeerInfo[] {
    const out: HostPeerInfo[] = [];
    for (const p of this.peers) {
      if (p.stage === 'closed') continue;
      const stage =
        p.stage === 'hello' || p.stage === 'info' ? 'handshaking' : (p.stage satisfies HostPeerInfo['stage']);
      out.push({ nick: p.nick, slot: p.slot, stage, remoteAddress: p.conn.remoteAddress });
    }
    return out;
  }

  /** Accepts every connection of `listener` (they must declare `SESSION_CHANNELS`). Returns an unsubscribe. */
  listen(listener: Listener): Unsubscribe {
    return listener.on('connection', (conn) => this.accept(conn));
  }

  /** Starts the handshake on a new connection (declaring `SESSION_CHANNELS`). */
  accept(conn: Connection): void {
    if (this.closed) {
      conn.close('closed: the host is closed');
      return;
    }
    const now = this.clock.now();
    const peer = newPeer(conn, HostGuard.addressOf(conn.remoteAddress), this.guard.budget(now), now);
    this.peers.add(peer);
    const arrival = this.guard.arrive(peer, peer.address, now);
    if (!arrival.ok) {
      refusePeer(this.ctx, peer, arrival.error);
      return;
    }
    if (arrival.evicted !== undefined) refusePeer(this.ctx, arrival.evicted, this.guard.evictedError());
    peer.timer = this.clock.setTimer(this.handshakeTimeoutMs, () => {
      peer.timer = undefined;
      if (peer.stage === 'hello' || peer.stage === 'info')
        refusePeer(
          this.ctx,
          peer,
          new SessionError('timeout', `handshake not done within ${this.handshakeTimeoutMs} ms`),
        );
    });
    peer.offs.push(
      conn.on('message', ({ channel, data }) => hostMessage(this.ctx, peer, channel, data)),
      conn.on('close', ({ code, reason }) => peerClosed(this.ctx, peer, reason, code === 'remote')),
    );
    if (conn.state === 'closed') peerClosed(this.ctx, peer, 'closed before the handshake');
  }

  /**
   * Runs one frame: before the start it does nothing and returns false. Rollback: it follows the
   * scheduler's time sync (skipping a frame when it recommends waiting, while still polling) or
   * adds `input` (the host's `core.inputBytes` bytes) and runs the frame's requests on the core.
   * Lockstep: frames run on the clock by themselves (`frame` events); `tick` hands the input to
   * the scheduler and runs what is due. Returns true when a new frame was simulated.
   */
  tick(input: Uint8Array | readonly Uint8Array[]): boolean {
    const game = this.game;
    const runner = game.runner;
    if (runner !== undefined) {
      const before = runner.framesRun;
      runner.setLocalInput(this.control.localInput(input));
      return runner.framesRun > before;
    }
    const s = game.session;
    const d = game.driver;
    if (s === undefined || d === undefined) return false;
    if (game.wait > 0) {
      game.wait--;
      s.poll();
      return false;
    }
    this.entering.tick();
    const before = s.currentFrame;
    s.addLocalInput(this.control.localInput(input));
    d.run(s.advanceFrame(), s);
    return s.currentFrame > before;
  }

  /** Closes every connection with `reason` (default `"closed: the host left"`). */
  close(reason = 'closed: the host left'): void {
    if (this.closed) return;
    this.closed = true;
    for (const p of [...this.peers]) p.conn.close(reason);
    this.game.runner?.stop();
  }

  /** The refusal for one more player (or spectator), if there is no room. */
  private fullError(spectate: boolean, self?: Peer): SessionError | undefined {
    const room = { mode: this.mode, started: this.started, players: this.players, maxSpectators: this.maxSpectators };
    return roomError(room, this.peers, spectate, self);
  }

  /** A nick no peer has, nor (rollback, but for a player: a new incarnation of the id) any peer id the scheduler already knew. */
  private uniqueNick(nick: string, player = false): string {
    return uniqueNick(nick, this.nick, { has: (n) => this.byNick.has(n) || (!player && this.retired.has(n)) });
  }
}

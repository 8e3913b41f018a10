import { ClientServerServer, type LockstepRunner, type PeerReport } from '@netplay/lockstep';
import { DecodeError } from '@netplay/protocol';
import type { CoreDriver, P2PSession, PeerStats, SessionStats } from '@netplay/rollback';
import type { Core } from '@netplay/state';
import {
  type Clock,
  type Connection,
  Emitter,
  type EventSource,
  type Handler,
  type Listener,
  TransportError,
  type Unsubscribe,
} from '@netplay/transport';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, HostGuard } from './admission.js';
import { SESSION_CONTROL_CHANNEL } from './channels.js';
import { END_TEXT, SessionError } from './errors.js';
import { type ChatEvent, HostControl } from './host-control.js';
import { type HandshakeHost, onHello, onInfo } from './host-handshake.js';
import { HostLinks } from './host-links.js';
import { cutRoutedPlayer, type HostP2P, hostRoute, startHostRunner } from './host-lockstep.js';
import type { HostPeerInfo, NetplayHostEventMap, NetplayHostOptions } from './host-options.js';
import { BroadcastHistory } from './host-p2p-history.js';
import { admitP2PMidGame } from './host-p2p-join.js';
import { newPeer, type Peer } from './host-peer.js';
import { joinsMidGame, replacedBy, SlotMemory } from './host-rejoin.js';
import { peerSender, rollbackGameMessage } from './host-rollback.js';
import { RollbackRejoins } from './host-rollback-rejoin.js';
import { roomError, rosterOf, uniqueNick } from './host-room.js';
import { checkHostShape } from './host-shape.js';
import { LockstepSpectators } from './host-spectators.js';
import type { FinalityScheduler, LockstepFinality } from './lockstep-finality.js';
import {
  decodeSessionMessage,
  encodeRefuse,
  encodeSync,
  encodeWait,
  type RosterEntry,
  SessionMessageType,
  SPECTATOR_SLOT,
} from './messages.js';
import type { SessionMode } from './mode.js';
import { createP2PScheduler, isP2PLockstep, p2pShape } from './p2p-lockstep.js';
import { routeFromPlayer } from './p2p-routing.js';
import { RelayFramer } from './relay.js';
import { startRollback } from './rollback-start.js';
import type { RoutedConnection } from './routed-connection.js';
import { checkSchedulerOptions } from './scheduler-options.js';
import { packSyncState } from './sync-state.js';

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
  private readonly options: NetplayHostOptions;
  private readonly clock: Clock;
  private readonly randomU32: () => number;
  private readonly maxSpectators: number;
  private readonly handshakeTimeoutMs: number;
  private readonly guard: HostGuard<Peer>;
  /** The handshake steps' view of this host. */
  private readonly handshake: HandshakeHost;
  private readonly peers = new Set<Peer>();
  private readonly byNick = new Map<string, Peer>();
  private session: P2PSession | undefined;
  private server: ClientServerServer | undefined;
  private runner: LockstepRunner | undefined;
  private finality: LockstepFinality | undefined;
  /** The host's state when the session was created (lockstep: the power-on state every peer shares). */
  private readonly initialState: Uint8Array;
  private coreDriver: CoreDriver | undefined;
  private wait = 0;
  private readonly framer = new RelayFramer();
  /** Admitted players by slot (rollback and P2P lockstep relay). */
  private readonly bySlot = new Map<number, Peer>();
  /** lockstep-p2p and frame-advance: the host's scheduler, the mode's wire and one routed connection per client slot. */
  private p2p: HostP2P | undefined;
  private closed = false;
  /** Local players, chat, pause / resume, reset (issue 15). */
  private readonly control: HostControl;
  /** Lockstep: the core the runner drives (a `SlotCore` over {@link core} unless the layout is the identity). */
  private lockstepCore: Core | undefined;
  /** Rollback: nicks of admitted peers that left; the scheduler knows them as peer ids, so nobody gets them again. */
  private readonly retired = new Set<string>();
  /** Players can enter the running game (rejoin, mid-game join): see {@link joinsMidGame}. */
  private readonly rejoins: boolean;
  /** Who held which slot, for rejoins. */
  private readonly slots = new SlotMemory();
  /** Rollback: players entering the running game (rejoin, mid-game join; issue 15). */
  private readonly entering: RollbackRejoins;
  /** Rollback: direct links between the players (issue 17), if the `links` option is on. */
  private readonly links: HostLinks;
  /** Lockstep spectators (watchers of the lockstep-cs server, or of the P2P host's frames). */
  private readonly watchers = new LockstepSpectators((p, e) => this.refuse(p, e, false));

  /**
   * @throws SessionError `unsupported-mode` or `bad-argument` for options this version cannot run
   * (scheduler options are checked by the rollback or lockstep builder's rules; the message names
   * the option).
   */
  constructor(options: NetplayHostOptions) {
    this.options = options;
    this.core = options.core;
    this.clock = options.clock;
    this.nick = options.nick ?? 'host';
    this.mode = options.mode ?? 'rollback';
    this.players = options.players ?? 2;
    this.inputDelay = options.inputDelay ?? 0;
    this.maxSpectators = options.maxSpectators ?? 8;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.guard = new HostGuard<Peer>(options, this.handshakeTimeoutMs);
    this.randomU32 = options.randomU32 ?? defaultRandomU32;
    this.rejoins = joinsMidGame(this.mode);
    this.links = HostLinks.of(this.mode, options, this.clock, this.randomU32, (p, d) => this.sendTo(p, d));
    this.handshake = {
      mode: this.mode,
      nick: this.nick,
      password: options.password,
      content: options.content,
      guard: this.guard,
      now: () => this.clock.now(),
      randomU32: () => this.randomU32(),
      roomError: (peer) => this.control.portsError(peer) ?? this.fullError(peer.spectate, peer),
      assignNick: (peer, asked) => {
        // A spectator never replaces a player (it would take over a connection it does not play).
        const rejoin = this.rejoins && !peer.spectate;
        peer.replaces = rejoin ? replacedBy(this.peers, asked, peer.address, peer, this.clock.now()) : undefined;
        peer.nick = peer.replaces !== undefined ? asked : this.uniqueNick(asked, !peer.spectate);
        if (peer.replaces === undefined) this.byNick.set(peer.nick, peer);
        return peer.nick;
      },
      send: (peer, data) => this.sendTo(peer, data),
      refuse: (peer, error) => this.refuse(peer, error),
      admit: (peer) => this.admit(peer),
    };
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
    this.initialState = state.subarray(0, this.core.saveInto(state));
    this.entering = new RollbackRejoins({
      ...{ session: () => this.session, frameMs: 1000 / (options.fps ?? 60), roster: () => this.roster() },
      ...{ peers: this.peers, bySlot: this.bySlot, byNick: this.byNick, slots: this.slots, players: this.players },
      initialState: this.initialState,
      syncMessage: (slot, frame, roster, st) => this.syncMessage(slot, frame, roster, st),
      send: (peer, data) => this.sendTo(peer, data),
      replaced: (peer, error) => this.refuse(peer, error, false),
      joined: (nick, slot, rejoined) =>
        this.emitter.emit('peer-joined', { nick, slot, ...(rejoined ? { rejoined } : {}) }),
    });
    this.control = new HostControl(
      {
        mode: this.mode,
        nick: this.nick,
        frame: () => this.frame,
        started: () => this.started,
        rollback: () => this.session,
        server: () => this.server,
        setLockstepInput: (input) => this.runner?.setLocalInput(input),
        admitted: () => [...this.peers].filter((p) => p.stage === 'playing' || p.stage === 'spectating'),
        send: (peer, data) => this.sendTo(peer, data),
        refuse: (peer, error) => this.refuse(peer, error),
        chat: (e) => this.emitter.emit('chat', e),
        command: (kind, frame) => this.emitter.emit(kind, { frame }),
      },
      this.core,
      this.players,
      options,
    );
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
    return this.session !== undefined || this.runner !== undefined;
  }

  /** The lockstep runner (lockstep modes, after {@link started}); `report()` gives latency and traffic. */
  get lockstep(): LockstepRunner | undefined {
    return this.runner;
  }

  /** Lockstep report (latency, stalls, bytes/s) of the host's player; undefined in rollback or before the start. */
  lockstepReport(): PeerReport | undefined {
    return this.runner?.report();
  }

  /** The rollback scheduler (after {@link started}). */
  get rollback(): P2PSession | undefined {
    return this.session;
  }

  /** The driver that runs the scheduler's requests on the core (after {@link started}). */
  get driver(): CoreDriver | undefined {
    return this.coreDriver;
  }

  /** The next frame the host simulates (0 before the start). */
  get frame(): number {
    return this.session?.currentFrame ?? this.runner?.schedulerRef.nextFrame ?? 0;
  }

  /** Lockstep modes: the last final frame (as the last `final` event said; -1: none); undefined in rollback. */
  get finalFrame(): number | undefined {
    return this.finality?.finalFrame;
  }

  /** Scheduler stats (undefined before the start). */
  get stats(): SessionStats | undefined {
    return this.session?.stats;
  }

  /** Per-peer scheduler stats (empty before the start). */
  peerStats(): readonly PeerStats[] {
    return this.session?.peerStats() ?? [];
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
      this.refuse(peer, arrival.error);
      return;
    }
    if (arrival.evicted !== undefined) this.refuse(arrival.evicted, this.guard.evictedError());
    peer.timer = this.clock.setTimer(this.handshakeTimeoutMs, () => {
      peer.timer = undefined;
      if (peer.stage === 'hello' || peer.stage === 'info')
        this.refuse(peer, new SessionError('timeout', `handshake not done within ${this.handshakeTimeoutMs} ms`));
    });
    peer.offs.push(
      conn.on('message', ({ channel, data }) => this.onMessage(peer, channel, data)),
      conn.on('close', ({ code, reason }) => this.onClose(peer, reason, code === 'remote')),
    );
    if (conn.state === 'closed') this.onClose(peer, 'closed before the handshake');
  }

  /**
   * Runs one frame: before the start it does nothing and returns false. Rollback: it follows the
   * scheduler's time sync (skipping a frame when it recommends waiting, while still polling) or
   * adds `input` (the host's `core.inputBytes` bytes) and runs the frame's requests on the core.
   * Lockstep: frames run on the clock by themselves (`frame` events); `tick` hands the input to
   * the scheduler and runs what is due. Returns true when a new frame was simulated.
   */
  tick(input: Uint8Array | readonly Uint8Array[]): boolean {
    if (this.runner !== undefined) {
      const before = this.runner.framesRun;
      this.runner.setLocalInput(this.control.localInput(input));
      return this.runner.framesRun > before;
    }
    const s = this.session;
    const d = this.coreDriver;
    if (s === undefined || d === undefined) return false;
    if (this.wait > 0) {
      this.wait--;
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
    this.runner?.stop();
  }

  private onMessage(peer: Peer, channel: string, data: Uint8Array): void {
    if (peer.stage === 'closed') return;
    peer.heardAt = this.clock.now();
    if (peer.budget !== undefined && !peer.budget.take(data.length, this.clock.now())) {
      this.refuse(peer, this.guard.floodError(peer.budget));
      return;
    }
    if (channel !== SESSION_CONTROL_CHANNEL) {
      if (peer.stage === 'spectating' && this.watchers.message(peer, channel, data)) return;
      if (isP2PLockstep(this.mode)) {
        const error = routeFromPlayer(this.p2p, this.bySlot, this.framer, this.mode, peer, channel, data);
        if (error !== undefined) this.refuse(peer, error);
        return;
      }
      // lockstep-cs: the runner reads the game channels of admitted peers (spectators too) itself.
      if (this.mode !== 'rollback' && (peer.stage === 'playing' || peer.stage === 'spectating')) return;
      const error = rollbackGameMessage(this.session, this.bySlot, this.framer, peer, channel, data);
      if (error !== undefined) this.refuse(peer, error);
      return;
    }
    const link = this.links.onMessage(peer, data);
    if (link !== false) {
      if (link !== true) this.refuse(peer, link);
      return;
    }
    let m: ReturnType<typeof decodeSessionMessage>;
    try {
      m = decodeSessionMessage(data);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      this.refuse(peer, new SessionError('protocol', `bad session message: ${e.message}`));
      return;
    }
    if (m.type === SessionMessageType.Refuse) {
      // The client gives up (e.g. unsupported mode); it closes itself.
      peer.stage = 'closed';
      return;
    }
    if ((peer.stage === 'playing' || peer.stage === 'spectating') && this.control.onClientMessage(peer, m)) return;
    if (peer.stage === 'hello' && m.type === SessionMessageType.Hello) {
      this.control.hello(peer, m);
      onHello(this.handshake, peer, m);
      return;
    }
    if (peer.stage === 'info' && m.type === SessionMessageType.Info) {
      onInfo(this.handshake, peer, m);
      return;
    }
    this.refuse(peer, new SessionError('protocol', `unexpected session message ${m.type} at stage ${peer.stage}`));
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

  private admit(peer: Peer): void {
    this.guard.authenticated(peer);
    peer.timer?.cancel();
    peer.timer = undefined;
    const nick = peer.nick ?? '';
    if (peer.spectate) {
      this.syncSpectator(peer);
      return;
    }
    if (this.mode === 'lockstep-cs') {
      this.admitLockstep(peer);
      return;
    }
    if (this.mode === 'rollback' && this.session !== undefined) {
      this.entering.admit(peer);
      return;
    }
    if (this.p2p !== undefined && this.runner !== undefined && this.rejoins) {
      const { p2p, runner, peers, bySlot, byNick, slots, players, frame } = this;
      const replaced = (old: Peer) =>
        this.refuse(old, new SessionError('closed', `replaced: ${old.nick} reconnected from the same address`), false);
      const sync = (p: Peer, s: number) =>
        this.sendTo(p, this.syncMessage(s, this.frame, this.roster(), this.initialState));
      const joined = (e: { nick: string; slot: number }) => this.emitter.emit('peer-joined', e);
      admitP2PMidGame({ p2p, runner, peers, bySlot, byNick, slots, players, frame, replaced, sync, joined }, peer);
      return;
    }
    // A player: the lowest free slot; the game starts once every slot is filled.
    let slot = 1;
    while (this.bySlot.has(slot)) slot++;
    peer.slot = slot;
    peer.stage = 'playing';
    this.bySlot.set(slot, peer);
    this.emitter.emit('peer-joined', { nick, slot });
    if (this.bySlot.size + 1 < this.players) {
      const wait = encodeWait({ joined: this.bySlot.size + 1, players: this.players });
      for (const p of this.bySlot.values()) this.sendTo(p, wait);
      return;
    }
    if (isP2PLockstep(this.mode)) {
      this.startP2P(this.mode);
      return;
    }
    this.links.prepare(this.bySlot, () => {
      this.start();
      // Spectators admitted before the start: their SPECTATE requests reach the scheduler now.
      for (const p of this.peers) {
        const early = p.early.splice(0);
        if (p.stage === 'spectating' && p.nick !== undefined)
          for (const e of early) this.session?.receive(p.nick, e.channel, e.data);
      }
    });
  }

  /** lockstep-cs: the lowest free port; the server starts with the first player, later ones join late. */
  private admitLockstep(peer: Peer): void {
    const old = peer.replaces;
    peer.replaces = undefined;
    // The same nick from the same address: its old connection is dead (the transport has not noticed yet).
    if (old !== undefined && old.stage === 'playing')
      this.refuse(old, new SessionError('closed', `replaced: ${old.nick} reconnected from the same address`), false);
    if (peer.nick !== undefined) this.byNick.set(peer.nick, peer);
    const taken = new Set<number>([0]);
    for (const p of this.peers) if (p.stage === 'playing' && p.slot !== undefined) taken.add(p.slot);
    const slot = this.slots.pick(peer.nick ?? '', taken, this.players) ?? this.players;
    peer.slot = slot;
    peer.stage = 'playing';
    let first = false;
    if (this.server === undefined || this.runner === undefined) {
      first = true;
      this.server = new ClientServerServer({
        id: 0,
        port: 0,
        ports: this.players,
        inputBytes: this.control.slotBytes,
        frameMs: 1000 / (this.options.fps ?? 60),
        startMs: this.clock.now(),
        magic: this.randomU32() >>> 0,
      });
      this.runner = this.startRunner(this.server);
      this.watchers.attach(this.server, this.runner);
    }
    const roster = this.roster();
    this.sendTo(peer, this.syncMessage(slot, this.server.nextFrame, roster, this.initialState));
    this.server.addClient(slot, slot);
    this.runner.addPeer(slot, peer.conn);
    if (first) this.emitter.emit('started', { frame: 0, roster });
    const rejoined = this.slots.slotOf(peer.nick ?? '') === slot;
    this.emitter.emit('peer-joined', { nick: peer.nick ?? '', slot, ...(rejoined ? { rejoined } : {}) });
  }

  private roster(): RosterEntry[] {
    return rosterOf(this.nick, this.peers);
  }

  private start(): void {
    const state = new Uint8Array(this.core.stateBytes);
    const n = this.core.saveInto(state);
    const { session, driver } = startRollback({
      core: this.control.schedulerCore(this.initialState),
      players: this.players,
      localPlayer: 0,
      remotes: [...this.bySlot].map(([player, p]) => ({ peer: p.nick ?? '', player })),
      isHost: true,
      hostPeer: this.nick,
      clock: this.clock,
      send: this.entering.sender(peerSender(this.byNick)),
      inputDelay: this.inputDelay,
      fps: this.options.fps,
      maxPrediction: this.options.maxPrediction,
      checksumInterval: this.options.checksumInterval,
      wait: (frames) => {
        this.wait = frames;
      },
      ended: (error, frame) => this.endGame(error, frame),
    });
    this.session = session;
    this.coreDriver = driver;
    this.control.attachRollback(session);
    const roster = this.syncPlayers(state.subarray(0, n));
    this.emitter.emit('started', { frame: 0, roster });
  }

  /**
   * Admits a spectator: SYNC without a state (the rollback scheduler syncs it from the host's
   * savestate when its SPECTATE request arrives; before the start that request waits).
   */
  private syncSpectator(peer: Peer): void {
    peer.stage = 'spectating';
    // lockstep-cs: the power-on state; the server then sends the state of its next frame against it.
    const state = this.mode !== 'rollback' ? this.initialState : new Uint8Array(0);
    this.sendTo(peer, this.syncMessage(SPECTATOR_SLOT, this.frame, this.roster(), state));
    if (this.mode !== 'rollback') this.watchers.admit(peer);
    this.emitter.emit('peer-joined', { nick: peer.nick ?? '', slot: undefined });
  }

  /** SYNC for `slot` (or {@link SPECTATOR_SLOT}) in this session. */
  private syncMessage(slot: number, frame: number, roster: RosterEntry[], state: Uint8Array): Uint8Array {
    const { mode, players, inputDelay } = this;
    const layout = this.control.syncFields(roster, (s) => [...this.peers].find((p) => p.slot === s));
    return encodeSync({
      mode,
      frame,
      players,
      slot,
      inputDelay,
      inputBytes: this.core.inputBytes,
      roster,
      state: packSyncState(state),
      ...layout,
    });
  }

  private sendTo(peer: Peer, data: Uint8Array): void {
    if (peer.conn.state === 'closed') return;
    try {
      peer.conn.send(SESSION_CONTROL_CHANNEL, data);
    } catch (e) {
      if (!(e instanceof TransportError)) throw e;
    }
  }

  /** Refuses `peer` (REFUSE, close, `peer-refused`, and `peer-left` if it was admitted; `refused` false: no `peer-refused`). */
  private refuse(peer: Peer, error: SessionError, refused = true): void {
    const nick = peer.nick;
    const admitted = peer.stage === 'playing' || peer.stage === 'spectating';
    this.sendTo(peer, encodeRefuse({ code: error.code, message: error.message }));
    this.drop(peer);
    if (admitted && nick !== undefined) this.forget(peer, nick);
    peer.conn.close(error.closeReason);
    if (refused) this.emitter.emit('peer-refused', { nick, remoteAddress: peer.conn.remoteAddress, error });
    if (admitted && nick !== undefined)
      this.emitter.emit('peer-left', { nick, slot: peer.slot, reason: error.closeReason });
  }

  /** The scheduler ended (finality rule): tell every client why and close. */
  private endGame(error: SessionError, frame: number): void {
    this.runner?.stop();
    for (const p of [...this.peers]) {
      this.drop(p);
      p.conn.close(error.closeReason);
    }
    this.emitter.emit('ended', { frame, error });
  }

  /** Forgets a peer (before its connection closes). */
  private drop(peer: Peer): void {
    if (peer.slot !== undefined && this.bySlot.get(peer.slot) === peer) this.bySlot.delete(peer.slot);
    peer.stage = 'closed';
    this.guard.gone(peer);
    this.links.gone(peer);
    peer.timer?.cancel();
    peer.timer = undefined;
    this.peers.delete(peer);
    if (peer.nick !== undefined && this.byNick.get(peer.nick) === peer) this.byNick.delete(peer.nick);
  }

  /** Tells the scheduler an admitted peer is gone. */
  private forget(peer: Peer, nick: string, voluntary = false): void {
    if (this.mode === 'rollback') this.retired.add(nick);
    if (peer.slot !== undefined && !peer.spectate) this.slots.left(nick, peer.slot);
    this.session?.disconnectPeer(nick, voluntary ? 'left' : 'lost');
    if (this.mode !== 'lockstep-cs' && !this.started && !peer.spectate) {
      const wait = encodeWait({ joined: this.bySlot.size + 1, players: this.players });
      for (const p of this.bySlot.values()) this.sendTo(p, wait);
    }
    if (peer.spectate) this.watchers.forget(peer);
    if (this.server !== undefined && peer.slot !== undefined && !peer.spectate) {
      this.server.removeClient(peer.slot);
      this.runner?.removePeer(peer.slot);
    }
    if (this.p2p !== undefined && peer.slot !== undefined && !peer.spectate)
      cutRoutedPlayer(this.p2p, this.runner, peer.slot, nick, this.clock.now());
  }

  /** The largest smoothed round-trip time of the players' connections (0 before any sample). */
  private maxRttMs(): number {
    let rtt = 0;
    for (const p of this.bySlot.values()) rtt = Math.max(rtt, p.conn.stats.rttMs);
    return rtt;
  }

  /** Every slot is filled (rollback and the P2P lockstep modes): SYNC each player with frame 0 and `state`; returns the roster. */
  private syncPlayers(state: Uint8Array): RosterEntry[] {
    const roster = this.roster();
    for (const [slot, player] of this.bySlot) this.sendTo(player, this.syncMessage(slot, 0, roster, state));
    return roster;
  }

  /** lockstep-p2p and frame-advance: every slot is filled; SYNC everyone and start the host's scheduler. */
  private startP2P(mode: 'lockstep-p2p' | 'frame-advance'): void {
    const state = new Uint8Array(this.core.stateBytes);
    const n = this.core.saveInto(state);
    const shape = p2pShape(mode);
    const scheduler = createP2PScheduler(mode, {
      slot: 0,
      slots: [0, ...this.bySlot.keys()],
      ports: this.players,
      inputBytes: this.control.slotBytes,
      frameMs: 1000 / (this.options.fps ?? 60),
      // Each client starts its schedule when SYNC reaches it: start ours that much later too (half
      // the largest round trip the transport measured), or the host trails its own schedule.
      startMs: this.clock.now() + this.maxRttMs() / 2,
      seed: this.randomU32() >>> 0,
      extraDelayMs: (this.inputDelay * 1000) / (this.options.fps ?? 60),
    });
    const roster = this.syncPlayers(state.subarray(0, n));
    const routes = new Map<number, RoutedConnection>();
    for (const [slot, player] of this.bySlot) routes.set(slot, hostRoute(shape, slot, player.conn));
    this.p2p = { scheduler, shape, routes, ...(mode === 'frame-advance' ? { history: new BroadcastHistory() } : {}) };
    this.runner = this.startRunner(scheduler, routes);
    const { lockstepCore: core, initialState, players, control } = this;
    if (core !== undefined) this.watchers.attachStream(core, this.runner, initialState, players, control.slotBytes);
    this.emitter.emit('started', { frame: 0, roster });
  }

  /**
   * Lockstep: the host's runner, with the finality rule's events handled (`final` events; a peer
   * the scheduler removed is refused with `removed` and its messages no longer relayed; the end
   * ends the game).
   */
  private startRunner(scheduler: FinalityScheduler, peers?: Map<number, RoutedConnection>): LockstepRunner {
    this.lockstepCore ??= this.control.schedulerCore(this.initialState);
    const { runner, finality } = startHostRunner(
      this.clock,
      this.lockstepCore,
      scheduler,
      {
        final: (frame) => this.emitter.emit('final', { frame }),
        frame: (frame, inputs) => {
          this.watchers.frameRan(frame, inputs);
          this.emitter.emit('frame', { frame, inputs: this.control.lockstepFrame(frame, inputs) });
        },
        removed: (slot, frame) => {
          const watcher = this.watchers.removed(slot, frame);
          if (watcher !== undefined) return this.refuse(watcher.peer, watcher.error, false);
          const p = [...this.peers].find((q) => q.slot === slot && q.stage === 'playing');
          const text = `removed at frame ${frame}: ${END_TEXT.removed}`;
          if (p !== undefined) this.refuse(p, new SessionError('removed', text), false);
        },
        ended: (error, frame) => this.endGame(error, frame),
      },
      peers,
    );
    this.finality = finality;
    return runner;
  }

  /** `voluntary`: the peer closed the connection itself (close code `remote`), not a timeout. */
  private onClose(peer: Peer, reason: string, voluntary = false): void {
    for (const off of peer.offs) off();
    if (peer.stage === 'closed' || !this.peers.has(peer)) return;
    const admitted = peer.stage === 'playing' || peer.stage === 'spectating';
    const nick = peer.nick;
    this.drop(peer);
    if (admitted && nick !== undefined) {
      this.forget(peer, nick, voluntary);
      this.emitter.emit('peer-left', { nick, slot: peer.slot, reason });
    }
  }
}

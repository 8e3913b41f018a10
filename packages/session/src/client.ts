import { ClientServerClient, LockstepError, type LockstepRunner, type PeerReport } from '@netplay/lockstep';
import { DecodeError } from '@netplay/protocol';
import {
  CoreDriver,
  type P2PSession,
  type PeerStats,
  RollbackError,
  type SendFn,
  type SessionStats,
  SpectatorSession,
} from '@netplay/rollback';
import type { Core } from '@netplay/state';
import {
  type Connection,
  Emitter,
  type EventSource,
  type Handler,
  type Timer,
  TransportError,
  type Unsubscribe,
} from '@netplay/transport';
import { SESSION_CONTROL_CHANNEL } from './channels.js';
import { ClientControl } from './client-control.js';
import { hostGone } from './client-handover.js';
import { clientRoutes, startClientRunner } from './client-lockstep.js';
import { ClientMesh, linkMessageFromHost } from './client-mesh.js';
import type { JoinInfo, NetplayClientEventMap, NetplayClientOptions, NetplayClientState } from './client-options.js';
import { isRollbackEntry, readRollbackEntry, trackEntries } from './client-rollback-join.js';
import { SessionError } from './errors.js';
import { encodeLinkAddress, isLinkMessage } from './link-messages.js';
import type { FinalityScheduler, LockstepFinality } from './lockstep-finality.js';
import {
  decodeSessionMessage,
  encodeHello,
  encodeInfo,
  encodeRefuse,
  SESSION_MAGIC,
  SESSION_PROTOCOL_VERSION,
  SessionMessageType,
  SPECTATOR_SLOT,
  type SyncMessage,
} from './messages.js';
import { SUPPORTED_MODES } from './mode.js';
import {
  createP2PScheduler,
  isP2PLockstep,
  type P2PLockstepMode,
  type P2PLockstepShape,
  p2pShape,
} from './p2p-lockstep.js';
import { passwordProof } from './password.js';
import { RelayFramer, relayChannelOf, rollbackChannelOf } from './relay.js';
import { startRollback } from './rollback-start.js';
import { ROUTE_HEADER_BYTES, type RoutedConnection, routedChannelIndex } from './routed-connection.js';
import { unpackSyncState } from './sync-state.js';

export type { JoinInfo, NetplayClientEventMap, NetplayClientOptions, NetplayClientState } from './client-options.js';

const MAX_EARLY_MESSAGES = 1024;

const defaultRandomU32 = (): number => {
  const a = new Uint32Array(1);
  globalThis.crypto.getRandomValues(a);
  return a[0] ?? 0;
};

/**
 * A client of a netplay session over one `Connection` (declaring `SESSION_CHANNELS`): sends
 * HELLO at once, answers the host's CHALLENGE with the salted password proof and INFO, and on
 * SYNC starts the scheduler (a rollback `P2PSession` for a player, loaded from the host's
 * savestate; a `SpectatorSession` for a spectator). Call {@link tick} once per frame. A refusal
 * or any failure ends in the `closed` event with a typed {@link SessionError}.
 */
export class NetplayClient implements EventSource<NetplayClientEventMap> {
  /** The client's core. */
  readonly core: Core;
  private readonly emitter = new Emitter<NetplayClientEventMap>();
  private readonly options: NetplayClientOptions;
  private readonly conn: Connection;
  private readonly offs: Unsubscribe[] = [];
  private timer: Timer | undefined;
  private stage: NetplayClientState = 'handshaking';
  private challenge: { nick: string; hostNick: string } | undefined;
  private joinInfo: JoinInfo | undefined;
  private failure: SessionError | undefined;
  private p2p: P2PSession | undefined;
  private watch: SpectatorSession | undefined;
  private coreDriver: CoreDriver | undefined;
  private runner: LockstepRunner | undefined;
  private finality: LockstepFinality | undefined;
  private readonly early: Array<{ channel: string; data: Uint8Array }> = [];
  /** Rollback, entering a running game (ENTRY): the host's WELCOME and state, for the scheduler's `join`. */
  private entry: { welcome: Uint8Array; state: Uint8Array } | undefined;
  private wait = 0;
  private readonly framer = new RelayFramer();
  /** Rollback relay: peer nick → player slot, and back. */
  private readonly slotOf = new Map<string, number>();
  private readonly nickOf = new Map<number, string>();
  /** lockstep-p2p and frame-advance: the mode's wire and one routed connection per other player's slot. */
  private routed: { readonly shape: P2PLockstepShape; readonly routes: Map<number, RoutedConnection> } | undefined;
  /** Local players, chat, pause requests, the host's commands (issue 15). */
  private readonly control: ClientControl;
  /** Lockstep: the core the runner drives (a `SlotCore` unless the layout is the identity). */
  private lockstepCore: Core | undefined;
  /** Rollback: direct links to the other players and the host hand-over (issues 17, 15), if `links` was given. */
  private mesh: ClientMesh | undefined;

  constructor(connection: Connection, options: NetplayClientOptions) {
    this.conn = connection;
    this.options = options;
    this.core = options.core;
    this.control = new ClientControl(
      {
        send: (data) => this.sendControl(data),
        chat: (e) => this.emitter.emit('chat', e),
        command: (kind, frame) => this.emitter.emit(kind, { frame }),
      },
      options.core,
      options.spectate === true ? 1 : (options.localPlayers ?? 1),
    );
    const timeout = options.handshakeTimeoutMs ?? 10_000;
    this.timer = options.clock.setTimer(timeout, () => {
      this.timer = undefined;
      if (this.stage === 'handshaking')
        this.fail(new SessionError('timeout', `handshake not done within ${timeout} ms`));
    });
    this.offs.push(
      connection.on('message', ({ channel, data }) => this.onMessage(channel, data)),
      connection.on('close', ({ reason, code }) =>
        this.onClose(code === 'local' ? undefined : reason, code === 'remote'),
      ),
    );
    if (connection.state === 'closed') {
      this.onClose('closed before the handshake');
      return;
    }
    this.sendControl(
      encodeHello({
        spectate: options.spectate === true,
        nick: options.nick,
        version: options.protocolVersion ?? SESSION_PROTOCOL_VERSION,
        ...(options.spectate === true ? {} : { localPlayers: this.control.localPlayers }),
      }),
    );
  }

  on<K extends keyof NetplayClientEventMap>(type: K, handler: Handler<NetplayClientEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  /** `handshaking`, then `playing` or `spectating`, then `closed`. */
  get state(): NetplayClientState {
    return this.stage;
  }

  /** What the host told us (after `joined`). */
  get info(): JoinInfo | undefined {
    return this.joinInfo;
  }

  /** True while the game is paused (`paused` / `resumed` events). */
  get paused(): boolean {
    return this.control.paused;
  }

  /** Sends a chat line through the host (`chat` comes back to everyone). @throws SessionError `bad-argument` if empty or over 256 bytes. */
  chat(text: string): void {
    this.control.chat(text);
  }

  /** Asks the host to pause every peer (players only). */
  pause(): void {
    this.control.requestPause(true);
  }

  /** Asks the host to resume. */
  resume(): void {
    this.control.requestPause(false);
  }

  /** Why the session ended (after `closed`). */
  get error(): SessionError | undefined {
    return this.failure;
  }

  /** The rollback scheduler of a player (after `joined`). */
  get rollback(): P2PSession | undefined {
    return this.p2p;
  }

  /** The spectator scheduler (after `joined` as a spectator). */
  get spectator(): SpectatorSession | undefined {
    return this.watch;
  }

  /** The driver that runs the scheduler's requests on the core (after `joined`). */
  get driver(): CoreDriver | undefined {
    return this.coreDriver;
  }

  /** The lockstep runner (lockstep modes, after `joined`). */
  get lockstep(): LockstepRunner | undefined {
    return this.runner;
  }

  /** Lockstep report (latency, stalls, bytes/s); undefined in rollback or before `joined`. */
  lockstepReport(): PeerReport | undefined {
    return this.runner?.report();
  }

  /** The next frame to simulate (undefined before the scheduler knows it). */
  get frame(): number | undefined {
    return this.p2p?.currentFrame ?? this.watch?.currentFrame ?? this.runner?.schedulerRef.nextFrame;
  }

  /** Lockstep modes: the last final frame (as the last `final` event said; -1: none); undefined otherwise. */
  get finalFrame(): number | undefined {
    return this.finality?.finalFrame;
  }

  /** Player scheduler stats (undefined for spectators and before `joined`). */
  get stats(): SessionStats | undefined {
    return this.p2p?.stats;
  }

  /** Per-peer scheduler stats of a player (empty otherwise). */
  peerStats(): readonly PeerStats[] {
    return this.p2p?.peerStats() ?? [];
  }

  /**
   * A promise of the {@link JoinInfo}, rejected with the {@link SessionError} if the session
   * closes first. (Events are the sans-I/O way; this is a convenience for CLIs.)
   */
  joined(): Promise<JoinInfo> {
    if (this.joinInfo !== undefined) return Promise.resolve(this.joinInfo);
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const offs = [
        this.on('joined', (info) => {
          for (const off of offs) off();
          resolve(info);
        }),
        this.on('closed', ({ error }) => {
          for (const off of offs) off();
          reject(error);
        }),
      ];
    });
  }

  /**
   * Runs one frame. A player passes its input (`core.inputBytes` bytes). Rollback: the client
   * follows the scheduler's time sync (skipping the frame while polling when it recommends
   * waiting) or adds the input and runs the frame's requests on the core. Lockstep: frames run
   * when the server's frame data arrives (`frame` events); `tick` hands over the input. A
   * spectator's input is ignored (it may run two frames when behind). Before `joined` and after `closed` it does nothing. Returns
   * true when at least one frame was simulated.
   */
  tick(input?: Uint8Array | readonly Uint8Array[]): boolean {
    if (this.runner !== undefined) {
      if (this.stage === 'closed') return false;
      const before = this.runner.framesRun;
      if (this.stage === 'spectating') this.runner.pump();
      else this.runner.setLocalInput(this.control.localInput(input));
      return this.runner.framesRun > before;
    }
    const d = this.coreDriver;
    if (d === undefined || this.stage === 'closed') return false;
    if (this.watch !== undefined) {
      const before = this.watch.currentFrame ?? -1;
      d.run(this.watch.advanceFrame(), this.watch);
      return (this.watch.currentFrame ?? -1) > before;
    }
    const s = this.p2p;
    if (s === undefined) return false;
    if (this.wait > 0) {
      this.wait--;
      s.poll();
      return false;
    }
    const before = s.currentFrame;
    s.addLocalInput(this.control.localInput(input));
    d.run(s.advanceFrame(), s);
    return s.currentFrame > before;
  }

  /** Leaves the session (closes the connection with `reason`). */
  close(reason = 'closed: the client left'): void {
    if (this.mesh?.hostGone === true) {
      this.finish(new SessionError('closed', 'left the session'), reason);
      return;
    }
    this.conn.close(reason);
  }

  private sendControl(data: Uint8Array): void {
    if (this.mesh?.hostGone === true) {
      this.mesh.send(data);
      return;
    }
    if (this.conn.state === 'closed') return;
    try {
      this.conn.send(SESSION_CONTROL_CHANNEL, data);
    } catch (e) {
      if (!(e instanceof TransportError)) throw e;
    }
  }

  private readonly send: SendFn = (peer, channel, data) => {
    const direct = this.mesh?.connectionTo(peer);
    if (direct !== undefined) {
      try {
        direct.send(channel, data);
      } catch (e) {
        if (!(e instanceof TransportError)) throw e;
      }
      return;
    }
    if (this.conn.state === 'closed') return;
    try {
      const slot = peer === this.challenge?.hostNick ? undefined : this.slotOf.get(peer);
      if (slot === undefined) this.conn.send(channel, data);
      else this.conn.send(relayChannelOf(channel), this.framer.frame(slot, data));
    } catch (e) {
      if (!(e instanceof TransportError)) throw e;
    }
  };

  private stopHandshakeTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Refuses the host (REFUSE + close) and ends with `error`. */
  private fail(error: SessionError): void {
    if (this.stage === 'closed') return;
    if (this.mesh?.hostGone === true) {
      this.finish(error);
      return;
    }
    this.failure ??= error;
    this.sendControl(encodeRefuse({ code: error.code, message: error.message }));
    this.conn.close(error.closeReason);
  }

  private onMessage(channel: string, data: Uint8Array): void {
    if (this.stage === 'closed') return;
    if (channel !== SESSION_CONTROL_CHANNEL) {
      if (this.routed !== undefined) {
        this.onRouted(this.routed, channel, data);
        return;
      }
      if (this.runner !== undefined) return; // lockstep-cs: the runner reads them itself
      const host = this.challenge?.hostNick ?? '';
      const relayed = rollbackChannelOf(channel);
      if (relayed !== undefined && this.p2p !== undefined) {
        const from = data.length > 0 ? this.nickOf.get(data[0] ?? 0) : undefined;
        if (from !== undefined) this.p2p.receive(from, relayed, data.subarray(1));
      } else if (this.p2p !== undefined) this.p2p.receive(host, channel, data);
      else if (this.watch !== undefined) this.watch.receive(host, channel, data);
      else if (this.early.length < MAX_EARLY_MESSAGES) this.early.push({ channel, data });
      return;
    }
    if (isRollbackEntry(data) && this.stage === 'handshaking' && this.challenge !== undefined) {
      // A player entering a running rollback game: its SYNC, the scheduler's WELCOME and the state.
      try {
        const entry = readRollbackEntry(data, this.core.stateBytes);
        this.entry = entry.join;
        this.onSync(entry.sync, this.challenge);
      } catch (e) {
        if (!(e instanceof SessionError || e instanceof RollbackError)) throw e;
        this.fail(
          e instanceof SessionError ? e : new SessionError('protocol', `cannot enter the host's game: ${e.message}`),
        );
      }
      return;
    }
    if (isLinkMessage(data)) {
      if (!linkMessageFromHost(this.mesh, this.stage === 'handshaking', data))
        this.fail(new SessionError('protocol', `unexpected link message ${data[0]} from the host`));
      // Admitted (the host sets the links up before SYNC): the handshake timeout no longer applies.
      else this.stopHandshakeTimer();
      return;
    }
    let m: ReturnType<typeof decodeSessionMessage>;
    try {
      m = decodeSessionMessage(data);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      this.fail(new SessionError('protocol', `bad session message from the host: ${e.message}`));
      return;
    }
    if (m.type === SessionMessageType.Refuse) {
      this.failure ??= new SessionError(m.code, m.message);
      return;
    }
    if (this.challenge !== undefined && this.control.onMessage(m)) return;
    if (this.stage === 'handshaking' && this.challenge !== undefined && m.type === SessionMessageType.Wait) {
      // Admitted: the host waits for the other players, so our handshake timeout no longer applies.
      this.timer?.cancel();
      this.timer = undefined;
      this.emitter.emit('waiting', { joined: m.joined, players: m.players });
      return;
    }
    if (this.stage === 'handshaking' && this.challenge === undefined && m.type === SessionMessageType.Challenge) {
      const mine = this.options.protocolVersion ?? SESSION_PROTOCOL_VERSION;
      if (m.magic !== SESSION_MAGIC) {
        this.fail(new SessionError('version-mismatch', 'the host is not a netplay session host (bad magic)'));
        return;
      }
      if (m.version !== mine) {
        this.fail(
          new SessionError(
            'version-mismatch',
            `version mismatch: host speaks session protocol ${m.version}, you speak ${mine}`,
          ),
        );
        return;
      }
      this.challenge = { nick: m.nick, hostNick: m.hostNick };
      const pw = this.options.password;
      const c = this.options.content;
      this.sendControl(
        encodeInfo({
          passwordHash:
            m.passwordRequired && pw !== undefined && pw !== '' ? passwordProof(m.salt, pw) : new Uint8Array(0),
          coreId: c.coreId,
          coreVersion: c.coreVersion,
          contentHash: c.contentHash,
        }),
      );
      if (this.options.links !== undefined && this.options.spectate !== true) {
        this.mesh = new ClientMesh(this.options.links, {
          clock: this.options.clock,
          sendHost: (d) => this.sendControl(d),
          session: () => this.p2p,
          hostMessage: (msg) => this.control.onMessage(msg),
          slotOf: (n) => this.slotOf.get(n),
          chat: (e) => this.emitter.emit('chat', e),
          hostChanged: (e) => this.emitter.emit('host-changed', e),
        });
        this.offs.push(this.on('chat', (e) => this.mesh?.sawChat(e.seq)));
        this.mesh.links.announce();
      } else if (this.options.spectate !== true) this.sendControl(encodeLinkAddress({ address: '', dials: false }));
      return;
    }
    if (this.stage === 'handshaking' && this.challenge !== undefined && m.type === SessionMessageType.Sync) {
      try {
        // The savestate travels packed (a deflated page delta against zeros): unpacked once here.
        this.onSync({ ...m, state: unpackSyncState(m.state, this.core.stateBytes) }, this.challenge);
      } catch (e) {
        // The schedulers refuse shapes they cannot run (e.g. 200 rollback players).
        if (e instanceof SessionError) {
          this.fail(e);
          return;
        }
        if (!(e instanceof RollbackError || e instanceof LockstepError)) throw e;
        this.fail(new SessionError('protocol', `cannot run the host's session: ${e.message}`));
      }
      return;
    }
    this.fail(new SessionError('protocol', `unexpected session message ${m.type} from the host`));
  }

  private onSync(m: SyncMessage, ch: { nick: string; hostNick: string }): void {
    if (!SUPPORTED_MODES.includes(m.mode)) {
      this.fail(
        new SessionError('unsupported-mode', `the host runs mode ${m.mode}, which this client does not support`),
      );
      return;
    }
    const spectating = m.slot === SPECTATOR_SLOT;
    if (!spectating && (m.slot >= m.players || m.players < 2)) {
      this.fail(new SessionError('protocol', `bad slot ${m.slot} of ${m.players} players in SYNC`));
      return;
    }
    const layoutError = this.control.sync(m);
    if (layoutError !== undefined) {
      this.fail(layoutError);
      return;
    }
    this.timer?.cancel();
    this.timer = undefined;
    const info: JoinInfo = {
      nick: ch.nick,
      hostNick: ch.hostNick,
      mode: m.mode,
      slot: spectating ? undefined : m.slot,
      players: m.players,
      inputDelay: m.inputDelay,
      frame: m.frame,
      roster: m.roster,
      ports: this.control.ports,
    };
    const o = this.options;
    if (isP2PLockstep(m.mode) && !spectating) {
      this.startP2P(m.mode, m, info);
      return;
    }
    // lockstep-cs, and a spectator of any lockstep mode (the P2P host streams its frames on the same wire).
    if (m.mode !== 'rollback') {
      // A spectator is a watcher: it loads the state the server sends on `sync` and affects nothing.
      if (!this.loadHostState(m.state)) return;
      this.lockstepCore = this.control.schedulerCore(m.state);
      const cs = new ClientServerClient({
        watch: spectating,
        id: m.slot,
        server: 0,
        ports: m.players,
        inputBytes: this.control.slotBytes,
        frameMs: 1000 / (o.fps ?? 60),
      });

      this.runner = this.startRunner(cs);
      this.stage = spectating ? 'spectating' : 'playing';
      this.joinInfo = info;
      const early = this.early.splice(0);
      for (const e of early) cs.receive(0, e.channel, e.data, o.clock.now());
      this.emitter.emit('joined', info);
      this.runner.addPeer(0, this.conn);
      return;
    }
    if (spectating) {
      const s = new SpectatorSession({ hostPeer: ch.hostNick, send: this.send });
      this.watch = s;
      this.coreDriver = new CoreDriver(this.control.schedulerCore(undefined), s.ringFrames);
      this.stage = 'spectating';
    } else {
      if (!this.loadHostState(m.state)) return;
      for (const e of m.roster)
        if (e.slot !== m.slot && e.slot !== 0 && e.slot < m.players) {
          this.slotOf.set(e.nick, e.slot);
          this.nickOf.set(e.slot, e.nick);
        }
      const { session: s, driver } = startRollback({
        core: this.control.schedulerCore(m.state),
        players: m.players,
        localPlayer: m.slot,
        remotes: m.roster
          .filter((e) => e.slot !== m.slot && e.slot < m.players)
          .map((e) => ({ peer: e.nick, player: e.slot })),
        isHost: false,
        hostPeer: ch.hostNick,
        clock: o.clock,
        send: this.send,
        inputDelay: m.inputDelay,
        fps: o.fps,
        maxPrediction: o.maxPrediction,
        checksumInterval: o.checksumInterval,
        join: this.entry,
        wait: (frames) => {
          this.wait = frames;
        },
        ended: (error) => this.fail(error),
      });
      this.p2p = s;
      this.offs.push(trackEntries(s, this.nickOf, this.slotOf, (n) => this.mesh?.links.retire(n)));
      this.coreDriver = driver;
      this.control.attachRollback(s);
      this.stage = 'playing';
      if (this.mesh !== undefined) this.offs.push(...this.mesh.started(s, ch.nick, m.slot));
    }
    this.joinInfo = info;
    const early = this.early.splice(0);
    for (const e of early) this.onMessage(e.channel, e.data);
    this.emitter.emit('joined', info);
  }

  /** Loads the host's savestate from SYNC (none if empty); false (and the session failed) if it does not load. */
  private loadHostState(state: Uint8Array): boolean {
    if (state.length === 0) return true;
    try {
      this.core.load(state);
      return true;
    } catch (e) {
      this.fail(new SessionError('protocol', `the host's savestate does not load: ${(e as Error).message}`));
      return false;
    }
  }

  /** lockstep-p2p and frame-advance: every other player is a routed connection over the one to the host. */
  private startP2P(mode: P2PLockstepMode, m: SyncMessage, info: JoinInfo): void {
    const o = this.options;
    if (m.slot === SPECTATOR_SLOT) {
      this.fail(new SessionError('unsupported-mode', `spectators are not supported in mode ${mode}`));
      return;
    }
    if (!this.loadHostState(m.state)) return;
    this.lockstepCore = this.control.schedulerCore(m.state);
    const shape = p2pShape(mode);
    const slots = [...new Set(m.roster.filter((e) => e.slot < m.players).map((e) => e.slot))];
    if (!slots.includes(0) || !slots.includes(m.slot)) {
      this.fail(new SessionError('protocol', `the roster in SYNC lacks the host or slot ${m.slot}`));
      return;
    }
    const frameMs = 1000 / (o.fps ?? 60);
    const scheduler = createP2PScheduler(mode, {
      slot: m.slot,
      slots,
      ports: m.players,
      inputBytes: this.control.slotBytes,
      frameMs,
      // A player entering a running game (frame-advance) counts its frames from the host's.
      startMs: o.clock.now() - m.frame * frameMs,
      seed: (o.randomU32 ?? defaultRandomU32)() >>> 0,
      extraDelayMs: m.inputDelay * frameMs,
      ...(m.frame > 0 ? { candidate: true } : {}),
    });
    // A route to every slot, taken or not: a player entering later is reached without a new one.
    const every = Array.from({ length: m.players }, (_, s) => s);
    const routes = clientRoutes(this.conn, shape, every, m.slot);
    this.routed = { shape, routes };
    this.stage = 'playing';
    this.joinInfo = info;
    this.runner = this.startRunner(scheduler, routes);
    this.emitter.emit('joined', info);
    const early = this.early.splice(0);
    for (const e of early) this.onMessage(e.channel, e.data);
  }

  /**
   * Lockstep: the runner, with the finality rule's events handled: `final` events, and the
   * scheduler's end (removed, host lost) ends the session with that `SessionError`.
   */
  private startRunner(scheduler: FinalityScheduler, peers?: Map<number, RoutedConnection>): LockstepRunner {
    const { runner, finality } = startClientRunner(
      this.options.clock,
      this.lockstepCore ?? this.core,
      scheduler,
      {
        final: (frame) => this.emitter.emit('final', { frame }),
        frame: (req) =>
          this.emitter.emit('frame', { frame: req.frame, inputs: this.control.lockstepFrame(req.frame, req.inputs) }),
        ended: (error) => this.fail(error),
      },
      peers,
    );
    this.finality = finality;
    return runner;
  }

  /** A routed message from the host: `[source slot][channel][payload]`; a departed source's are dropped. */
  private onRouted(
    routed: { readonly shape: P2PLockstepShape; readonly routes: Map<number, RoutedConnection> },
    channel: string,
    data: Uint8Array,
  ): void {
    const ci = routedChannelIndex(channel, data, routed.shape.channels);
    if (ci < 0) {
      this.fail(new SessionError('protocol', `bad routed message on ${channel} from the host`));
      return;
    }
    routed.routes.get(data[0]!)?.deliver(ci, data.subarray(ROUTE_HEADER_BYTES));
  }

  /**
   * The host's connection closed: a rollback player with direct links plays on (the scheduler's
   * migration elects a new host or ends the game by the quorum rule); true if so.
   */
  private continuesWithoutHost(remote: boolean): boolean {
    const s = this.p2p;
    const host = this.challenge?.hostNick;
    if (this.stage !== 'playing' || s === undefined || host === undefined || this.failure !== undefined) return false;
    const left = () => this.emitter.emit('host-left', { nick: host, frame: s.currentFrame });
    if (this.mesh?.takeOver(s, host, remote, left) !== true) return false;
    for (const off of this.offs.splice(0, 2)) off(); // the host connection's handlers
    return true;
  }

  /** Ends a session that outlived its host: every link closes, then `closed`. */
  private finish(error: SessionError, reason = error.closeReason): void {
    if (this.stage === 'closed') return;
    this.stage = 'closed';
    this.failure ??= error;
    for (const off of this.offs) off();
    this.mesh?.links.close(reason);
    this.emitter.emit('closed', { error: this.failure });
  }

  private onClose(reason: string | undefined, remote = false): void {
    if (this.stage === 'closed') return;
    if (this.continuesWithoutHost(remote)) return;
    const wasJoined = this.stage !== 'handshaking';
    this.stage = 'closed';
    this.timer?.cancel();
    this.timer = undefined;
    for (const off of this.offs) off();
    this.mesh?.links.close();
    this.runner?.stop();
    if (this.routed !== undefined)
      for (const route of this.routed.routes.values()) route.end({ code: 'remote', reason: reason ?? 'closed' });
    if (this.p2p !== undefined && this.challenge !== undefined) this.p2p.disconnectPeer(this.challenge.hostNick);
    // The host went mid-game (no hand-over; a spectator never follows one): `host-lost` (README).
    if (wasJoined && this.failure === undefined && reason !== undefined)
      this.failure = hostGone(reason, this.watch !== undefined, this.p2p?.confirmedFrame ?? this.finality?.finalFrame);
    this.failure ??=
      reason === undefined
        ? new SessionError('closed', wasJoined ? 'left the session' : 'closed before joining')
        : SessionError.fromCloseReason(reason);
    this.emitter.emit('closed', { error: this.failure });
  }
}

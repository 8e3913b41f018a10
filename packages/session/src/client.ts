import { LockstepError, type LockstepRunner, type PeerReport } from '@netplay/lockstep';
import { DecodeError } from '@netplay/protocol';
import {
  type CoreDriver,
  type P2PSession,
  type PeerStats,
  RollbackError,
  type SessionStats,
  type SpectatorSession,
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
import { type ClientContext, newClientGame } from './client-context.js';
import { ClientControl } from './client-control.js';
import { clientGameMessage } from './client-dispatch.js';
import { hostGone } from './client-handover.js';
import { doorOptions } from './client-handover-door.js';
import { answerChallenge } from './client-handshake.js';
import { type ClientMesh, linkMessageFromHost } from './client-mesh.js';
import type { JoinInfo, NetplayClientEventMap, NetplayClientOptions, NetplayClientState } from './client-options.js';
import { isRollbackEntry, readRollbackEntry } from './client-rollback-join.js';
import { joinInfoOf, startClientGame } from './client-start.js';
import { SessionError } from './errors.js';
import { isLinkMessage } from './link-messages.js';
import {
  decodeSessionMessage,
  encodeHello,
  encodeRefuse,
  SESSION_PROTOCOL_VERSION,
  SessionMessageType,
  type SyncMessage,
} from './messages.js';
import { encodeRejoin, type RejoinTarget } from './rejoin-message.js';
import { unpackSyncState } from './sync-state.js';

export type { JoinInfo, NetplayClientEventMap, NetplayClientOptions, NetplayClientState } from './client-options.js';

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
  private readonly conn: Connection;
  private readonly offs: Unsubscribe[] = [];
  private timer: Timer | undefined;
  private stage: NetplayClientState = 'handshaking';
  private challenge: { nick: string; hostNick: string } | undefined;
  private joinInfo: JoinInfo | undefined;
  private failure: SessionError | undefined;
  /** The running game (its mode's scheduler, once SYNC arrived). */
  private readonly game = newClientGame();
  /** Local players, chat, pause requests, the host's commands (issue 15). */
  private readonly control: ClientControl;
  /** Rollback: direct links to the other players and the host hand-over (issues 17, 15), if `links` was given. */
  private mesh: ClientMesh | undefined;
  /** What the modules that start the game and route its messages share of this client. */
  private readonly ctx: ClientContext;

  constructor(connection: Connection, options: NetplayClientOptions) {
    this.conn = connection;
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
    this.ctx = {
      ...{ core: this.core, conn: connection, options, control: this.control, emitter: this.emitter },
      ...{ game: this.game, offs: this.offs },
      mesh: () => this.mesh,
      hostNick: () => this.challenge?.hostNick,
      enter: (stage, info) => {
        this.stage = stage;
        this.joinInfo = info;
      },
      fail: (error) => this.fail(error),
      message: (channel, data) => this.onMessage(channel, data),
    };
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

  /**
   * Rollback, after a host hand-over, on the elected host only: resets every player at a frame
   * they all agree on (the `reset` event on each). The original host resets with `NetplayHost.reset`.
   * @throws SessionError `bad-argument` on any other client.
   */
  reset(): void {
    if (this.mesh === undefined)
      throw new SessionError('bad-argument', 'only the host resets: this client is not the host');
    this.mesh.reset();
  }

  /**
   * Rollback with direct links, after a hand-over to another player (issue 15): where this client
   * comes back should it drop (the new host's nick and link address, its slot, the token of its pair
   * with that host). Keep it and pass it as a new client's `rejoin` option, connected to `address`.
   */
  get rejoinTarget(): RejoinTarget | undefined {
    const r = this.ctx.options.rejoin;
    return this.mesh?.rejoinTarget() ?? (r !== undefined && r.host === this.challenge?.hostNick ? r : undefined);
  }

  /** Why the session ended (after `closed`). */
  get error(): SessionError | undefined {
    return this.failure;
  }

  /** The rollback scheduler of a player (after `joined`). */
  get rollback(): P2PSession | undefined {
    return this.game.p2p;
  }

  /** The spectator scheduler (after `joined` as a spectator). */
  get spectator(): SpectatorSession | undefined {
    return this.game.watch;
  }

  /** The driver that runs the scheduler's requests on the core (after `joined`). */
  get driver(): CoreDriver | undefined {
    return this.game.driver;
  }

  /** The lockstep runner (lockstep modes, after `joined`). */
  get lockstep(): LockstepRunner | undefined {
    return this.game.runner;
  }

  /** Lockstep report (latency, stalls, bytes/s); undefined in rollback or before `joined`. */
  lockstepReport(): PeerReport | undefined {
    return this.game.runner?.report();
  }

  /** The next frame to simulate (undefined before the scheduler knows it). */
  get frame(): number | undefined {
    const g = this.game;
    return g.p2p?.currentFrame ?? g.watch?.currentFrame ?? g.runner?.schedulerRef.nextFrame;
  }

  /** Lockstep modes: the last final frame (as the last `final` event said; -1: none); undefined otherwise. */
  get finalFrame(): number | undefined {
    return this.game.finality?.finalFrame;
  }

  /** Player scheduler stats (undefined for spectators and before `joined`). */
  get stats(): SessionStats | undefined {
    return this.game.p2p?.stats;
  }

  /** Per-peer scheduler stats of a player (empty otherwise). */
  peerStats(): readonly PeerStats[] {
    return this.game.p2p?.peerStats() ?? [];
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
    const g = this.game;
    if (g.runner !== undefined) {
      if (this.stage === 'closed') return false;
      const before = g.runner.framesRun;
      if (this.stage === 'spectating') g.runner.pump();
      else g.runner.setLocalInput(this.control.localInput(input));
      return g.runner.framesRun > before;
    }
    const d = g.driver;
    if (d === undefined || this.stage === 'closed') return false;
    if (g.watch !== undefined) {
      const before = g.watch.currentFrame ?? -1;
      d.run(g.watch.advanceFrame(), g.watch);
      return (g.watch.currentFrame ?? -1) > before;
    }
    const s = g.p2p;
    if (s === undefined) return false;
    if (g.wait > 0) {
      g.wait--;
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
      clientGameMessage(this.ctx, channel, data);
      return;
    }
    if (isRollbackEntry(data) && this.stage === 'handshaking' && this.challenge !== undefined) {
      // A player entering a running rollback game: its SYNC, the scheduler's WELCOME and the state.
      try {
        const entry = readRollbackEntry(data, this.core.stateBytes);
        this.game.entry = entry.join;
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
      const stage =
        this.challenge === undefined ? 'before-challenge' : this.stage === 'handshaking' ? 'handshaking' : 'joined';
      if (!linkMessageFromHost(this.mesh, stage, data))
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
      const answer = answerChallenge(this.ctx, m, (d) => this.sendControl(d));
      if (answer instanceof SessionError) {
        this.fail(answer);
        return;
      }
      this.challenge = { nick: m.nick, hostNick: m.hostNick };
      // A player coming back to the host elected after a hand-over proves its slot (issue 15).
      if (this.ctx.options.rejoin !== undefined) this.sendControl(encodeRejoin(this.ctx.options.rejoin));
      if (answer !== undefined) {
        this.mesh = answer;
        answer.openDoor(doorOptions(this.ctx.options, this.game.nickOf));
        this.control.rollbackBit = () => answer.commandBit();
        this.offs.push(this.on('chat', (e) => this.mesh?.sawChat(e.seq)));
        answer.links.announce();
      }
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
    const info = joinInfoOf(this.control, m, ch);
    if (info instanceof SessionError) {
      this.fail(info);
      return;
    }
    this.timer?.cancel();
    this.timer = undefined;
    this.mesh?.synced(m);
    startClientGame(this.ctx, m, ch.nick, ch.hostNick, info);
  }

  /**
   * The host's connection closed: a rollback player with direct links plays on (the scheduler's
   * migration elects a new host or ends the game by the quorum rule); true if so.
   */
  private continuesWithoutHost(remote: boolean): boolean {
    const s = this.game.p2p;
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
    // `reason` undefined: this client closed the connection itself (it leaves): no hand-over.
    if (reason !== undefined && this.continuesWithoutHost(remote)) return;
    const wasJoined = this.stage !== 'handshaking';
    this.stage = 'closed';
    this.timer?.cancel();
    this.timer = undefined;
    for (const off of this.offs) off();
    this.mesh?.links.close();
    const g = this.game;
    g.runner?.stop();
    if (g.routed !== undefined)
      for (const route of g.routed.routes.values()) route.end({ code: 'remote', reason: reason ?? 'closed' });
    if (g.p2p !== undefined && this.challenge !== undefined) g.p2p.disconnectPeer(this.challenge.hostNick);
    // The host went mid-game (no hand-over; a spectator never follows one): `host-lost` (README).
    if (wasJoined && this.failure === undefined && reason !== undefined)
      this.failure = hostGone(reason, g.watch !== undefined, g.p2p?.confirmedFrame ?? g.finality?.finalFrame);
    this.failure ??=
      reason === undefined
        ? new SessionError('closed', wasJoined ? 'left the session' : 'closed before joining')
        : SessionError.fromCloseReason(reason);
    this.emitter.emit('closed', { error: this.failure });
  }
}

import { type Clock, Emitter, type EventSource, type Handler, type Unsubscribe } from '@netplay/transport';
import { CONTROL_CHANNEL } from './channels.js';
import { ChecksumExchange } from './checksum-exchange.js';
import { DropReports } from './drop-reports.js';
import { EndAgreement } from './end-agreement.js';
import { RollbackError } from './errors.js';
import type { SessionEventMap } from './events.js';
import { Finality, type SessionEndReason } from './finality.js';
import { HostCommands } from './host-commands.js';
import { HostMigration } from './host-migration.js';
import { HostRole } from './host-role.js';
import { InputExchange } from './input-exchange.js';
import { Liveness } from './liveness.js';
import { MessageDispatch } from './message-dispatch.js';
import { MessageType } from './messages.js';
import { ModeSwitch } from './mode-switch.js';
import type { P2PSessionOptions } from './p2p-options.js';
import { PeerSet } from './peer-set.js';
import { type PlayerAdmission, PlayerEntries } from './player-entries.js';
import { PlayerLeaves } from './player-leaves.js';
import { repeatLastInput } from './predictor.js';
import { Quorum } from './quorum.js';
import { Remote } from './remote.js';
import { RequestList, type SessionRequest } from './requests.js';
import type { PeerStats, SessionStats } from './session-stats.js';
import { SpectatorServer } from './spectator-server.js';
import { checkDelay, checkPlayer } from './sync-test-session.js';
import { TimeSync } from './time-sync.js';
import { Timeline } from './timeline.js';

/** The DROPPED message (no body). */
const DROPPED = new Uint8Array([MessageType.Dropped]);

/** Extra snapshot slots in {@link P2PSession.ringFrames} for the finality lag (≈ 0.5 s at 60 fps). */
export const FINALITY_LAG_FRAMES = 32;

/**
 * A full-mesh rollback session (GGPO): every peer sends its player's inputs to every other
 * peer on an unreliable channel, redundantly until acknowledged, encoded with the protocol's
 * input-stream codec; remote inputs are predicted, and a misprediction rolls back to the first
 * wrong frame and resimulates. One peer is the host (RetroArch): it decides the frame at which a
 * disconnected player is removed, syncs spectators mid-stream, pauses, loads states, and
 * repairs desyncs by sending its savestate.
 *
 * Sans-I/O: feed it with {@link receive} and {@link disconnectPeer}, call {@link advanceFrame}
 * once per frame after {@link addLocalInput}, and carry out the requests it returns.
 */
export class P2PSession implements EventSource<SessionEventMap> {
  private readonly timeline: Timeline;
  private readonly list = new RequestList();
  private readonly emitter = new Emitter<SessionEventMap>();
  private readonly peers: PeerSet;
  private readonly liveness: Liveness;
  private readonly timeSync: TimeSync;
  private readonly spectators: SpectatorServer;
  private readonly role: HostRole;
  private readonly commands: HostCommands;
  private readonly inputs: InputExchange;
  private readonly checksums: ChecksumExchange;
  private readonly leaves: PlayerLeaves;
  private readonly modes: ModeSwitch;
  private readonly migration: HostMigration;
  private readonly drops: DropReports;
  private readonly finality: Finality;
  private readonly entries: PlayerEntries;
  private readonly dispatch: MessageDispatch;
  private readonly clock: Clock;
  private readonly interruptMs: number;
  private delay: number;
  private stallCount = 0;
  /** The slot of this peer's player. */
  readonly localPlayer: number;
  /** Whether this peer is the host (it may become it when the host leaves). */
  get isHost(): boolean {
    return this.role.isHost;
  }
  /** The host's peer id (undefined on the host). */
  get hostPeer(): string | undefined {
    return this.role.hostPeer;
  }
  /** Checksum exchange interval in frames (0: off). */
  readonly checksumInterval: number;

  constructor(options: P2PSessionOptions) {
    const players = options.players;
    if (!Number.isInteger(players) || players < 2 || players > 16)
      throw new RollbackError('bad-argument', `players must be 2..16, got ${players}`);
    checkPlayer(options.localPlayer, players);
    const maxPrediction = options.maxPrediction ?? 8;
    this.timeline = new Timeline(players, options.inputBytes, maxPrediction, options.predictor ?? repeatLastInput);
    this.localPlayer = options.localPlayer;
    this.clock = options.clock;
    this.delay = checkDelay(options.inputDelay ?? 0);
    const fps = options.fps ?? 60;
    if (!(fps > 0 && fps <= 1000)) throw new RollbackError('bad-argument', `fps must be in (0, 1000], got ${fps}`);
    const disconnectMs = options.disconnectMs ?? 5000;
    this.interruptMs = options.interruptMs ?? 750;
    const interval = options.checksumInterval ?? 60;
    if (!Number.isInteger(interval) || interval < 0)
      throw new RollbackError('bad-argument', `checksumInterval must be a non-negative integer, got ${interval}`);
    this.checksumInterval = interval;
    const now = this.clock.now();
    this.peers = new PeerSet(options.send, now);
    const seen = new Set<number>([this.localPlayer]);
    for (const r of options.remotes) {
      checkPlayer(r.player, players);
      if (seen.has(r.player)) throw new RollbackError('bad-argument', `player ${r.player} is given twice`);
      if (this.peers.byPeer.has(r.peer)) throw new RollbackError('bad-argument', `peer ${r.peer} is given twice`);
      seen.add(r.player);
      this.peers.add(new Remote(r.peer, r.player, now));
    }
    this.liveness = new Liveness(
      this.peers,
      this.timeline,
      this.emitter,
      this.clock,
      this.interruptMs,
      disconnectMs,
      (peer) => this.disconnectPeer(peer),
      () =>
        !this.commands.paused && this.timeline.currentFrame >= this.timeline.unreadFrame + this.timeline.maxPrediction,
      () => this.role.epoch,
    );
    this.spectators = new SpectatorServer(this.timeline, this.peers, options.send, options.stateSource, this.emitter);
    this.role = new HostRole(options.isHost === true, options.hostPeer, this.peers, this.spectators);
    this.commands = new HostCommands(this.timeline, this.role, this.emitter);
    this.timeSync = new TimeSync(this.timeline, this.peers, this.emitter, fps, options.waitInterval ?? 60);
    this.inputs = new InputExchange(
      this.timeline,
      this.peers,
      this.timeSync,
      this.role,
      this.clock,
      this.localPlayer,
      fps,
      () => this.delay,
      () => this.liveness.running,
    );
    this.checksums = new ChecksumExchange(
      interval,
      this.timeline,
      this.peers,
      this.role,
      options.stateSource,
      this.emitter,
    );
    this.inputs.checksums = this.checksums;
    const quorum = new Quorum(this.timeline, this.peers, this.role, this.localPlayer);
    this.leaves = new PlayerLeaves(
      this.timeline,
      this.peers,
      this.inputs,
      this.role,
      this.liveness,
      this.emitter,
      quorum,
      this.localPlayer,
      (frame) => this.finality.end('removed', frame),
    );
    this.modes = new ModeSwitch(this.timeline, this.peers, this.inputs, this.role, this.emitter, this.localPlayer);
    this.migration = new HostMigration(this.timeline, this.inputs, this.role, this.leaves, quorum, this.emitter);
    this.drops = new DropReports(
      ...([this.timeline, this.peers, this.role, this.liveness, this.interruptMs, disconnectMs] as const),
      (peer) => this.disconnectPeer(peer),
    );
    this.finality = new Finality(
      this.timeline,
      this.peers,
      quorum,
      this.role,
      this.emitter,
      disconnectMs,
      new EndAgreement(this.peers, disconnectMs > 0 ? Math.min(this.interruptMs, disconnectMs) : this.interruptMs),
    );
    this.entries = new PlayerEntries(
      ...([this.timeline, this.peers, this.inputs, this.role, this.leaves, quorum, this.liveness] as const),
      ...([this.spectators, this.commands, this.emitter, this.clock, this.localPlayer, options.stateSource] as const),
    );
    this.dispatch = new MessageDispatch({
      ...{ peers: this.peers, liveness: this.liveness, spectators: this.spectators, role: this.role },
      ...{ commands: this.commands, inputs: this.inputs, leaves: this.leaves, modes: this.modes, drops: this.drops },
      ...{ entries: this.entries, emitter: this.emitter, localPlayer: this.localPlayer },
      interruptMs: this.interruptMs,
      now: () => this.clock.now(),
      delay: () => this.delay,
      disconnectPeer: (peer) => this.disconnectPeer(peer),
      onEnd: (r, data) => this.finality.onEnd(r, data),
    });
    const join = options.join;
    if (join !== undefined) this.entries.startAsJoiner(join.welcome, join.state);
    // Slots nobody plays are empty from frame 0, and so are the slots of spectating peers.
    if (join === undefined) for (let p = 0; p < players; p++) if (!seen.has(p)) this.timeline.disconnect(p, 0);
    if (options.spectating === true) this.timeline.disconnect(this.localPlayer, 0);
    for (const r of options.remotes) if (r.spectating === true) this.timeline.disconnect(r.player, 0);
    if (this.peers.list.length === 0) this.liveness.running = true;
  }

  on<K extends keyof SessionEventMap>(type: K, handler: Handler<SessionEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  /** Number of player slots. */
  get players(): number {
    return this.timeline.players;
  }

  /** Bytes per player input. */
  get inputBytes(): number {
    return this.timeline.inputBytes;
  }

  /** The prediction window. */
  get maxPrediction(): number {
    return this.timeline.maxPrediction;
  }

  /**
   * Snapshot slots a driver needs: `maxPrediction + 2` to roll back, plus {@link FINALITY_LAG_FRAMES}
   * so that the states of frames becoming final (which takes the members' reports of holding their
   * inputs: about one round trip) are still stored for the application to hash.
   */
  get ringFrames(): number {
    return this.timeline.maxPrediction + 2 + FINALITY_LAG_FRAMES;
  }

  /** RetroArch's self: the next frame to simulate. */
  get currentFrame(): number {
    return this.timeline.currentFrame;
  }

  /** RetroArch's unread: the first frame some player's input is missing for (Infinity if none). */
  get unreadFrame(): number {
    return this.timeline.unreadFrame;
  }

  /**
   * States before and at this frame are final: simulated with every real input (RetroArch's other)
   * and every member reported holding those inputs. It stops while this peer's group lacks quorum,
   * and stays once the session ended.
   */
  get confirmedFrame(): number {
    return this.finality.confirmedFrame;
  }

  /** Why the session ended (event `ended`), or undefined while it runs. */
  get endReason(): SessionEndReason | undefined {
    return this.finality.endReason;
  }

  /** True once every peer has been heard from. */
  get isRunning(): boolean {
    return this.liveness.running;
  }

  /** True while the host has the game paused. */
  get paused(): boolean {
    return this.commands.paused;
  }

  /** The local input delay in frames; may change at any time. */
  get inputDelay(): number {
    return this.delay;
  }
  /** Sets the input delay, 0..30 frames (RollbackError `bad-argument` otherwise). */
  set inputDelay(frames: number) {
    this.delay = checkDelay(frames);
  }

  /**
   * Time sync: how many frames this peer runs ahead of the slowest peer (averaged over the last
   * 16 frames; negative when behind everybody).
   */
  get framesAhead(): number {
    return this.timeSync.framesAhead;
  }

  /** Frames the application should skip now to let the others catch up (0 when in step). */
  get recommendedWait(): number {
    return this.timeSync.recommendedWait;
  }

  /**
   * RetroArch's catch-up: how many extra frames to run (frame limiter off) because every other peer
   * is at least two frames ahead of this one.
   */
  get catchUpFrames(): number {
    return this.timeSync.catchUpFrames;
  }

  /**
   * Sets this peer's input for the current frame plus the input delay. Inputs for frames that
   * already have one (a stalled frame, or after the delay shrank) are dropped. Ignored until
   * the session runs, and once it ended.
   */
  addLocalInput(input: Uint8Array): void {
    if (input.length !== this.timeline.inputBytes)
      throw new RollbackError('bad-argument', `input of ${input.length} bytes, expected ${this.timeline.inputBytes}`);
    if (!this.liveness.running || this.finality.endReason !== undefined) return;
    this.timeline.addLocal(this.localPlayer, this.timeline.currentFrame + this.delay, input);
  }

  /** The checksums this session needs (those of the exchange frames). */
  needsChecksum(frame: number): boolean {
    return this.checksums.needs(frame);
  }

  /** Receives the checksum of the state saved for `frame` (the {@link CoreDriver} calls it). */
  setChecksum(frame: number, checksum: bigint): void {
    this.timeline.recordChecksum(frame, checksum);
  }

  /**
   * One frame: applies a pending host savestate, rolls back and resimulates if a prediction was
   * wrong, then simulates the current frame unless the prediction window is full, the game is
   * paused or peers are still synchronizing. Sends inputs, checksums and spectator data. The
   * returned list is reused by the next call.
   */
  advanceFrame(): readonly SessionRequest[] {
    const t = this.timeline;
    const list = this.list;
    list.clear();
    const now = this.clock.now();
    // A peer timing out may start the session inside this call: the local input comes next frame.
    const wasRunning = this.liveness.running;
    this.checkSilence(now);
    if (this.finality.endReason !== undefined) return list.done();
    this.leaves.finish();
    if (!wasRunning || !this.liveness.running) {
      this.stallCount++;
      this.inputs.send(now);
      return list.done();
    }
    const other = t.otherFrame;
    this.checksums.exchange(other);
    if (this.isHost) this.spectators.serve(other, this.delay);
    const load = this.commands.takeLoad();
    if (load !== undefined) {
      t.loadState(list, load.frame, load.state);
      for (const q of t.queues) q.restartAt(load.frame);
      if (load.frame > this.inputs.refAfter) this.inputs.refAfter = load.frame;
      this.checksums.afterLoad(load.frame, load.repair);
      // Inputs before a loaded state are irrelevant: spectators jump to it too.
      this.spectators.jumpTo(load.frame);
      if (load.repair) this.emitter.emit('desync-repaired', { frame: load.frame });
    }
    t.saveIfNeeded(list);
    t.rollbackIfNeeded(list);
    const unread = t.unreadFrame;
    if (!this.commands.paused && t.currentFrame < unread + t.maxPrediction) {
      if (!t.queues[this.localPlayer]!.has(t.currentFrame))
        throw new RollbackError('bad-state', `no local input for frame ${t.currentFrame}: call addLocalInput first`);
      t.advance(list);
    } else {
      this.stallCount++;
    }
    this.timeSync.update(now);
    this.inputs.send(now);
    return list.done();
  }

  /**
   * Sends pending inputs and checks for silent peers without advancing (call it while the
   * application waits, e.g. on a recommended wait or a stall).
   */
  poll(): void {
    const now = this.clock.now();
    this.checkSilence(now);
    if (this.finality.endReason !== undefined) return;
    this.leaves.finish();
    this.inputs.send(now);
  }

  /** Feeds one message received from `peer` on `channel`. Undecodable bytes are dropped and reported. */
  receive(peer: string, channel: string, data: Uint8Array): void {
    if (this.finality.endReason !== undefined) return;
    this.dispatch.receive(peer, channel, data);
  }

  /**
   * The link to `peer` is gone (the transport closed). On the host, a player's departure is
   * decided at the frame after its last input the host holds, and broadcast; the other peers
   * wait for that decision. A spectator is simply dropped.
   * @param how `left`: the peer closed its link itself (a clean close it announced), so it no
   *   longer counts toward quorum (README, "Finality and partitions"); `lost` (default): a timeout
   *   or a broken link, which may be a partition.
   */
  disconnectPeer(peer: string, how: 'left' | 'lost' = 'lost'): void {
    if (this.spectators.remove(peer) || this.finality.endReason !== undefined) return;
    const r = this.peers.byPeer.get(peer);
    if (r === undefined || !r.connected) return;
    if (how === 'left') r.leftVoluntarily = true;
    // It may still hear us (a one-sided timeout): it drops us too, at once, instead of waiting
    // for its own timeout (so a host that came back from a pause removes this peer without delay).
    // The host says LEAVE instead, once the removal is agreed.
    if (!this.isHost) this.peers.send(r, CONTROL_CHANNEL, DROPPED);
    r.connected = false;
    this.emitter.emit('disconnected', { peer });
    this.leaves.forget(peer);
    // A member it can no longer play with: its host decides between the two (drop-reports.ts).
    this.drops.dropped(r);
    if (this.isHost) this.leaves.start(r.player);
    else if (peer === this.hostPeer) this.migration.migrate(r);
    this.liveness.checkRunning();
  }

  /**
   * Asks to play (true) or to spectate (false) while staying connected; the host honours it at a
   * frame of its choosing, announced to every peer (event `mode-changed`). On the host it is
   * decided at once. To spectate, the player stops right after the inputs it already gave.
   * @returns the frame from which this player stops playing (spectate), or undefined (play).
   */
  requestMode(playing: boolean): number | undefined {
    return this.modes.request(playing, this.delay);
  }

  /**
   * Host only: admits `peer` into the free slot `player` (left at a final frame, or never played)
   * at an entry frame every peer is told (ENTER, event `player-entered`), `leadFrames` or more after
   * the host's next frame plus its delay. Ship the state and WELCOME to the joiner (option `join`).
   * Undefined when it cannot be decided now (see the README, "Players entering"): try again later.
   * @throws RollbackError `bad-argument` (no such free slot) or `bad-state` (not the host, the slot
   *   or the peer id taken by a connected peer).
   */
  admitPlayer(peer: string, player: number, leadFrames = 0): PlayerAdmission | undefined {
    if (this.finality.endReason !== undefined) return undefined;
    return this.entries.admit(peer, player, leadFrames, this.delay, this.finality.confirmedFrame);
  }

  /** Host only: pauses (true) or resumes (false) every peer. */
  setHostPaused(paused: boolean): void {
    this.commands.pause(paused);
  }

  /**
   * Host only: loads `state` as the state of the current frame on every peer (RetroArch's
   * LOAD_SAVESTATE) and returns that frame. Not final-safe: a peer may already hold that frame's
   * state as final (@netplay/session resets through the inputs instead).
   */
  loadHostState(state: Uint8Array): number {
    return this.commands.load(state);
  }

  /** Statistics of every remote peer. */
  peerStats(): PeerStats[] {
    const now = this.clock.now();
    return this.peers.list.map((r) => ({
      peer: r.peer,
      player: r.player,
      rttMs: r.rttMs,
      framesBehind: this.timeSync.framesBehind(r, now),
      framesAhead: r.framesAhead,
      rollbacks: this.timeline.rollbacksBy[r.player]!,
      maxRollbackDepth: this.timeline.maxDepthBy[r.player]!,
      sendBytesPerSec: r.sendRate,
      receiveBytesPerSec: r.receiveRate,
      bytesSent: r.bytesSent,
      bytesReceived: r.bytesReceived,
      badMessages: r.badMessages,
      connected: r.connected,
    }));
  }

  /** Session-wide statistics. */
  get stats(): SessionStats {
    const t = this.timeline;
    return {
      currentFrame: t.currentFrame,
      confirmedFrame: this.finality.confirmedFrame,
      rollbacks: t.rollbacks,
      lastRollbackDepth: t.lastRollbackDepth,
      maxRollbackDepth: t.maxRollbackDepth,
      resimulatedFrames: t.resimulatedFrames,
      stalls: this.stallCount,
      desyncs: this.checksums.desyncs,
    };
  }

  /** Player slots currently playing (not removed). */
  activePlayers(): number[] {
    const out: number[] = [];
    for (let p = 0; p < this.timeline.players; p++)
      if (this.timeline.queues[p]!.disconnectFrame === Number.POSITIVE_INFINITY) out.push(p);
    return out;
  }

  /** The frame from which `player` is gone, or undefined while it plays. */
  playerLeftAt(player: number): number | undefined {
    const f = this.timeline.queues[player]?.disconnectFrame;
    return f === undefined || f === Number.POSITIVE_INFINITY ? undefined : f;
  }

  // ---- internals -------------------------------------------------------------------------

  /** Host-only messages ignored because their sender is not this peer's host. */
  get ignoredMessages(): number {
    return this.dispatch.ignoredMessages;
  }

  /** Liveness, then the quorum rule: a lost host is replaced only with quorum; without it finals stop, then the session ends. */
  private checkSilence(now: number): void {
    if (this.finality.endReason !== undefined) return;
    this.liveness.checkSilence(now);
    this.drops.check(now);
    // Rare (a report request kept while the host had no life here): no lookup, no closure per frame.
    if (this.leaves.hasDeferred)
      for (const p of this.peers.list)
        if (p.connected && (!p.interrupted || this.liveness.starvedHere(p)) && this.role.isFrom(p.peer))
          this.leaves.answerDeferred(p);
    this.migration.retry();
    if (this.role.isHost) this.role.log.resend(this.role.epoch, now);
    this.finality.check(now);
    this.peers.updateRates(now);
  }
}

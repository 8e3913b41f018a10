import { DecodeError } from '@netplay/protocol';
import { type Clock, Emitter, type EventSource, type Handler, type Unsubscribe } from '@netplay/transport';
import { CONTROL_CHANNEL } from './channels.js';
import { ChecksumExchange } from './checksum-exchange.js';
import { RollbackError } from './errors.js';
import type { SessionEventMap } from './events.js';
import { HostCommands } from './host-commands.js';
import { HostRole } from './host-role.js';
import { InputExchange } from './input-exchange.js';
import { Liveness } from './liveness.js';
import { decodeByteFrameTail, encodeByteFrameTail, MessageType } from './messages.js';
import type { P2PSessionOptions } from './p2p-options.js';
import { PeerSet } from './peer-set.js';
import { repeatLastInput } from './predictor.js';
import { Remote } from './remote.js';
import { RequestList, type SessionRequest } from './requests.js';
import type { PeerStats, SessionStats } from './session-stats.js';
import { SpectatorServer } from './spectator-server.js';
import { checkDelay, checkPlayer } from './sync-test-session.js';
import { TimeSync } from './time-sync.js';
import { Timeline } from './timeline.js';

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
  private readonly clock: Clock;
  private readonly disconnectMs: number;
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
    this.disconnectMs = options.disconnectMs ?? 5000;
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
      if (this.peers.get(r.peer) !== undefined)
        throw new RollbackError('bad-argument', `peer ${r.peer} is given twice`);
      seen.add(r.player);
      this.peers.add(new Remote(r.peer, r.player, now));
    }
    this.liveness = new Liveness(
      this.peers,
      this.timeline,
      this.emitter,
      this.clock,
      options.interruptMs ?? 750,
      this.disconnectMs,
      (peer) => this.disconnectPeer(peer),
    );
    this.spectators = new SpectatorServer(this.timeline, this.peers, options.send, options.stateSource, this.emitter);
    this.role = new HostRole(options.isHost === true, options.hostPeer, this.peers, this.spectators);
    this.commands = new HostCommands(this.timeline, this.role, this.emitter);
    this.timeSync = new TimeSync(this.timeline, this.peers, this.emitter, fps, options.waitInterval ?? 60);
    this.inputs = new InputExchange(this.timeline, this.peers, this.timeSync, this.role, this.clock, this.localPlayer);
    this.checksums = new ChecksumExchange(
      interval,
      this.timeline,
      this.peers,
      this.role,
      options.stateSource,
      this.emitter,
    );
    // Slots nobody plays are empty from frame 0, and so are the slots of spectating peers.
    for (let p = 0; p < players; p++) if (!seen.has(p)) this.timeline.disconnect(p, 0);
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

  /** Snapshot slots a driver needs: `maxPrediction + 2`. */
  get ringFrames(): number {
    return this.timeline.maxPrediction + 2;
  }

  /** RetroArch's self: the next frame to simulate. */
  get currentFrame(): number {
    return this.timeline.currentFrame;
  }

  /** RetroArch's unread: the first frame some player's input is missing for (Infinity if none). */
  get unreadFrame(): number {
    return this.timeline.unreadFrame;
  }

  /** RetroArch's other: states before and at this frame are final (every input known and used). */
  get confirmedFrame(): number {
    return this.timeline.otherFrame;
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
   * the session runs.
   */
  addLocalInput(input: Uint8Array): void {
    if (input.length !== this.timeline.inputBytes)
      throw new RollbackError('bad-argument', `input of ${input.length} bytes, expected ${this.timeline.inputBytes}`);
    if (!this.liveness.running) return;
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
    this.finishLeaves(now);
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
    this.finishLeaves(now);
    this.inputs.send(now);
  }

  /** Feeds one message received from `peer` on `channel`. Undecodable bytes are dropped and reported. */
  receive(peer: string, channel: string, data: Uint8Array): void {
    const r = this.peers.get(peer);
    try {
      if (r === undefined) {
        if (this.isHost && channel === CONTROL_CHANNEL && data[0] === MessageType.Spectate) {
          this.spectators.add(peer);
          return;
        }
        throw new DecodeError('unknown-type', 0, `message from unknown peer ${peer}`);
      }
      if (!r.connected) return;
      this.peers.received(r, data.length);
      this.liveness.heard(r);
      if (data.length === 0) throw new DecodeError('truncated', 0, 'empty message');
      switch (data[0]) {
        case MessageType.Input:
          this.inputs.onInput(r, data);
          break;
        case MessageType.Checksum:
          this.checksums.onMessage(r, data);
          break;
        case MessageType.Leave:
          if (!this.fromHost(peer)) break;
          this.role.applied();
          this.onLeave(data);
          break;
        case MessageType.Load: {
          if (!this.fromHost(peer)) break;
          this.commands.onLoad(data);
          break;
        }
        case MessageType.Pause: {
          if (!this.fromHost(peer)) break;
          this.commands.onPause(data);
          break;
        }
        case MessageType.Mode:
          if (!this.fromHost(peer)) break;
          this.role.applied();
          this.onMode(data);
          break;
        case MessageType.ModeRequest: {
          if (!this.isHost) throw new RollbackError('protocol', `${peer} asked a non-host to change its mode`);
          const m = decodeByteFrameTail(data, 'MODE_REQUEST');
          this.switchMode(r.player, m.byte === 1, m.frame);
          break;
        }
        case MessageType.ReportRequest: {
          if (!this.fromHost(peer)) break;
          const m = decodeByteFrameTail(data, 'REPORT_REQUEST');
          if (m.byte >= this.timeline.players) throw new DecodeError('bad-value', 1, `player ${m.byte}`);
          this.inputs.freeze(m.byte);
          const q = this.timeline.queues[m.byte]!;
          const next = q.lastFrame + 1;
          this.peers.send(
            r,
            CONTROL_CHANNEL,
            encodeByteFrameTail(MessageType.Report, m.byte, next, this.inputs.lastInputs(m.byte, next)),
          );
          break;
        }
        case MessageType.Report: {
          if (!this.isHost) throw new RollbackError('protocol', `${peer} sent a REPORT to a non-host`);
          const m = decodeByteFrameTail(data, 'REPORT');
          if (m.byte >= this.timeline.players) throw new DecodeError('bad-value', 1, `player ${m.byte}`);
          const pending = this.pendingLeaves.get(m.byte);
          if (pending === undefined) break;
          if (m.tail.length > 0) this.inputs.take(m.byte, m.tail);
          pending.waiting.delete(peer);
          this.finishLeaves(this.clock.now());
          break;
        }
        case MessageType.Joined: {
          if (!this.fromHost(peer)) break;
          const m = decodeByteFrameTail(data, 'JOINED');
          this.emitter.emit('spectator-joined', { peer: new TextDecoder().decode(m.tail), frame: m.frame });
          break;
        }
        default:
          throw new DecodeError('unknown-type', 0, `message type ${data[0]}`);
      }
    } catch (e) {
      if (!(e instanceof DecodeError) && !(e instanceof RollbackError && e.code === 'protocol')) throw e;
      if (r !== undefined) r.badMessages++;
      this.emitter.emit('protocol-error', { peer, error: e });
    }
  }

  /**
   * The link to `peer` is gone (the transport closed). On the host, a player's departure is
   * decided at the frame after its last input the host holds, and broadcast; the other peers
   * wait for that decision. A spectator is simply dropped.
   */
  disconnectPeer(peer: string): void {
    if (this.spectators.remove(peer)) return;
    const r = this.peers.get(peer);
    if (r === undefined || !r.connected) return;
    r.connected = false;
    this.emitter.emit('disconnected', { peer });
    for (const pending of this.pendingLeaves.values()) pending.waiting.delete(peer);
    if (this.isHost) this.startLeave(r.player);
    else if (peer === this.hostPeer) this.migrateHost(r);
    this.liveness.checkRunning();
  }

  /**
   * Host: a player's link broke. Every peer is asked to stop taking that player's inputs and to
   * report the ones it holds; once all have answered (or `disconnectMs` passed) the player leaves
   * at the frame after the last input anyone holds, so no peer ever has to undo a frame it took
   * as final.
   */
  private startLeave(player: number): void {
    const q = this.timeline.queues[player]!;
    if (q.disconnectFrame !== Number.POSITIVE_INFINITY || this.pendingLeaves.has(player)) return;
    this.inputs.freeze(player);
    const waiting = new Set<string>();
    for (const r of this.peers.list) {
      if (!r.connected || r.player === player) continue;
      waiting.add(r.peer);
      this.peers.send(r, CONTROL_CHANNEL, encodeByteFrameTail(MessageType.ReportRequest, player, 0, undefined));
    }
    const wait = this.disconnectMs > 0 ? this.disconnectMs : 5000;
    this.pendingLeaves.set(player, { waiting, deadline: this.clock.now() + wait });
    this.finishLeaves(this.clock.now());
  }

  /** Host: decides the pending leaves whose reports are all in (or overdue). */
  private finishLeaves(now: number): void {
    if (this.pendingLeaves.size === 0) return;
    for (const [player, pending] of [...this.pendingLeaves]) {
      if (pending.waiting.size > 0 && now < pending.deadline) continue;
      this.pendingLeaves.delete(player);
      this.removePlayer(player);
    }
  }
  private readonly pendingLeaves = new Map<number, { waiting: Set<string>; deadline: number }>();

  /**
   * Asks to play (true) or to spectate (false) while staying connected; the host honours it at a
   * frame of its choosing, announced to every peer (event `mode-changed`). On the host it is
   * decided at once. To spectate, the player stops right after the inputs it already gave.
   * @returns the frame from which this player stops playing (spectate), or undefined (play).
   */
  requestMode(playing: boolean): number | undefined {
    const q = this.timeline.queues[this.localPlayer]!;
    // To spectate, the player stops right after the inputs it already gave: nobody can hold an
    // input of it past that frame, so the switch never undoes a frame a peer took as final.
    const stopAt = q.lastFrame + 1;
    if (this.isHost) {
      this.switchMode(this.localPlayer, playing, stopAt);
      return playing ? undefined : stopAt;
    }
    const host = this.hostPeer === undefined ? undefined : this.peers.get(this.hostPeer);
    if (host === undefined || !host.connected) throw new RollbackError('bad-state', 'no host to ask');
    if (!playing) this.timeline.disconnect(this.localPlayer, stopAt);
    this.peers.send(
      host,
      CONTROL_CHANNEL,
      encodeByteFrameTail(MessageType.ModeRequest, playing ? 1 : 0, stopAt, undefined),
    );
    return playing ? undefined : stopAt;
  }

  /** Host only: pauses (true) or resumes (false) every peer. */
  setHostPaused(paused: boolean): void {
    this.commands.pause(paused);
  }

  /**
   * Host only: loads `state` as the state of the current frame on every peer (RetroArch's
   * LOAD_SAVESTATE; a reset is the load of a power-on state).
   */
  loadHostState(state: Uint8Array): void {
    this.commands.load(state);
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
      confirmedFrame: t.otherFrame,
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

  /**
   * Whether a host-only message from `peer` is to be applied. One from another peer is ignored (not
   * an error): after a partition a peer may have elected itself host while this one kept the old.
   */
  private fromHost(peer: string): boolean {
    if (this.role.isFrom(peer)) return true;
    this.ignoredMessages++;
    return false;
  }
  /** Host-only messages ignored because their sender is not this peer's host. */
  ignoredMessages = 0;

  /**
   * Host migration: the connected peer with the lowest player slot (this one included) becomes
   * the host. Every peer computes the same successor as long as they agree on who is connected.
   */
  private successor(excluding: string | undefined): Remote | undefined {
    let best: Remote | undefined;
    for (const r of this.peers.list) {
      if (!r.connected || r.peer === excluding) continue;
      if (best === undefined || r.player < best.player) best = r;
    }
    return best !== undefined && best.player < this.localPlayer ? best : undefined;
  }

  /** The host is gone: elect the next one; if it is this peer, start the old host's leave. */
  private migrateHost(oldHost: Remote): void {
    // Report requests of the old host that it never followed with a decision are void.
    this.inputs.unfreezeAllBut(oldHost.player);
    const next = this.successor(oldHost.peer);
    if (next === undefined) {
      this.role.become();
      this.emitter.emit('host-changed', { peer: undefined, frame: this.timeline.currentFrame });
      this.startLeave(oldHost.player);
    } else {
      this.role.follow(next.peer);
      this.emitter.emit('host-changed', { peer: next.peer, frame: this.timeline.currentFrame });
    }
  }

  private checkSilence(now: number): void {
    this.liveness.checkSilence(now);
    this.peers.updateRates(now);
  }

  /** Host: removes `player` at the frame after its last input held, and tells everybody. */
  private removePlayer(player: number): void {
    const q = this.timeline.queues[player]!;
    if (q.disconnectFrame !== Number.POSITIVE_INFINITY) return;
    const frame = q.lastFrame + 1;
    this.role.broadcastDecision(
      encodeByteFrameTail(MessageType.Leave, player, frame, this.inputs.lastInputs(player, frame)),
    );
    this.timeline.disconnect(player, frame);
    this.emitter.emit('player-left', { player, frame });
  }

  /**
   * Host: `player` stops playing at the frame after its last input held, or starts again at the
   * host's next frame plus its input delay; every peer (and spectator) is told.
   */
  private switchMode(player: number, playing: boolean, stopAt: number): void {
    const t = this.timeline;
    const q = t.queues[player]!;
    const isPlaying = q.disconnectFrame === Number.POSITIVE_INFINITY;
    if (isPlaying === playing) return;
    if (!playing) {
      // The player's own last frame, or later if the host already holds more of its inputs.
      const frame = Math.max(stopAt, q.lastFrame + 1);
      const tail = this.inputs.lastInputs(player, Math.min(frame, q.lastFrame + 1));
      this.role.broadcastDecision(encodeByteFrameTail(MessageType.Mode, player, frame, tail));
      t.disconnect(player, frame);
      this.emitter.emit('mode-changed', { player, frame, playing });
    } else {
      const frame = Math.max(t.currentFrame + this.delay + 1, q.disconnectFrame);
      this.role.broadcastDecision(encodeByteFrameTail(MessageType.Mode, player | 0x80, frame, undefined));
      t.rejoin(player, frame);
      this.emitter.emit('mode-changed', { player, frame, playing });
    }
  }

  private onMode(data: Uint8Array): void {
    const m = decodeByteFrameTail(data, 'MODE');
    const player = m.byte & 0x7f;
    const playing = (m.byte & 0x80) !== 0;
    const t = this.timeline;
    if (player >= t.players) throw new DecodeError('bad-value', 1, `player ${player}`);
    const q = t.queues[player]!;
    if (playing) {
      if (q.disconnectFrame === Number.POSITIVE_INFINITY) return;
      t.rejoin(player, m.frame);
    } else {
      // The player itself already stopped at that frame when it asked.
      if (q.disconnectFrame !== m.frame) {
        if (q.disconnectFrame !== Number.POSITIVE_INFINITY) return;
        if (m.tail.length > 0) this.inputs.take(player, m.tail);
        // Inputs still missing before that frame keep arriving from the player itself.
        t.disconnect(player, m.frame);
      }
    }
    this.emitter.emit('mode-changed', { player, frame: m.frame, playing });
  }

  private onLeave(data: Uint8Array): void {
    const m = decodeByteFrameTail(data, 'LEAVE');
    const player = m.byte;
    if (player >= this.timeline.players) throw new DecodeError('bad-value', 1, `player ${player}`);
    if (m.tail.length > 0) this.inputs.take(player, m.tail);
    const q = this.timeline.queues[player]!;
    if (q.disconnectFrame !== Number.POSITIVE_INFINITY) return;
    if (q.lastFrame + 1 < m.frame)
      throw new RollbackError('protocol', `player ${player} leaves at ${m.frame} but inputs stop at ${q.lastFrame}`);
    this.timeline.disconnect(player, m.frame);
    for (const r of this.peers.list) if (r.player === player) r.connected = false;
    this.emitter.emit('player-left', { player, frame: m.frame });
    this.liveness.checkRunning();
  }
}

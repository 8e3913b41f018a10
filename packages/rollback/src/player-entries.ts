import { DecodeError } from '@netplay/protocol';
import type { Clock, Emitter } from '@netplay/transport';
import { RollbackError } from './errors.js';
import type { SessionEventMap } from './events.js';
import type { HostCommands } from './host-commands.js';
import type { HostRole } from './host-role.js';
import type { InputExchange } from './input-exchange.js';
import type { Liveness } from './liveness.js';
import { MessageType, need, readU32, writeU32 } from './messages.js';
import type { PeerSet } from './peer-set.js';
import type { PlayerLeaves } from './player-leaves.js';
import type { Quorum } from './quorum.js';
import { Remote } from './remote.js';
import type { SpectatorServer } from './spectator-server.js';
import type { Timeline } from './timeline.js';

/** What a slot is at the state frame of a {@link PlayerWelcome}. */
export type SlotStatus =
  /** Its player plays (real inputs from the state frame on). */
  | {
      /** `'plays'`: tells this status from `gone` and `enters` (wire kind 0). */
      readonly kind: 'plays';
    }
  /** Nobody plays it from `frame` (at or before the state frame) on: neutral input. */
  | {
      /** `'gone'`: tells this status from `plays` and `enters` (wire kind 1). */
      readonly kind: 'gone';
      /** The slot's first frame of neutral input (its removal frame), at or before the state frame. */
      readonly frame: number;
    }
  /** A player enters it at `frame`: neutral before, real inputs from there (the joiner's own slot is one). */
  | {
      /** `'enters'`: tells this status from `plays` and `gone` (wire kind 2). */
      readonly kind: 'enters';
      /** The entry frame: the slot reads neutral input before it and its player's real input from it. */
      readonly frame: number;
    };

/**
 * What a player entering a running game needs besides the state (WELCOME, type 16): the host's
 * decision, as the bytes {@link encodeWelcome} makes. Big-endian:
 * `u8 16, u8 player, u32 state frame, u32 entry frame, u8 host decisions (mod 256), u8 players,
 * players × (u8 kind 0 plays / 1 gone / 2 enters, u32 frame (0 for plays))`.
 */
export interface PlayerWelcome {
  /** The joiner's slot. */
  readonly player: number;
  /** The frame of the state it gets (final for everyone). */
  readonly frame: number;
  /** The first frame of its own input; before it, its slot reads neutral. */
  readonly entryFrame: number;
  /** The host's decision count right after the ENTER (mod 256). */
  readonly decisions: number;
  /** Every slot's status at {@link frame}. */
  readonly slots: readonly SlotStatus[];
}

/**
 * The host's admission of a player into a free slot ({@link P2PSession.admitPlayer}): ship
 * {@link state} and {@link welcome} to the joiner (by any means: the session never does I/O for
 * it); the joiner starts its `P2PSession` with `join: { welcome, state }`.
 */
export interface PlayerAdmission {
  /** Id of the peer admitted, as given to `admitPlayer` (the others learn it from the host's ENTER). */
  readonly peer: string;
  /** The slot it enters, 0-based (a free slot: nobody plays it now). */
  readonly player: number;
  /** The state's frame: final for everyone. */
  readonly frame: number;
  /** The joiner plays from this frame (every peer was told with ENTER). */
  readonly entryFrame: number;
  /** The host's savestate of {@link frame} (a copy). */
  readonly state: Uint8Array;
  /** The WELCOME bytes ({@link encodeWelcome}). */
  readonly welcome: Uint8Array;
}

const KIND = { plays: 0, gone: 1, enters: 2 } as const;

/** The WELCOME bytes of `w`. */
export function encodeWelcome(w: PlayerWelcome): Uint8Array {
  const b = new Uint8Array(12 + 5 * w.slots.length);
  b[0] = MessageType.Welcome;
  b[1] = w.player;
  writeU32(b, 2, w.frame);
  writeU32(b, 6, w.entryFrame);
  b[10] = w.decisions & 0xff;
  b[11] = w.slots.length;
  w.slots.forEach((s, i) => {
    b[12 + 5 * i] = KIND[s.kind];
    writeU32(b, 13 + 5 * i, s.kind === 'plays' ? 0 : s.frame);
  });
  return b;
}

/** Decodes WELCOME bytes. @throws DecodeError for anything else (type, size, a kind, frames out of order). */
export function decodeWelcome(b: Uint8Array): PlayerWelcome {
  need(b, 12, 'WELCOME');
  if (b[0] !== MessageType.Welcome) throw new DecodeError('unknown-type', 0, `WELCOME expected, got type ${b[0]}`);
  const players = b[11]!;
  if (players < 2 || players > 16) throw new DecodeError('bad-value', 11, `WELCOME with ${players} players`);
  need(b, 12 + 5 * players, 'WELCOME');
  const frame = readU32(b, 2);
  const entryFrame = readU32(b, 6);
  const player = b[1]!;
  if (player >= players) throw new DecodeError('bad-value', 1, `player ${player} of ${players}`);
  if (entryFrame <= frame) throw new DecodeError('bad-value', 6, `entry frame ${entryFrame} not after ${frame}`);
  const slots: SlotStatus[] = [];
  for (let i = 0; i < players; i++) {
    const kind = b[12 + 5 * i]!;
    const f = readU32(b, 13 + 5 * i);
    if (kind === 0) slots.push({ kind: 'plays' });
    else if (kind === 1 && f <= frame) slots.push({ kind: 'gone', frame: f });
    else if (kind === 2 && f > frame) slots.push({ kind: 'enters', frame: f });
    else throw new DecodeError('bad-value', 12 + 5 * i, `slot ${i}: kind ${kind} at frame ${f}`);
  }
  if (slots[player]!.kind !== 'enters' || (slots[player] as { frame: number }).frame !== entryFrame)
    throw new DecodeError(
      'bad-value',
      12 + 5 * player,
      `the joiner's own slot ${player} does not enter at ${entryFrame}`,
    );
  return { player, frame, entryFrame, decisions: b[10]!, slots };
}

/**
 * Players entering a running game (issue 15): a new player in a free slot, or one that left coming
 * back, decided by the host like a leave. The host picks an entry frame F after every frame any peer
 * can have taken as final and tells every peer (ENTER, a counted decision: frames < F read the slot
 * neutral, frames ≥ F wait for its real input), and hands the joiner (WELCOME + the state of its
 * final frame S) to the application. Every peer makes a new incarnation of the slot's remote: its
 * `held` starts at F, it is no host successor before it reports holding every input before F, and
 * INPUT of an older decision count (the previous incarnation, relayed late) is dropped until the
 * new one is heard. The joiner starts at S with the host's decision count.
 * @internal
 */
export class PlayerEntries {
  /** This peer entered mid-game at this frame (−1: it played from the start). */
  private localEntry = -1;
  private ready = true;

  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly inputs: InputExchange,
    private readonly role: HostRole,
    private readonly leaves: PlayerLeaves,
    private readonly quorum: Quorum,
    private readonly liveness: Liveness,
    private readonly spectators: SpectatorServer,
    private readonly commands: HostCommands,
    private readonly emitter: Emitter<SessionEventMap>,
    private readonly clock: Clock,
    private readonly localPlayer: number,
    private readonly stateSource: ((frame: number) => Uint8Array | undefined) | undefined,
  ) {
    quorum.selfReady = () => this.selfReady();
  }

  /** Whether this peer may become the host: it played from the start, or holds every input before its entry. */
  private selfReady(): boolean {
    if (!this.ready && this.timeline.unreadFrame >= this.localEntry) this.ready = true;
    return this.ready;
  }

  /**
   * Host: admits `peer` into the free slot `player` (see {@link P2PSession.admitPlayer}).
   * @returns the admission, or undefined when it cannot be decided now (try again later).
   */
  admit(
    peer: string,
    player: number,
    leadFrames: number,
    delay: number,
    finalFrame: number,
  ): PlayerAdmission | undefined {
    this.role.require('admit a player');
    const t = this.timeline;
    if (!Number.isInteger(player) || player < 0 || player >= t.players || player === this.localPlayer)
      throw new RollbackError('bad-argument', `no free slot ${player} to admit into`);
    if (!Number.isInteger(leadFrames) || leadFrames < 0 || leadFrames > 3600)
      throw new RollbackError('bad-argument', `leadFrames must be 0..3600, got ${leadFrames}`);
    if (peer.length === 0 || new TextEncoder().encode(peer).length > 255)
      throw new RollbackError('bad-argument', 'a peer id must be 1..255 UTF-8 bytes');
    const S = finalFrame;
    const q = t.queues[player]!;
    // The slot's previous player is gone at a frame every peer takes as final; every other leave
    // is decided and final too (the joiner never needs inputs of a departed player).
    if (q.disconnectFrame > S) return undefined;
    if (this.peers.byPeer.get(peer)?.connected === true)
      throw new RollbackError('bad-state', `peer ${peer} is connected already`);
    for (const r of this.peers.list)
      if (r.player === player && r.connected)
        throw new RollbackError('bad-state', `slot ${player} is taken by ${r.peer}`);
    for (let p = 0; p < t.players; p++) {
      const d = t.queues[p]!.disconnectFrame;
      if (d !== Number.POSITIVE_INFINITY && d > S) return undefined;
    }
    if (t.queues[this.localPlayer]!.disconnectFrame !== Number.POSITIVE_INFINITY) return undefined;
    if (this.leaves.pendingCount > 0 || this.commands.paused || !this.liveness.running) return undefined;
    // Quorum now, and still if this joiner and every one not caught up yet never deliver.
    if (!this.quorum.has() || !this.quorum.has(false, undefined, 1)) return undefined;
    const source = this.stateSource?.(S);
    if (source === undefined) return undefined;
    // After every frame a peer can have taken as final (none holds a host input past the host's
    // newest) and after everything spectators were streamed.
    const F = Math.max(
      t.currentFrame + delay + 1 + leadFrames,
      t.queues[this.localPlayer]!.lastFrame + 1,
      this.spectators.streamedUpTo(),
      S + 1,
    );
    const id = new TextEncoder().encode(peer);
    const enter = new Uint8Array(10 + id.length);
    enter[0] = MessageType.Enter;
    enter[1] = player;
    writeU32(enter, 2, F);
    writeU32(enter, 6, S);
    enter.set(id, 10);
    this.role.broadcastDecision(enter);
    this.enter(player, peer, F, S, this.role.epoch);
    const slots: SlotStatus[] = t.queues.map((x, p) => {
      if (x.disconnectFrame !== Number.POSITIVE_INFINITY) return { kind: 'gone', frame: x.disconnectFrame };
      const r = this.peers.list.find((y) => y.player === p);
      return r !== undefined && r.entryFrame > S ? { kind: 'enters', frame: r.entryFrame } : { kind: 'plays' };
    });
    const welcome = encodeWelcome({ player, frame: S, entryFrame: F, decisions: this.role.epoch, slots });
    return { peer, player, frame: S, entryFrame: F, state: source.slice(), welcome };
  }

  /** An ENTER from the host. */
  onEnter(data: Uint8Array): void {
    need(data, 11, 'ENTER');
    const player = data[1]!;
    if (player >= this.timeline.players) throw new DecodeError('bad-value', 1, `player ${player}`);
    const F = readU32(data, 2);
    const S = readU32(data, 6);
    if (F <= S) throw new DecodeError('bad-value', 2, `entry frame ${F} not after ${S}`);
    const peer = new TextDecoder().decode(data.subarray(10));
    if (player === this.localPlayer) return;
    this.enter(player, peer, F, S, this.role.epoch);
  }

  /** Every peer: `peer` plays slot `player` from frame F (its state from frame S; decision count `epoch`). */
  private enter(player: number, peer: string, F: number, S: number, epoch: number): void {
    const t = this.timeline;
    const q = t.queues[player]!;
    if (q.disconnectFrame === Number.POSITIVE_INFINITY)
      throw new RollbackError('protocol', `player ${player} enters at ${F} but plays already`);
    t.rejoin(player, F);
    this.inputs.unfreeze(player);
    this.leaves.entered(player);
    const r = new Remote(peer, player, this.clock.now());
    r.held = F;
    r.ackNext = S;
    r.sentUpTo = S - 1;
    r.noRefBefore = S;
    r.entryFrame = F;
    r.caughtUp = false;
    r.entryEpoch = epoch;
    r.incarnationSeen = false;
    this.peers.replace(r);
    this.emitter.emit('player-entered', { player, peer, frame: F });
  }

  /**
   * A message from `r` before its incarnation was heard: true to drop it. INPUT of an older host
   * decision count is the previous incarnation's (relayed late); control messages wait for the
   * first INPUT, except on the host (the joiner's own link: nothing older can come through it).
   */
  stale(r: Remote, data: Uint8Array, isInput: boolean): boolean {
    if (!isInput) return !this.role.isHost;
    if (((this.inputs.epochOf(data) - r.entryEpoch) & 0xff) >= 128) return true;
    r.incarnationSeen = true;
    return false;
  }

  /** The joiner: starts at the welcome's state frame (the state is loaded at the first frame run). */
  startAsJoiner(welcome: Uint8Array, state: Uint8Array): void {
    let w: PlayerWelcome;
    try {
      w = decodeWelcome(welcome);
    } catch (e) {
      throw e instanceof DecodeError ? new RollbackError('bad-argument', `join.welcome: ${e.message}`) : e;
    }
    const t = this.timeline;
    if (w.player !== this.localPlayer || w.slots.length !== t.players)
      throw new RollbackError(
        'bad-argument',
        `the welcome is for slot ${w.player} of ${w.slots.length}, this session plays ${this.localPlayer} of ${t.players}`,
      );
    const S = w.frame;
    t.currentFrame = S;
    t.savedCurrent = true;
    this.commands.loadAtStart(S, state.slice());
    this.inputs.refAfter = S;
    this.role.startAt(w.decisions);
    w.slots.forEach((s, p) => {
      const q = t.queues[p]!;
      q.restartAt(S);
      if (s.kind === 'gone') q.disconnectAt(s.frame);
      else if (s.kind === 'enters') {
        q.disconnectAt(S);
        q.rejoinAt(s.frame);
      }
    });
    for (const r of this.peers.list) {
      const s = w.slots[r.player]!;
      if (s.kind === 'gone')
        throw new RollbackError('bad-argument', `remote ${r.peer} plays slot ${r.player}, gone at ${s.frame}`);
      r.held = S;
      r.ackNext = S;
      r.sentUpTo = S - 1;
      r.noRefBefore = S;
      if (s.kind === 'enters') {
        r.held = s.frame;
        r.entryFrame = s.frame;
        r.caughtUp = false;
      }
    }
    w.slots.forEach((s, p) => {
      if (s.kind !== 'gone' && p !== this.localPlayer && !this.peers.list.some((r) => r.player === p))
        throw new RollbackError('bad-argument', `slot ${p} plays but no remote is given for it`);
    });
    this.localEntry = w.entryFrame;
    this.ready = false;
  }
}

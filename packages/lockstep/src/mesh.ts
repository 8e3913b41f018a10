import {
  ByteReader,
  DecodeError,
  encodeMameHubInputPacket,
  MAMEHUB_PACKET_HEADER_SIZE,
  MAMEHUB_PORT_HEADER_SIZE,
  type MameHubInputPacket,
  type MameInputState,
  mameHubInputPacketSize,
} from '@netplay/protocol';
import { applyDelta, DeltaError, pageDelta } from '@netplay/state';
import type { ChannelSpec } from '@netplay/transport';
import { LockstepError } from './errors.js';
import {
  decodeFaMessageInto,
  encodeFaHostProgressInto,
  encodeFaPingInto,
  encodeFaPongInto,
  FA_HOST_PROGRESS_SIZE,
  FaType,
  faMessageScratch,
} from './frame-advance-wire.js';
import { PingHistory, type PingHistoryOptions } from './latency.js';
import { type EndReason, Liveness, type LivenessOptions, type LockstepEvent, p2pVerdict } from './liveness.js';
import { blankState, bytesToMask, orPick, type Packet, prune, stateToBytes, u32msg } from './mesh-packets.js';
import { type BufferPool, OutboxPool, Ring, readU32BE } from './pool.js';
import type { Envelope, FrameRequest, LockstepScheduler, StatefulScheduler } from './types.js';
import { HostWatermark } from './watermark.js';

/**
 * Channels of the mesh mode. Input packets travel reliably (`input`, ordered: join notices share
 * the packet id sequence) and again unreliably (`input-u`, whichever copy arrives first counts;
 * receivers put packets back in id order, as MAMEHub v2 does).
 */
export const MESH_CHANNELS: readonly ChannelSpec[] = Object.freeze([
  { name: 'input', kind: 'reliable' },
  { name: 'input-u', kind: 'unreliable' },
  { name: 'join', kind: 'reliable' },
  { name: 'ping', kind: 'unreliable' },
]);

/** A member of the session: peer id and the port (player) it drives. */
export interface MeshMember {
  readonly id: number;
  readonly port: number;
}

/** What the mesh asks its shell to do (connections are the shell's business). */
export type MeshAction =
  /** Try to connect to candidate `peer` at `address`, then call `reportConnect`. */
  | { readonly type: 'connect'; readonly peer: number; readonly address: string }
  /** The candidate was rejected: close the connection to `peer`. */
  | { readonly type: 'disconnect'; readonly peer: number }
  /** (Candidate) this peer was accepted on `port`. */
  | { readonly type: 'accepted'; readonly port: number }
  /** (Candidate) this peer was rejected. */
  | { readonly type: 'rejected' };

/** Options of {@link MeshPeer}. */
export interface MeshOptions {
  /** This peer's id. */
  readonly id: number;
  /** The members at the start (this peer included unless it is a candidate). The first one is the host. */
  readonly members: readonly MeshMember[];
  /** `true` for a candidate that joins a running session through `members[0]`. */
  readonly candidate?: boolean;
  /** A candidate's address, as members should connect to it (default: its id in decimal). */
  readonly address?: string;
  /** Ports of the core. */
  readonly ports: number;
  /** Input bytes per port, 1..4 (a port's input is one MAMEHub digital mask). */
  readonly inputBytes: number;
  /** Frame duration in ms. */
  readonly frameMs: number;
  /** Time frame 0 is due (default 0). Candidates align themselves on the host. */
  readonly startMs?: number;
  /** Extra delay in ms added to the latency estimate (default 0). */
  readonly extraDelayMs?: number;
  /** Ms between pings (default 100). */
  readonly pingIntervalMs?: number;
  /** Ping history options. */
  readonly history?: PingHistoryOptions;
  /** Frames a new peer's input counts as neutral and is not waited for (MAMEHub: one second; default `round(1000 / frameMs)`). */
  readonly neutralFrames?: number;
  /** Frames between sync blocks (MAMEHub: 30 s; default `round(30000 / frameMs)`). */
  readonly syncIntervalFrames?: number;
  /** The state layout hash written into deltas and checked by joiners (default 0). */
  readonly layoutHash?: bigint;
  /** Page size of the late-join delta (default 4096). */
  readonly pageSize?: number;
  /** How long the host waits for every member's report on a candidate (default 5000 ms). */
  readonly joinTimeoutMs?: number;
  /** Called for every {@link MeshAction}. */
  readonly onAction?: (action: MeshAction) => void;
  /**
   * Liveness by progress (defaults 750 / 5000 ms, as `DEFAULT_TIMEOUTS` of @netplay/transport): a
   * member whose packets stop reaching beyond the frame waited on is `interrupted`, then removed by
   * the host (with quorum); see the README, "Finality and partitions".
   */
  readonly liveness?: LivenessOptions;
}

interface Remote {
  readonly id: number;
  port: number;
  readonly history: PingHistory;
  /** Next packet id expected; -1 until a joiner learns the base. */
  expected: number;
  /** Input messages ahead of `expected` (copies), put back in id order. */
  readonly early: Map<number, Uint8Array>;
  /** The packets still needed: the last one at or before the next frame, and every later one. */
  readonly packets: Ring<Packet>;
  /** First frame this peer's input counts and is waited for. */
  activeFrom: number;
  /** After a departure (LEAVE): the first packet id that no longer counts (`Infinity` while it plays). */
  end: number;
  /** After a departure: the first frame its input is neutral and not waited for (`Infinity` while it plays). */
  cutAt: number;
  /** The next id expected on the reliable `input` channel (it delivers in order). */
  reliableNext: number;
  /**
   * Host only: copies of the packets used before their reliable copy arrived (an `input-u` copy
   * came first), in id order. A LEAVE carries them: a member may have lost the unreliable copy
   * the host forwarded, and the reliable one will never come.
   */
  readonly unconfirmed: Ring<OwnItem> | undefined;
}

/** An item of this peer's input stream, kept for late joiners (a reused ring slot). */
interface OwnItem {
  id: number;
  time: number;
  bytes: Uint8Array;
}

const K_PACKET = 1;
const K_NOTICE = 2;
const K_BASE = 3;
const J_HELLO = 1;
const J_CANDIDATE = 2;
const J_REPORT = 3;
const J_ACCEPTED = 4;
const J_REJECT = 5;
/**
 * Host → members: `6, u32 leaver, u32 end (first packet id ignored), u32 cutAt (first neutral frame)`,
 * then zero or more of the leaver's packets (kind byte included) the host got only unreliably.
 */
const J_LEAVE = 6;

const utf8 = new TextEncoder();
const utf8d = new TextDecoder();

/**
 * MAMEHub's peer-to-peer full-mesh lockstep (seed 000). Every frame each peer broadcasts an input
 * packet (incrementing id, future input time = now + latency estimate, never decreasing, and its
 * input mapped onto its own port by the player field map); it runs frame t once it holds, from
 * every other active peer, a packet whose time is beyond t, and runs it with the OR-merge of every
 * peer's most recent packet at or before t. Joining (candidate → host → every member connects
 * and reports → accept or reject) and late join (sync blocks, page delta against the initial
 * state, every input since, catch-up by replay; a new peer is neutral for its first second) are
 * part of the machine; connecting is left to the shell through {@link MeshAction}s.
 */
export class MeshPeer implements LockstepScheduler, StatefulScheduler {
  readonly id: number;
  readonly outbox: Envelope[] = [];
  /** Messages dropped because they did not decode or broke the protocol. */
  dropped = 0;
  private readonly ports: number;
  private readonly inputBytes: number;
  private readonly frameMs: number;
  private startMs: number;
  private readonly extraDelayMs: number;
  private readonly pingIntervalMs: number;
  private readonly historyOptions: PingHistoryOptions;
  private readonly neutralFrames: number;
  private readonly syncInterval: number;
  private readonly layoutHash: bigint;
  private readonly pageSize: number;
  private readonly joinTimeoutMs: number;
  private readonly onAction: ((a: MeshAction) => void) | undefined;
  private readonly host: number;
  private myPort: number;
  private joined: boolean;
  private activeFrom = 0;
  private readonly remotes = new Map<number, Remote>();
  /**
   * This peer's input stream since the oldest sync block a late joiner can still be sent: items
   * older than `retainFrames` before the next frame are dropped (the last one at or before that
   * point stays: it sets the input in force there).
   */
  private readonly own: Ring<OwnItem>;
  private readonly ownPackets: Ring<Packet>;
  private readonly retainFrames: number;
  private readonly remoteList: Remote[] = [];
  private readonly packetSize: number;
  private readonly packetOut: MameHubInputPacket;
  private readonly msg = faMessageScratch();
  private readonly pool: OutboxPool;
  private readonly inputPool: BufferPool;
  private readonly pingPool: BufferPool;
  private readonly pongPool: BufferPool;
  private readonly progressPool: BufferPool;
  /** How far the host has run (see {@link HostWatermark}): a non-host's finals stop there. */
  private readonly watermark: HostWatermark;
  private readonly request: { frame: number; inputs: Uint8Array; command: number };
  private oneWayDirty = true;
  private oneWayMax = 0.5;
  private nextId = 0;
  private lastTime = -1;
  private sentFor = -1;
  private next = 0;
  private readonly local: Uint8Array;
  private readonly merged: MameInputState;
  private readonly inputs: Uint8Array;
  private pingSeq = 0;
  private nextPingAt = -Infinity;
  private initialState: Uint8Array | undefined;
  private syncFrame = -1;
  private syncState: Uint8Array | undefined;
  private lastStored = -1;
  private load: { frame: number; state: Uint8Array } | undefined;
  private pending: { id: number; address: string; waiting: Set<number>; deadline: number } | undefined;
  private pendingNotice: { cand: number; port: number } | undefined;
  private hello: Uint8Array | undefined;
  /** Input messages that reached a candidate before its acceptance (channels are not ordered between each other). */
  private early: { from: number; channel: string; data: Uint8Array }[] = [];
  private nextHelloAt = -Infinity;
  /** Departed peers still in `remotes` (dropped once `next` reaches their cut). */
  private cuts = 0;
  /** Interruptions, removals and the end (see {@link LockstepEvent}); the driver empties it. */
  readonly events: LockstepEvent[] = [];
  private readonly live: Liveness;

  constructor(options: MeshOptions) {
    const { ports, inputBytes, frameMs } = options;
    if (!Number.isInteger(ports) || ports < 1 || ports > 255)
      throw new LockstepError('bad-argument', `ports must be 1..255, got ${ports}`);
    if (!Number.isInteger(inputBytes) || inputBytes < 1 || inputBytes > 4)
      throw new LockstepError('bad-argument', `inputBytes must be 1..4 (one MAMEHub mask), got ${inputBytes}`);
    if (!(frameMs > 0)) throw new LockstepError('bad-argument', `frameMs must be > 0, got ${frameMs}`);
    if (options.members.length === 0) throw new LockstepError('bad-argument', 'members must list the host');
    this.id = options.id;
    this.ports = ports;
    this.inputBytes = inputBytes;
    this.frameMs = frameMs;
    this.startMs = options.startMs ?? 0;
    this.extraDelayMs = options.extraDelayMs ?? 0;
    this.pingIntervalMs = options.pingIntervalMs ?? 100;
    this.historyOptions = options.history ?? {};
    this.neutralFrames = options.neutralFrames ?? Math.round(1000 / frameMs);
    this.syncInterval = options.syncIntervalFrames ?? Math.round(30_000 / frameMs);
    if (!(this.syncInterval >= 1)) throw new LockstepError('bad-argument', 'syncIntervalFrames must be >= 1');
    this.layoutHash = options.layoutHash ?? 0n;
    this.pageSize = options.pageSize ?? 4096;
    this.joinTimeoutMs = options.joinTimeoutMs ?? 5000;
    this.onAction = options.onAction;
    this.host = options.members[0]!.id;
    this.joined = options.candidate !== true;
    this.myPort = -1;
    const usedPorts = new Set<number>();
    for (const m of options.members) {
      if (!Number.isInteger(m.port) || m.port < 0 || m.port >= ports || usedPorts.has(m.port))
        throw new LockstepError('bad-argument', `member ${m.id} has a bad or duplicate port ${m.port}`);
      usedPorts.add(m.port);
      if (m.id === this.id) {
        if (!this.joined) throw new LockstepError('bad-argument', 'a candidate is not a member yet');
        this.myPort = m.port;
      } else if (this.joined) this.addRemote(m.id, m.port, 0, 0);
    }
    if (this.joined && this.myPort < 0) throw new LockstepError('bad-argument', 'members must include this peer');
    if (!this.joined) {
      // The candidate contacts the first peer (the host), again every second until it has an answer.
      const a = utf8.encode(options.address ?? `${this.id}`);
      this.hello = new Uint8Array(5 + a.length);
      this.hello.set(u32msg(J_HELLO, this.id));
      this.hello.set(a, 5);
    }
    this.local = new Uint8Array(inputBytes);
    this.merged = blankState(ports);
    this.inputs = new Uint8Array(ports * inputBytes);
    this.packetOut = { inputId: 0, futureInputTime: 0, state: blankState(ports) };
    this.packetSize = mameHubInputPacketSize(this.packetOut.state);
    this.retainFrames = 2 * this.syncInterval + 120;
    this.own = new Ring(() => ({ id: 0, time: 0, bytes: new Uint8Array(1 + this.packetSize) }));
    this.ownPackets = new Ring(() => ({ id: 0, time: 0, masks: new Uint32Array(ports) }));
    this.pool = new OutboxPool(this.outbox);
    this.inputPool = this.pool.buffers(1 + this.packetSize);
    this.pingPool = this.pool.buffers(13);
    this.pongPool = this.pool.buffers(21);
    this.progressPool = this.pool.buffers(FA_HOST_PROGRESS_SIZE);
    this.watermark = new HostWatermark(this.id === this.host);
    this.request = { frame: 0, inputs: this.inputs, command: 0 };
    this.live = new Liveness(options.liveness, this.events);
    for (const r of this.remoteList) this.live.add(r.id);
  }

  /** Why this peer ended (it runs no more frames), or `undefined` while it runs. */
  get endReason(): EndReason | undefined {
    return this.live.ended;
  }

  /**
   * The last final frame. The host: every frame it ran. Any other peer: every frame it ran that
   * the host has run too (the host's progress, sent with its pings: only then is it sure the host
   * holds every input of it, its own included). After the end: where the end says finals stop (a
   * removal: also before its cut).
   */
  get finalFrame(): number {
    return this.live.ended ? this.live.finalFrame : this.watermark.final(this.next);
  }

  /** Items of this peer's input stream kept for late joiners (bounded: about `2 × syncIntervalFrames + 120`). */
  get historyLength(): number {
    return this.own.length;
  }

  get port(): number {
    return this.myPort;
  }

  get nextFrame(): number {
    return this.next;
  }

  /** Whether this peer is a member (a candidate becomes one once accepted). */
  get isMember(): boolean {
    return this.joined;
  }

  /** Ids of the peers this one waits for (members other than itself; a departed peer until its cut frame is reached). */
  get peerIds(): number[] {
    return [...this.remotes.keys()];
  }

  /**
   * Host only: peer `id` left (the shell calls this once its connection is closed and nothing more
   * from it can arrive). Its input stream ends at the last packet the host holds in order (packets
   * held beyond a gap are discarded): with `end` = the first id not held and `cutAt` = the time of
   * packet `end − 1` (or the peer's first active frame if the host holds none), every member gets
   * `LEAVE(id, end, cutAt)` on `join` and applies, as the host does here, the rule: frames before
   * `cutAt` use the leaver's packets as usual (waiting for those still on their way), from `cutAt`
   * on its input is neutral and not waited for, packets with ids from `end` on are ignored, and the
   * peer is dropped once `cutAt` is reached. Safe when every member's view of the leaver's stream is
   * a prefix of the host's (the star topology: everything goes through the host). A join in
   * progress is rejected, and candidates are rejected until the departure is settled. Unknown or
   * already removed ids are a no-op.
   * @param id The leaver's peer id.
   * @param _now The time (not needed by the mesh; kept for a uniform call with the other schedulers).
   * @throws LockstepError `bad-argument` on a peer other than the host; `bad-state` if the cut
   * frame does not fit the LEAVE's u32 (a session of over 2^32 frames).
   */
  removePeer(id: number, _now: number): void {
    if (this.id !== this.host || !this.joined) throw new LockstepError('bad-argument', 'only the host removes peers');
    const r = this.remotes.get(id);
    if (!r || r.end !== Infinity) return;
    const end = Math.max(0, r.expected);
    const last = r.packets.last();
    const cutAt = last ? last.time : r.activeFrom;
    if (cutAt > 0xffffffff) throw new LockstepError('bad-state', 'input time beyond u32');
    const cand = this.pending?.id ?? this.pendingNotice?.cand;
    if (cand !== undefined) {
      // The candidate's acceptance would list the leaver as a member: turn it down.
      this.pending = undefined;
      this.pendingNotice = undefined;
      const msg = u32msg(J_REJECT, cand);
      for (const m of this.remotes.keys()) if (m !== id) this.outbox.push({ to: m, channel: 'join', data: msg });
      this.outbox.push({ to: cand, channel: 'join', data: msg });
    }
    // The packets held only through their unreliable copy go along (ids below `end`: all consumed).
    const tail = r.unconfirmed!;
    const each = 1 + this.packetSize;
    const msg = new Uint8Array(13 + tail.length * each);
    const dv = new DataView(msg.buffer);
    msg[0] = J_LEAVE;
    dv.setUint32(1, id);
    dv.setUint32(5, end);
    dv.setUint32(9, cutAt);
    for (let i = 0; i < tail.length; i++) msg.set(tail.at(i).bytes, 13 + i * each);
    // Everyone, the leaver included: it learns it was removed (and where its finals stop).
    for (const m of this.remotes.keys()) this.outbox.push({ to: m, channel: 'join', data: msg });
    this.cut(r, end, cutAt);
  }

  /** Applies a departure to `r`: its stream ends before id `end`, its input is neutral from `cutAt`. */
  private cut(r: Remote, end: number, cutAt: number): void {
    r.end = end;
    r.cutAt = cutAt;
    for (const id of [...r.early.keys()]) if (id >= end) r.early.delete(id);
    this.cuts++;
    // It left the membership: no longer watched nor counted for quorum.
    this.live.remove(r.id);
  }

  /** Drops the departed peers whose cut frame has been reached (nothing of theirs is needed any more). */
  private dropCut(): void {
    for (let i = this.remoteList.length - 1; i >= 0; i--) {
      const r = this.remoteList[i]!;
      if (r.cutAt > this.next) continue;
      this.remoteList.splice(i, 1);
      this.remotes.delete(r.id);
      this.cuts--;
      this.oneWayDirty = true;
    }
  }

  /** The latency estimate in frames (future input time minus current time): one-way estimate plus extra delay, in frames, plus one. */
  latencyFrames(): number {
    if (this.oneWayDirty) {
      // Only a ping sample or a new peer changes it: frames read the cached figure.
      this.oneWayDirty = false;
      let m = 0;
      for (let i = 0; i < this.remoteList.length; i++) m = Math.max(m, this.remoteList[i]!.history.oneWayMs());
      this.oneWayMax = m;
    }
    const d = this.oneWayMax;
    // A packet with time T is sent while frame T - L starts and is needed when frame T - 1 starts
    // (that frame waits for a packet beyond it): L - 1 frames must cover the one-way time.
    return Math.ceil((d + this.extraDelayMs) / this.frameMs) + 1;
  }

  /** Host: a candidate contacted us at `address` (the shell calls this, or the candidate's hello does). */
  private onCandidate(cand: number, address: string, now: number): void {
    if (this.id !== this.host || !this.joined) return;
    if (this.pending?.id === cand || this.pendingNotice?.cand === cand) return;
    if (this.pending || this.pendingNotice || this.cuts > 0 || this.remotes.has(cand) || cand === this.id) {
      this.outbox.push({ to: cand, channel: 'join', data: u32msg(J_REJECT, cand) });
      return;
    }
    const waiting = new Set(this.remotes.keys());
    this.pending = { id: cand, address, waiting, deadline: now + this.joinTimeoutMs };
    const a = utf8.encode(address);
    const msg = new Uint8Array(5 + a.length);
    msg[0] = J_CANDIDATE;
    new DataView(msg.buffer).setUint32(1, cand);
    msg.set(a, 5);
    for (const p of waiting) this.outbox.push({ to: p, channel: 'join', data: msg });
    this.settleCandidate();
  }

  /** Member: the result of the connection attempt to candidate `cand` the shell made for a `connect` action. */
  reportConnect(cand: number, ok: boolean): void {
    const msg = new Uint8Array(6);
    msg[0] = J_REPORT;
    new DataView(msg.buffer).setUint32(1, cand);
    msg[5] = ok ? 1 : 0;
    this.outbox.push({ to: this.host, channel: 'join', data: msg });
  }

  receive(from: number, channel: string, data: Uint8Array, now: number): void {
    this.pool.recycle();
    if (this.live.ended) {
      this.dropped++;
      return;
    }
    try {
      if (channel === 'join') this.onJoin(from, data, now);
      else if (channel === 'ping') this.onPing(from, data, now);
      else if (channel === 'input' || channel === 'input-u') {
        if (!this.joined && this.hello) {
          if (this.early.length >= 100_000) throw new DecodeError('too-large', 0, 'too many inputs before acceptance');
          this.early.push({ from, channel, data: data.slice() });
        } else {
          // Progress: its packets now reach a later frame (a replay, a duplicate, a packet that
          // does not decode or carries no later time is no life while we wait on it).
          const r = this.remotes.get(from);
          const before = r ? (r.packets.last()?.time ?? -1) : -1;
          this.onInput(from, channel, data);
          if (r && (r.packets.last()?.time ?? -1) > before) this.live.progress(from, now);
        }
      } else {
        this.dropped++;
        return;
      }
      this.live.heard(from, now);
    } catch (e) {
      if (e instanceof DecodeError || e instanceof DeltaError) this.dropped++;
      else throw e;
    }
  }

  setLocalInput(input: Uint8Array): void {
    if (input.length !== this.inputBytes) throw new LockstepError('bad-argument', 'input size');
    this.local.set(input);
  }

  tick(now: number): void {
    this.pool.recycle();
    if (this.live.ended) return;
    if (this.joined && this.live.enabled && now >= this.startMs) {
      const lost = p2pVerdict(this.live, now, this.id, this.host, this.watermark.final(this.next));
      if (lost >= 0) {
        this.removePeer(lost, now);
        this.live.removed(lost, this.remotes.get(lost)?.cutAt ?? this.next, now);
      }
      if (this.live.ended) return;
    }
    if (this.hello && now >= this.nextHelloAt) {
      this.nextHelloAt = now + 1000;
      this.outbox.push({ to: this.host, channel: 'join', data: this.hello });
    }
    if (now >= this.nextPingAt && this.remotes.size > 0) {
      this.nextPingAt = now + this.pingIntervalMs;
      const data = this.pingPool.take();
      encodeFaPingInto(this.pingSeq++, now, data);
      for (let i = 0; i < this.remoteList.length; i++) this.pool.push(this.remoteList[i]!.id, 'ping', data);
      if (this.watermark.isHost) {
        const progress = this.progressPool.take();
        encodeFaHostProgressInto(this.next, progress);
        for (let i = 0; i < this.remoteList.length; i++) this.pool.push(this.remoteList[i]!.id, 'ping', progress);
      }
    }
    if (this.pending && now >= this.pending.deadline) this.reject(this.pending.id);
  }

  dueAt(): number {
    return this.joined && !this.live.ended ? this.startMs + this.next * this.frameMs : Infinity;
  }

  nextWakeAt(now: number): number {
    if (this.live.ended) return Infinity;
    const hello = this.hello ? this.nextHelloAt : Infinity;
    const live = this.joined && this.live.enabled ? Math.max(this.live.wakeAt(now), this.startMs) : Infinity;
    return Math.min(
      this.remotes.size > 0 ? this.nextPingAt : Infinity,
      this.pending?.deadline ?? Infinity,
      hello,
      live,
    );
  }

  wantsState(frame: number): boolean {
    if (frame <= this.lastStored) return false;
    return (frame === 0 && this.initialState === undefined) || (this.joined && frame % this.syncInterval === 0);
  }

  storeState(frame: number, state: Uint8Array): void {
    this.lastStored = frame;
    if (frame === 0 && this.initialState === undefined) this.initialState = state;
    if (this.joined && frame % this.syncInterval === 0) {
      this.syncFrame = frame;
      this.syncState = state;
    }
  }

  takeLoad(): { frame: number; state: Uint8Array } | undefined {
    const l = this.load;
    this.load = undefined;
    return l;
  }

  /**
   * The next frame, once every active peer's packets reach beyond it. The returned object (and
   * its `inputs`) is reused by the next call: copy what you keep (see `logEntry`).
   */
  poll(now: number): FrameRequest | undefined {
    this.pool.recycle();
    if (!this.joined || this.load || now < this.dueAt()) return undefined;
    if (this.cuts > 0) this.dropCut();
    const live = this.live;
    // A host whose group lacks quorum marks no frame final: it runs none (rule 3).
    if (live.enabled && live.noQuorumSince >= 0) {
      live.blocked(now);
      return undefined;
    }
    const f = this.next;
    if (this.sentFor < f) this.sendPacket(f);
    const remotes = this.remoteList;
    let blocked = false;
    for (let i = 0; i < remotes.length; i++) {
      const r = remotes[i]!;
      // Not waited for before its first active frame, nor from its cut on (a departed peer).
      const last = r.packets.last();
      const waits = f >= r.activeFrom && f < r.cutAt && (!last || last.time <= f);
      if (live.enabled) {
        const w = live.get(r.id);
        if (w) live.waiting(w, waits, now);
      }
      if (waits) blocked = true;
    }
    if (blocked) {
      live.blocked(now);
      return undefined;
    }
    live.ran();
    // The OR-merge (`mergeMameInputStates`) of every active peer's most recent packet at or
    // before f, on the current masks (the only field a frame's inputs come from).
    const masks = this.merged;
    for (let p = 0; p < this.ports; p++) masks[p]!.currentMask = 0;
    if (f >= this.activeFrom) orPick(this.ownPackets, f, masks);
    for (let i = 0; i < remotes.length; i++) {
      const r = remotes[i]!;
      if (f >= r.activeFrom && f < r.cutAt) orPick(r.packets, f, masks);
    }
    stateToBytes(masks, this.inputBytes, this.inputs);
    this.next++;
    const req = this.request;
    req.frame = f;
    return req;
  }

  private sendPacket(f: number): void {
    this.sentFor = f;
    if (this.pendingNotice) this.emitNotice();
    // MAMEHub: future input time = now + latency; if it went back, previous + 1.
    let time = f + this.latencyFrames();
    if (time < this.lastTime) time = this.lastTime + 1;
    if (time < this.activeFrom) time = this.activeFrom;
    this.lastTime = time;
    const id = this.nextId++;
    const mask = this.myPort >= 0 ? bytesToMask(this.local) : 0;
    const packet = this.ownPackets.push();
    packet.id = id;
    packet.time = time;
    packet.masks.fill(0);
    if (this.myPort >= 0) packet.masks[this.myPort] = mask;
    prune(this.ownPackets, f);
    // Encoded once into the history slot, copied into a pooled buffer for the outbox.
    const out = this.packetOut;
    out.inputId = id;
    out.futureInputTime = time;
    for (let p = 0; p < this.ports; p++) out.state[p]!.currentMask = p === this.myPort ? mask : 0;
    const item = this.pushOwn(id, time);
    if (item.bytes.length !== 1 + this.packetSize) item.bytes = new Uint8Array(1 + this.packetSize);
    const bytes = item.bytes;
    bytes[0] = K_PACKET;
    encodeMameHubInputPacket(out, bytes, 1);
    const data = this.inputPool.take();
    data.set(bytes);
    for (let i = 0; i < this.remoteList.length; i++) {
      const p = this.remoteList[i]!.id;
      this.pool.push(p, 'input', data);
      this.pool.push(p, 'input-u', data);
    }
  }

  /** Appends an item to the own stream (dropping what no late joiner can need any more). */
  private pushOwn(id: number, time: number): OwnItem {
    const limit = this.next - this.retainFrames;
    while (this.own.length >= 2 && this.own.at(1).time <= limit) this.own.shift();
    const item = this.own.push();
    item.id = id;
    item.time = time;
    return item;
  }

  private emitNotice(): void {
    const n = this.pendingNotice!;
    this.pendingNotice = undefined;
    const id = this.nextId++;
    // The new peer joins at this notice's time (the time of the packet that follows it) and
    // counts from one second later.
    let time = this.sentFor + this.latencyFrames();
    if (time < this.lastTime) time = this.lastTime + 1;
    const activeFrom = time + this.neutralFrames;
    const sync = this.syncFrame;
    const bytes = new Uint8Array(18);
    const dv = new DataView(bytes.buffer);
    bytes[0] = K_NOTICE;
    dv.setUint32(1, id);
    dv.setUint32(5, n.cand);
    bytes[9] = n.port;
    dv.setUint32(10, activeFrom);
    dv.setUint32(14, sync);
    this.pushOwn(id, time).bytes = bytes;
    for (const p of this.remotes.keys()) {
      this.outbox.push({ to: p, channel: 'input', data: bytes });
      this.outbox.push({ to: p, channel: 'input-u', data: bytes });
    }
    // The candidate gets its slot, the sync block as a page delta against the initial blocks,
    // and (below, like every member) this peer's inputs since the sync block.
    const delta = pageDelta(this.initialState!, this.syncState!, {
      layoutHash: this.layoutHash,
      pageSize: this.pageSize,
    });
    const members = [this.id, ...this.remotes.keys()];
    const head = 21 + 8 * members.length;
    const acc = new Uint8Array(head + delta.length);
    const av = new DataView(acc.buffer);
    acc[0] = J_ACCEPTED;
    av.setUint32(1, n.port);
    av.setUint32(5, activeFrom);
    av.setUint32(9, sync);
    av.setUint32(13, this.next);
    av.setUint32(17, members.length);
    members.forEach((m, i) => {
      av.setUint32(21 + 8 * i, m);
      av.setUint32(25 + 8 * i, m === this.id ? this.myPort : this.remotes.get(m)!.port);
    });
    acc.set(delta, head);
    this.outbox.push({ to: n.cand, channel: 'join', data: acc });
    this.admit(n.cand, n.port, activeFrom, sync);
  }

  /** A member admits an accepted candidate: waits for it from `activeFrom`, sends it its inputs since `sync`. */
  private admit(cand: number, port: number, activeFrom: number, sync: number): void {
    if (cand === this.id || this.remotes.has(cand)) return;
    // The new peer's packets are numbered from 0.
    this.addRemote(cand, port, activeFrom, 0);
    // From the last item at or before the sync frame (it sets the input in force there) onwards.
    let from = 0;
    for (let i = 0; i < this.own.length; i++) if (this.own.at(i).time <= sync) from = i;
    const firstId = this.own.length > 0 ? this.own.at(from).id : this.nextId;
    this.outbox.push({ to: cand, channel: 'input', data: u32msg(K_BASE, firstId) });
    // Copies: the history's slots are reused.
    for (let i = from; i < this.own.length; i++)
      this.outbox.push({ to: cand, channel: 'input', data: this.own.at(i).bytes.slice() });
  }

  private addRemote(id: number, port: number, activeFrom: number, expected: number): void {
    const ports = this.ports;
    const r: Remote = {
      id,
      port,
      history: new PingHistory(this.historyOptions),
      expected,
      early: new Map(),
      packets: new Ring(() => ({ id: 0, time: 0, masks: new Uint32Array(ports) })),
      activeFrom,
      end: Infinity,
      cutAt: Infinity,
      reliableNext: expected,
      unconfirmed:
        this.id === this.host
          ? new Ring(() => ({ id: 0, time: 0, bytes: new Uint8Array(1 + this.packetSize) }))
          : undefined,
    };
    this.remotes.set(id, r);
    this.remoteList.push(r);
    this.oneWayDirty = true;
    this.live?.add(id);
  }

  private settleCandidate(): void {
    const p = this.pending;
    if (!p || p.waiting.size > 0) return;
    this.pending = undefined;
    const used = new Set<number>([this.myPort, ...[...this.remotes.values()].map((r) => r.port)]);
    let port = 0;
    while (used.has(port)) port++;
    if (port >= this.ports) {
      this.reject(p.id);
      return;
    }
    this.pendingNotice = { cand: p.id, port };
  }

  private reject(cand: number): void {
    const members = this.pending?.id === cand ? [...this.remotes.keys()] : [];
    this.pending = undefined;
    const msg = u32msg(J_REJECT, cand);
    for (const m of members) this.outbox.push({ to: m, channel: 'join', data: msg });
    this.outbox.push({ to: cand, channel: 'join', data: msg });
  }

  private onJoin(from: number, data: Uint8Array, now: number): void {
    const r = new ByteReader(data);
    const type = r.u8('type');
    if (type === J_HELLO) {
      const cand = r.u32('candidate');
      const address = utf8d.decode(r.bytesView(r.remaining, 'address'));
      if (cand !== from) throw new DecodeError('bad-value', 1, 'hello from another id');
      this.onCandidate(cand, address, now);
      return;
    }
    if (type === J_CANDIDATE) {
      const cand = r.u32('candidate');
      const address = utf8d.decode(r.bytesView(r.remaining, 'address'));
      if (from !== this.host || !this.joined) throw new DecodeError('bad-value', 0, 'candidate from a non-host');
      this.onAction?.({ type: 'connect', peer: cand, address });
      return;
    }
    if (type === J_REPORT) {
      const cand = r.u32('candidate');
      const ok = r.u8('ok');
      r.expectEnd('report');
      const p = this.pending;
      if (!p || p.id !== cand || !p.waiting.has(from)) return;
      if (ok !== 1) {
        this.reject(cand);
        return;
      }
      p.waiting.delete(from);
      this.settleCandidate();
      return;
    }
    if (type === J_REJECT) {
      const cand = r.u32('candidate');
      r.expectEnd('reject');
      if (from !== this.host) throw new DecodeError('bad-value', 0, 'reject from a non-host');
      if (cand === this.id && !this.joined) {
        if (!this.hello) return;
        this.hello = undefined;
        this.onAction?.({ type: 'rejected' });
      } else if (cand !== this.id) this.onAction?.({ type: 'disconnect', peer: cand });
      return;
    }
    if (type === J_ACCEPTED) {
      if (from !== this.host || this.joined) throw new DecodeError('bad-value', 0, 'unexpected accept');
      const port = r.u32('port');
      const activeFrom = r.u32('activeFrom');
      const sync = r.u32('sync');
      const hostFrame = r.u32('hostFrame');
      const count = r.u32('members');
      r.need(count * 8, 'members');
      const members: MeshMember[] = [];
      for (let i = 0; i < count; i++) members.push({ id: r.u32('member'), port: r.u32('port') });
      const delta = r.bytesView(r.remaining, 'delta');
      if (port >= this.ports || !this.initialState) throw new DecodeError('bad-value', 1, 'port');
      // Capped at the core's state size (the initial state's): a hostile host cannot make us allocate more.
      const state = applyDelta(this.initialState, delta, {
        layoutHash: this.layoutHash,
        maxTargetBytes: this.initialState.length,
      });
      this.joined = true;
      this.hello = undefined;
      this.myPort = port;
      this.activeFrom = activeFrom;
      this.lastTime = activeFrom - 1;
      this.next = sync;
      this.sentFor = sync - 1;
      this.lastStored = sync;
      this.load = { frame: sync, state };
      // Run behind the host by the frames it was ahead; catch-up frames are already due.
      this.startMs = now - hostFrame * this.frameMs;
      for (const m of members) {
        const existing = this.remotes.get(m.id);
        if (existing) existing.port = m.port;
        else this.addRemote(m.id, m.port, 0, -1);
      }
      this.onAction?.({ type: 'accepted', port });
      const early = this.early;
      this.early = [];
      for (const m of early) this.receive(m.from, m.channel, m.data, now);
      return;
    }
    if (type === J_LEAVE) {
      const leaver = r.u32('leaver');
      const end = r.u32('end');
      const cutAt = r.u32('cutAt');
      const each = 1 + this.packetSize;
      if (r.remaining % each !== 0) throw new DecodeError('bad-length', 13, 'leave packets');
      if (from === this.host && this.joined && leaver === this.id) {
        // The host removed us: our input is neutral from `cutAt` on, so our finals stop before it.
        this.live.end('removed', this.watermark.final(this.next, cutAt), now);
        return;
      }
      const rem = this.remotes.get(leaver);
      // Only the host decides a cut, once per peer.
      if (from !== this.host || !this.joined || leaver === this.id || !rem || rem.end !== Infinity)
        throw new DecodeError('bad-value', 0, 'unexpected leave');
      this.cut(rem, end, cutAt);
      // The leaver's packets the host used: ours to use too (duplicates are ignored as usual).
      for (let at = 13; at < data.length; at += each) {
        if (data[at] !== K_PACKET) throw new DecodeError('bad-value', at, 'leave packet kind');
        this.onInput(leaver, 'leave', data.subarray(at, at + each));
      }
      return;
    }
    throw new DecodeError('unknown-type', 0, `join message ${type}`);
  }

  private onPing(from: number, data: Uint8Array, now: number): void {
    const r = this.remotes.get(from);
    const m = decodeFaMessageInto(data, this.inputBytes, this.msg);
    if (m.type === FaType.Ping) {
      const out = this.pongPool.take();
      encodeFaPongInto(m.seq, m.sentAtUs, now, out);
      this.pool.push(from, 'ping', out);
    } else if (m.type === FaType.Pong && r && m.pingSentAtUs / 1000 <= now) {
      r.history.add(now - m.pingSentAtUs / 1000);
      this.oneWayDirty = true;
    } else if (m.type === FaType.Progress && from === this.host) this.watermark.heard(m.frame);
    else if (m.type === FaType.Progress) throw new DecodeError('bad-value', 0, 'host progress from a non-host');
  }

  private onInput(from: number, channel: string, data: Uint8Array): void {
    const r = this.remotes.get(from);
    if (!r || data.length < 5) {
      this.dropped++;
      return;
    }
    const kind = data[0]!;
    if (kind === K_BASE) {
      if (channel !== 'input' || data.length !== 5) throw new DecodeError('bad-value', 0, 'base');
      if (r.expected >= 0) return;
      r.expected = readU32BE(data, 1);
      for (const id of [...r.early.keys()]) if (id < r.expected) r.early.delete(id);
      this.drain(r);
      return;
    }
    const id = readU32BE(data, 1);
    if (kind !== K_PACKET && kind !== K_NOTICE) throw new DecodeError('unknown-type', 0, `input kind ${kind}`);
    if (channel === 'input' && id >= r.reliableNext) {
      // The reliable copy of `id` (so of every id before it): those copies are no longer needed.
      r.reliableNext = id + 1;
      const u = r.unconfirmed;
      if (u) while (u.length > 0 && u.at(0).id <= id) u.shift();
    }
    if (r.expected >= 0 && id < r.expected) return;
    // A departed peer's stream ends before `end` (the host's cut): later packets never count.
    if (id >= r.end) return;
    if (id === r.expected && r.early.size === 0) {
      // The steady state: the next message in order, used at once (nothing kept, nothing allocated).
      r.expected++;
      this.consume(r, data);
      return;
    }
    if (r.early.size > 100_000) throw new DecodeError('too-large', 0, 'too many packets ahead');
    if (!r.early.has(id)) r.early.set(id, data.slice());
    this.drain(r);
  }

  private drain(r: Remote): void {
    if (r.expected < 0) return;
    for (;;) {
      const data = r.early.get(r.expected);
      if (!data) return;
      r.early.delete(r.expected);
      r.expected++;
      this.consume(r, data);
    }
  }

  /** Applies the next message of `r`'s input stream (a packet or a join notice). */
  private consume(r: Remote, data: Uint8Array): void {
    if (data[0] === K_PACKET) {
      // The session's packets have one shape (every port, no analog device), so they are read
      // in place: the MAMEHub layout (seed 000, as `decodeMameHubInputPacket` reads it), every
      // other shape or length a `DecodeError`. (`decodeMameHubInputPacketInto` of
      // @netplay/protocol would do, but it has no offset for our kind byte and builds its error
      // texts on every call, ~100 B per packet.)
      const n = 1 + MAMEHUB_PACKET_HEADER_SIZE + this.ports * MAMEHUB_PORT_HEADER_SIZE;
      if (data.length !== n) throw new DecodeError('bad-length', 1, 'packet shape');
      if (data[13] !== this.ports) throw new DecodeError('bad-value', 13, 'packet ports');
      for (let i = 0; i < this.ports; i++)
        if (data[22 + i * MAMEHUB_PORT_HEADER_SIZE] !== 0) throw new DecodeError('bad-value', 1, 'packet shape');
      const high = readU32BE(data, 5);
      if (high > 0x1fffff) throw new DecodeError('bad-value', 5, 'futureInputTime exceeds 2^53 − 1');
      const time = high * 0x100000000 + readU32BE(data, 9);
      const last = r.packets.last();
      // Assumption 1 of the seed: input times never go back.
      if (last && time < last.time) throw new DecodeError('bad-value', 5, 'input time went back');
      const slot = r.packets.push();
      slot.id = readU32BE(data, 1);
      slot.time = time;
      for (let i = 0; i < this.ports; i++) slot.masks[i] = readU32BE(data, 18 + i * MAMEHUB_PORT_HEADER_SIZE);
      prune(r.packets, this.next);
      if (r.unconfirmed && slot.id >= r.reliableNext) {
        // Used before its reliable copy came: keep it for a LEAVE (slots and their bytes are reused).
        const c = r.unconfirmed.push();
        c.id = slot.id;
        c.time = time;
        if (c.bytes.length !== n) c.bytes = new Uint8Array(n);
        c.bytes.set(data);
      }
    } else {
      const dv = new DataView(data.buffer, data.byteOffset, data.length);
      if (data.length !== 18) throw new DecodeError('bad-length', 0, 'notice');
      const cand = dv.getUint32(5);
      const port = data[9]!;
      const activeFrom = dv.getUint32(10);
      const sync = dv.getUint32(14);
      if (r.id === this.host && port < this.ports) this.admit(cand, port, activeFrom, sync);
    }
  }
}

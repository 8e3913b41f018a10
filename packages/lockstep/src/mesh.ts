import { ByteReader, DecodeError, type MameInputState, mameHubInputPacketSize } from '@netplay/protocol';
import { applyDelta, DeltaError, type DirtyPageSet } from '@netplay/state';
import { LockstepError } from './errors.js';
import type { PingHistoryOptions } from './latency.js';
import { type EndReason, Liveness, type LockstepEvent, p2pVerdict } from './liveness.js';
import { MeshAdmission } from './mesh-admission.js';
import { K_BUNDLE, MeshBundles } from './mesh-bundle.js';
import { candidateHello, MeshCandidacy } from './mesh-candidate.js';
import {
  type AcceptedMember,
  decodeNotice,
  encodeAccepted,
  encodeLeave,
  encodeNotice,
  encodeReport,
  J_ACCEPTED,
  J_CANDIDATE,
  J_HELLO,
  J_HELLO_PORT,
  J_LEAVE,
  J_REJECT,
  J_REPORT,
  K_PACKET,
  readAccepted,
  readAddressed,
  readLeave,
} from './mesh-join.js';
import { checkMeshOptions, type MeshAction, type MeshOptions } from './mesh-options.js';
import { OwnStream } from './mesh-own.js';
import { blankState, bytesToMask, stateToBytes } from './mesh-packets.js';
import { MeshPings } from './mesh-pings.js';
import { addPacket, createRemote, mergeFrame, type Remote, takeInput } from './mesh-remote.js';
import { MeshSuccessors } from './mesh-successors.js';
import { MeshSyncBlocks } from './mesh-sync.js';
import { type BufferPool, OutboxPool } from './pool.js';
import type { Envelope, FrameRequest, LockstepScheduler, StatefulScheduler } from './types.js';
import { HostWatermark } from './watermark.js';

export { MESH_CHANNELS, type MeshAction, type MeshMember, type MeshOptions } from './mesh-options.js';

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
  private readonly historyOptions: PingHistoryOptions;
  private readonly neutralFrames: number;
  private readonly layoutHash: bigint;
  private readonly onAction: ((a: MeshAction) => void) | undefined;
  private readonly host: number;
  private myPort: number;
  private joined: boolean;
  private activeFrom = 0;
  private readonly remotes = new Map<number, Remote>();
  /** This peer's input stream: the packets in force and the items kept for late joiners. */
  private readonly own: OwnStream;
  private readonly remoteList: Remote[] = [];
  private readonly packetSize: number;
  private readonly shape: { readonly ports: number; readonly packetSize: number; readonly history: PingHistoryOptions };
  private readonly pool: OutboxPool;
  private readonly inputPool: BufferPool;
  /** The unreliable copies: each packet with the stream's previous messages (see `mesh-bundle.ts`). */
  private readonly bundles: MeshBundles;
  private readonly pings: MeshPings;
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
  /** The power-on state and the sync blocks, for late joiners. */
  private readonly blocks: MeshSyncBlocks;
  private load: { frame: number; state: Uint8Array } | undefined;
  /** Host: the candidate being admitted. */
  private readonly admission: MeshAdmission;
  /** A candidate's hello and the input messages that reach it before its acceptance. */
  private readonly candidacy: MeshCandidacy;
  /** Peers admitted under a departed peer's id before its cut (see {@link MeshSuccessors}). */
  private readonly successors = new MeshSuccessors();
  /** Departed peers still in `remotes` (dropped once `next` reaches their cut). */
  private cuts = 0;
  /** The latest cut frame of a departed peer dropped (a joiner's sync block must not be older). */
  private lastCut = 0;
  /** Interruptions, removals and the end (see {@link LockstepEvent}); the driver empties it. */
  readonly events: LockstepEvent[] = [];
  private readonly live: Liveness;

  constructor(options: MeshOptions) {
    const { ports, inputBytes, frameMs } = options;
    const syncInterval = checkMeshOptions(options);
    this.id = options.id;
    this.ports = ports;
    this.inputBytes = inputBytes;
    this.frameMs = frameMs;
    this.startMs = options.startMs ?? 0;
    this.extraDelayMs = options.extraDelayMs ?? 0;
    this.historyOptions = options.history ?? {};
    this.neutralFrames = options.neutralFrames ?? Math.round(1000 / frameMs);
    this.layoutHash = options.layoutHash ?? 0n;
    this.blocks = new MeshSyncBlocks(syncInterval, this.layoutHash, options.pageSize ?? 4096);
    this.onAction = options.onAction;
    this.host = options.members[0]!.id;
    this.joined = options.candidate !== true;
    this.packetSize = mameHubInputPacketSize(blankState(ports));
    this.shape = { ports, packetSize: this.packetSize, history: this.historyOptions };
    this.myPort = -1;
    for (const m of options.members) {
      if (m.id === this.id) {
        if (!this.joined) throw new LockstepError('bad-argument', 'a candidate is not a member yet');
        this.myPort = m.port;
      } else if (this.joined) this.addRemote(m.id, m.port, 0, 0);
    }
    if (this.joined && this.myPort < 0) throw new LockstepError('bad-argument', 'members must include this peer');
    // A candidate contacts the first peer (the host), again every second until it has an answer.
    const hello = candidateHello(this.id, options.address ?? `${this.id}`, options.port);
    this.candidacy = new MeshCandidacy(this.joined ? undefined : hello);
    this.local = new Uint8Array(inputBytes);
    this.merged = blankState(ports);
    this.inputs = new Uint8Array(ports * inputBytes);
    this.own = new OwnStream(ports, this.packetSize, 2 * syncInterval + 120);
    this.admission = new MeshAdmission(this.outbox, options.joinTimeoutMs ?? 5000, ports);
    this.pool = new OutboxPool(this.outbox);
    this.inputPool = this.pool.buffers(1 + this.packetSize);
    this.bundles = new MeshBundles(this.pool, 1 + this.packetSize, options.unreliableBundles !== false);
    this.watermark = new HostWatermark(this.id === this.host);
    this.pings = new MeshPings(this.pool, options.pingIntervalMs ?? 100, inputBytes, this.watermark);
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
    // A candidate's acceptance would list the leaver as a member: turn it down.
    this.admission.abort([...this.remotes.keys()].filter((m) => m !== id));
    // The packets held only through their unreliable copy go along (ids below `end`: all consumed).
    const msg = encodeLeave(id, end, cutAt, r.unconfirmed!, 1 + this.packetSize);
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
      this.lastCut = Math.max(this.lastCut, r.cutAt);
      this.oneWayDirty = true;
      // Its successor (admitted under its id before the cut here) takes its place.
      const s = this.successors.retire(r);
      if (s !== undefined) this.install(s);
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

  /** Host: a candidate contacted us at `address`, asking for `port` if given (its hello). */
  private onCandidate(cand: number, address: string, now: number, port?: number): void {
    if (this.id !== this.host || !this.joined) return;
    const spent = this.successors.firstIdFor(cand) === undefined;
    // A joiner replays from the sync block on, knowing only the members listed: no departed peer may
    // still count in the frames it replays (it waits for a sync block at or after the last cut).
    const old = this.blocks.syncFrame < this.lastCut;
    const refuse = this.cuts > 0 || this.remotes.has(cand) || cand === this.id || spent || old;
    this.admission.offer(cand, address, now, this.remotes.keys(), refuse, this.usedPorts(), port);
  }

  private usedPorts = (): number[] => [this.myPort, ...[...this.remotes.values()].map((r) => r.port)];

  /** Member: the result of the connection attempt to candidate `cand` the shell made for a `connect` action. */
  reportConnect(cand: number, ok: boolean): void {
    this.outbox.push({ to: this.host, channel: 'join', data: encodeReport(cand, ok) });
  }

  receive(from: number, channel: string, data: Uint8Array, now: number): void {
    this.pool.recycle();
    if (this.live.ended) {
      this.dropped++;
      return;
    }
    try {
      if (channel === 'join') this.onJoin(from, data, now);
      else if (channel === 'ping') {
        if (this.pings.receive(from, this.remotes.get(from), from === this.host, data, now)) this.oneWayDirty = true;
        // A late joiner aligned its schedule on the acceptance, which may have come late (a lost
        // reliable copy): the host's progress says how far the host's schedule is at least.
        const ran = this.watermark.frames;
        if (this.activeFrom > 0 && from === this.host && this.startMs + ran * this.frameMs > now)
          this.startMs = now - ran * this.frameMs;
      } else if (channel === 'input' || channel === 'input-u') {
        if (!this.joined && this.candidacy.waiting) this.candidacy.keep(from, channel, data);
        else {
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
    this.candidacy.tick(now, this.host, this.outbox);
    this.pings.tick(now, this.remoteList, this.next);
    this.admission.expire(now, this.remotes.keys());
  }

  dueAt(): number {
    return this.joined && !this.live.ended ? this.startMs + this.next * this.frameMs : Infinity;
  }

  nextWakeAt(now: number): number {
    if (this.live.ended) return Infinity;
    const hello = this.candidacy.wakeAt;
    const live = this.joined && this.live.enabled ? Math.max(this.live.wakeAt(now), this.startMs) : Infinity;
    return Math.min(this.remotes.size > 0 ? this.pings.nextAt : Infinity, this.admission.deadline, hello, live);
  }

  wantsState(frame: number): boolean {
    return this.blocks.wants(frame, this.joined);
  }

  storeState(frame: number, state: Uint8Array, dirty?: DirtyPageSet): void {
    this.blocks.store(frame, state, this.joined, dirty);
  }

  takeLoad():
    | {
        /** The host's sync frame named in the acceptance (a multiple of `syncIntervalFrames`): the next frame this newcomer runs. */
        frame: number;
        /** The host's state at the start of `frame`, rebuilt from the acceptance's page delta against power-on (the core's state size). */
        state: Uint8Array;
      }
    | undefined {
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
    const masks = this.merged;
    mergeFrame(f, f >= this.activeFrom ? this.own.packets : undefined, remotes, masks);
    stateToBytes(masks, this.inputBytes, this.inputs);
    this.next++;
    const req = this.request;
    req.frame = f;
    return req;
  }

  private sendPacket(f: number): void {
    this.sentFor = f;
    if (this.admission.hasDue) this.emitNotice();
    // MAMEHub: future input time = now + latency; if it went back, previous + 1.
    let time = f + this.latencyFrames();
    if (time < this.lastTime) time = this.lastTime + 1;
    if (time < this.activeFrom) time = this.activeFrom;
    this.lastTime = time;
    const id = this.nextId++;
    const mask = this.myPort >= 0 ? bytesToMask(this.local) : 0;
    const bytes = this.own.packet(id, time, f, this.myPort, mask);
    const data = this.inputPool.take();
    data.set(bytes);
    const bundle = this.bundles.writer?.bundle(data) ?? data;
    for (let i = 0; i < this.remoteList.length; i++) {
      const p = this.remoteList[i]!.id;
      this.pool.push(p, 'input', data);
      this.pool.push(p, 'input-u', bundle);
    }
  }

  private emitNotice(): void {
    const n = this.admission.takeDue()!;
    const id = this.nextId++;
    // The new peer joins at this notice's time (the time of the packet that follows it) and
    // counts from one second later.
    let time = this.sentFor + this.latencyFrames();
    if (time < this.lastTime) time = this.lastTime + 1;
    const activeFrom = time + this.neutralFrames;
    const sync = this.blocks.syncFrame;
    // A successor of a departed peer (the same id) numbers its packets in a new incarnation.
    const firstId = this.successors.firstIdFor(n.cand)!;
    const bytes = encodeNotice(id, { cand: n.cand, port: n.port, activeFrom, sync, firstId });
    this.own.push(id, time, this.next).bytes = bytes;
    this.bundles.writer?.remember(bytes);
    for (const p of this.remotes.keys()) {
      this.outbox.push({ to: p, channel: 'input', data: bytes });
      this.outbox.push({ to: p, channel: 'input-u', data: bytes });
    }
    // The candidate gets its slot, the sync block as a page delta against the initial blocks,
    // and (below, like every member) this peer's inputs since the sync block.
    const delta = this.blocks.delta();
    const members: AcceptedMember[] = [{ id: this.id, port: this.myPort, firstId: 0 }];
    for (const r of this.remotes.values()) members.push({ id: r.id, port: r.port, firstId: r.firstId });
    const acc = encodeAccepted({ port: n.port, activeFrom, sync, hostFrame: this.next, firstId, members, delta });
    this.outbox.push({ to: n.cand, channel: 'join', data: acc });
    this.admit(n.cand, n.port, activeFrom, sync, firstId);
  }

  /**
   * A member admits an accepted candidate: waits for it from `activeFrom`, sends it its inputs
   * since `sync`. Under the id of a peer still listed here (departed, its cut not reached yet: the
   * host admits an id only once it dropped it) it is that peer's successor, installed at the cut.
   */
  private admit(cand: number, port: number, activeFrom: number, sync: number, firstId: number): void {
    const known = this.remotes.get(cand);
    // Its own notice, or one a joiner reads in the host's history for a member it already knows.
    if (cand === this.id || this.successors.get(cand) || (known && known.firstId >= firstId)) return;
    // The new peer's packets are numbered from `firstId` (0, or its incarnation's).
    const r = createRemote(cand, port, activeFrom, firstId, this.shape, this.id === this.host);
    if (known) this.successors.add(r);
    else this.install(r);
    this.own.sendSince(cand, sync, this.nextId, this.outbox);
  }

  private addRemote(id: number, port: number, activeFrom: number, expected: number): void {
    this.install(createRemote(id, port, activeFrom, expected, this.shape, this.id === this.host));
  }

  private install(r: Remote): void {
    this.remotes.set(r.id, r);
    this.remoteList.push(r);
    this.oneWayDirty = true;
    // (A successor cut before its predecessor's cut here is not watched.)
    if (r.end === Infinity) this.live?.add(r.id);
  }

  private onJoin(from: number, data: Uint8Array, now: number): void {
    const r = new ByteReader(data);
    const type = r.u8('type');
    if (type === J_HELLO || type === J_HELLO_PORT) {
      const { id: cand, port, address } = readAddressed(r, type === J_HELLO_PORT);
      if (cand !== from) throw new DecodeError('bad-value', 1, 'hello from another id');
      this.onCandidate(cand, address, now, port);
      return;
    }
    if (type === J_CANDIDATE) {
      const { id: cand, address } = readAddressed(r);
      if (from !== this.host || !this.joined) throw new DecodeError('bad-value', 0, 'candidate from a non-host');
      this.onAction?.({ type: 'connect', peer: cand, address });
      return;
    }
    if (type === J_REPORT) {
      const cand = r.u32('candidate');
      const ok = r.u8('ok');
      r.expectEnd('report');
      this.admission.report(from, cand, ok === 1, this.remotes.keys(), this.usedPorts());
      return;
    }
    if (type === J_REJECT) {
      const cand = r.u32('candidate');
      r.expectEnd('reject');
      if (from !== this.host) throw new DecodeError('bad-value', 0, 'reject from a non-host');
      if (cand === this.id && !this.joined) {
        if (!this.candidacy.waiting) return;
        this.candidacy.answered();
        this.onAction?.({ type: 'rejected' });
      } else if (cand !== this.id) this.onAction?.({ type: 'disconnect', peer: cand });
      return;
    }
    if (type === J_ACCEPTED) {
      if (from !== this.host || this.joined) throw new DecodeError('bad-value', 0, 'unexpected accept');
      const { port, activeFrom, sync, hostFrame, firstId, members, delta } = readAccepted(r);
      const initial = this.blocks.initialState;
      if (port >= this.ports || !initial) throw new DecodeError('bad-value', 1, 'port');
      // Capped at the core's state size (the initial state's): a hostile host cannot make us allocate more.
      const state = applyDelta(initial, delta, { layoutHash: this.layoutHash, maxTargetBytes: initial.length });
      this.joined = true;
      const early = this.candidacy.answered();
      this.myPort = port;
      this.activeFrom = activeFrom;
      this.lastTime = activeFrom - 1;
      this.next = sync;
      this.nextId = firstId;
      this.sentFor = sync - 1;
      this.blocks.lastStored = sync;
      this.load = { frame: sync, state };
      // Run behind the host by the frames it was ahead; catch-up frames are already due.
      this.startMs = now - hostFrame * this.frameMs;
      for (const m of members) {
        const existing = this.remotes.get(m.id);
        if (existing) existing.port = m.port;
        else this.install(createRemote(m.id, m.port, 0, -1, this.shape, false, m.firstId));
      }
      this.onAction?.({ type: 'accepted', port });
      for (const m of early) this.receive(m.from, m.channel, m.data, now);
      return;
    }
    if (type === J_LEAVE) {
      const { leaver, end, cutAt, packets } = readLeave(r, data, 1 + this.packetSize);
      if (from === this.host && this.joined && leaver === this.id) {
        // The host removed us: our input is neutral from `cutAt` on, so our finals stop before it.
        this.live.end('removed', this.watermark.final(this.next, cutAt), now);
        return;
      }
      let rem = this.remotes.get(leaver);
      // A successor that leaves before its predecessor's cut here.
      if (rem && rem.end !== Infinity) rem = this.successors.get(leaver) ?? rem;
      // Only the host decides a cut, once per peer.
      if (from !== this.host || !this.joined || leaver === this.id || !rem || rem.end !== Infinity)
        throw new DecodeError('bad-value', 0, 'unexpected leave');
      this.cut(rem, end, cutAt);
      // The leaver's packets the host used: ours to use too (duplicates are ignored as usual).
      for (const packet of packets) this.onInput(leaver, 'leave', packet);
      return;
    }
    throw new DecodeError('unknown-type', 0, `join message ${type}`);
  }

  private onInput(from: number, channel: string, data: Uint8Array): void {
    if (channel === 'input-u' && data[0] === K_BUNDLE) {
      const { reader } = this.bundles;
      for (let k = 0, n = reader.check(data); k < n; k++) this.onInput(from, channel, reader.message(data, k));
      return;
    }
    const r = this.successors.pick(from, data, this.remotes.get(from));
    if (!r || data.length < 5) {
      this.dropped++;
      return;
    }
    takeInput(r, channel, data, this.consumeFn);
  }

  /** Applies the next message of `r`'s input stream (a packet or a join notice). */
  private readonly consumeFn = (r: Remote, data: Uint8Array): void => this.consume(r, data);

  private consume(r: Remote, data: Uint8Array): void {
    if (data[0] === K_PACKET) {
      addPacket(r, data, this.ports, this.next);
    } else {
      const { cand, port, activeFrom, sync, firstId } = decodeNotice(data);
      if (r.id === this.host && port < this.ports) this.admit(cand, port, activeFrom, sync, firstId);
    }
  }
}

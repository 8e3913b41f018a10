import { DecodeError, EncodeError } from '@netplay/protocol';
import { applyDelta, DeltaError, type DirtyPageSet } from '@netplay/state';
import { Prng } from '@netplay/transport';
import { LockstepError } from './errors.js';
import { DelayEstimate } from './frame-advance-delay.js';
import { EventQueue, newRemote, type Remote } from './frame-advance-events.js';
import {
  encodeAdmit,
  encodeJoinRequest,
  encodeLeave,
  encodeWelcome,
  isJoinMessage,
  readJoinMessage,
  X_ADMIT,
  X_JOIN,
  X_WELCOME,
} from './frame-advance-join.js';
import { checkFrameAdvanceShape, type FrameAdvanceOptions } from './frame-advance-options.js';
import { OwnEvents } from './frame-advance-own.js';
import {
  decodeFaMessageInto,
  encodeFaAdvance,
  encodeFaAdvanceInto,
  encodeFaEventInto,
  encodeFaHostProgressInto,
  encodeFaLatencyInfoInto,
  encodeFaPingInto,
  encodeFaPongInto,
  FA_HOST_PROGRESS_SIZE,
  FA_LATENCY_INFO_SIZE,
  FaType,
  faEventSize,
  faMessageScratch,
} from './frame-advance-wire.js';
import { LateJoinDelta } from './late-join-delta.js';
import type { PingHistoryOptions } from './latency.js';
import { type EndReason, Liveness, type LockstepEvent, p2pVerdict } from './liveness.js';
import { type BufferPool, OutboxPool } from './pool.js';
import type { Envelope, FrameRequest, LockstepScheduler, StatefulScheduler } from './types.js';
import { HostWatermark } from './watermark.js';

export { FRAME_ADVANCE_CHANNELS, type FrameAdvanceOptions } from './frame-advance-options.js';

/**
 * FS-UAE's peer-to-peer frame-advance scheduler (seed 004). An input event made at time t is
 * scheduled for the earliest frame whose start every peer can receive it by: the first frame
 * starting at or after t + (largest one-way estimate to any peer) + extra delay. Each peer tells
 * every other, with an advance message, once it will schedule nothing more for a frame; a frame
 * runs when every peer's advance for it arrived. Events of a frame apply in the order of
 * (random key, client id), then payload (as `compareFsUaeInputEvents` of @netplay/protocol). One-way times come from a ping history per peer, taken at a
 * high percentile (conservative).
 */
export class FrameAdvancePeer implements LockstepScheduler, StatefulScheduler {
  readonly id: number;
  readonly outbox: Envelope[] = [];
  /** Messages dropped because they did not decode or broke the protocol. */
  dropped = 0;
  private myPort: number;
  private readonly host: number;
  private readonly layoutHash: bigint;
  /** Late joiners' page deltas against the power-on state (issue 16: `DeltaBase`, dirty pages). */
  private readonly deltas: LateJoinDelta;
  private joined: boolean;
  private nextJoinAt = -Infinity;
  private initialState: Uint8Array | undefined;
  private load: { frame: number; state: Uint8Array } | undefined;
  private readonly admitQueue: { id: number; port: number }[] = [];
  /** Own events: their stamps and the copies kept for late joiners. */
  private readonly own: OwnEvents;
  private held: { from: number; channel: string; data: Uint8Array }[] = [];
  private strangers: { from: number; channel: string; data: Uint8Array }[] = [];
  private readonly ports: number;
  private readonly inputBytes: number;
  private readonly frameMs: number;
  private startMs: number;
  private readonly pingIntervalMs: number;
  private readonly historyOptions: PingHistoryOptions;
  private readonly remotes = new Map<number, Remote>();
  /** The remotes again, for iteration without an iterator object. */
  private readonly remoteList: Remote[] = [];
  /** Events queued for coming frames. */
  private readonly queue: EventQueue;
  private readonly msg = faMessageScratch();
  private readonly pool: OutboxPool;
  private readonly eventPool: BufferPool;
  private readonly advancePool: BufferPool;
  private readonly pingPool: BufferPool;
  private readonly pongPool: BufferPool;
  private readonly latencyPool: BufferPool;
  private readonly progressPool: BufferPool;
  /** How far the host has run (see {@link HostWatermark}): a non-host's finals stop there. */
  private readonly watermark: HostWatermark;
  private readonly request: { frame: number; inputs: Uint8Array; command: number };
  private readonly inputs: Uint8Array;
  private readonly local: Uint8Array;
  private readonly sentLocal: Uint8Array;
  private next = 0;
  private promised = -1;
  private pingSeq = 0;
  private nextPingAt: number;
  /** The delay of this peer's inputs, from the ping histories (cached). */
  private readonly timing: DelayEstimate;
  /** Departed peers still in `remotes` (dropped once frame `cut + 1` is assembled). */
  private cuts = 0;
  /** Departed peers dropped: what still comes from them is ignored (until one is admitted again). */
  private readonly departed = new Set<number>();
  /** Interruptions, removals and the end (see {@link LockstepEvent}); the driver empties it. */
  readonly events: LockstepEvent[] = [];
  private readonly live: Liveness;

  constructor(options: FrameAdvanceOptions) {
    const { ports, inputBytes, frameMs } = options;
    checkFrameAdvanceShape(options);
    this.id = options.id;
    this.myPort = options.port;
    this.joined = options.candidate !== true;
    if (!this.joined && options.peers.length === 0)
      throw new LockstepError('bad-argument', 'a candidate lists the peers it joins');
    // The host is the smallest id of the session; a candidate is not part of it yet.
    this.host = options.host ?? Math.min(...(this.joined ? [options.id] : []), ...options.peers);
    this.layoutHash = options.layoutHash ?? 0n;
    this.deltas = new LateJoinDelta(this.layoutHash, 4096);
    this.ports = ports;
    this.inputBytes = inputBytes;
    this.frameMs = frameMs;
    this.startMs = options.startMs ?? 0;
    const extraDelayMs = options.extraDelayMs ?? 0;
    if (!(extraDelayMs >= 0)) throw new LockstepError('bad-argument', 'extraDelayMs must be >= 0');
    this.timing = new DelayEstimate(this.remoteList, options.equalize === true, extraDelayMs);
    this.pingIntervalMs = options.pingIntervalMs ?? 100;
    if (!(this.pingIntervalMs > 0)) throw new LockstepError('bad-argument', 'pingIntervalMs must be > 0');
    this.nextPingAt = this.startMs - 1e9;
    this.inputs = new Uint8Array(ports * inputBytes);
    this.local = new Uint8Array(inputBytes);
    this.sentLocal = new Uint8Array(inputBytes);
    this.historyOptions = options.history ?? {};
    this.queue = new EventQueue(inputBytes);
    this.own = new OwnEvents(this.queue, new Prng(options.seed), options.retainFrames ?? 600);
    this.pool = new OutboxPool(this.outbox);
    this.eventPool = this.pool.buffers(faEventSize(inputBytes));
    this.advancePool = this.pool.buffers(5);
    this.pingPool = this.pool.buffers(13);
    this.pongPool = this.pool.buffers(21);
    this.latencyPool = this.pool.buffers(FA_LATENCY_INFO_SIZE);
    this.progressPool = this.pool.buffers(FA_HOST_PROGRESS_SIZE);
    this.watermark = new HostWatermark(this.id === this.host);
    this.request = { frame: 0, inputs: this.inputs, command: 0 };
    this.live = new Liveness(options.liveness, this.events);
    for (const p of options.peers) {
      if (p === this.id) throw new LockstepError('bad-argument', 'a peer cannot list itself');
      // A candidate waits for nobody until it is welcomed.
      if (this.joined) this.addRemote(p, -1, -1, options.initialOneWayMs?.[p]);
    }
  }

  get port(): number {
    return this.myPort;
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

  get nextFrame(): number {
    return this.next;
  }

  /** Whether this peer takes part (a candidate does once welcomed). */
  get isMember(): boolean {
    return this.joined;
  }

  /** Ids of the peers this one waits for. */
  get peerIds(): number[] {
    return [...this.remotes.keys()];
  }

  wantsState(frame: number): boolean {
    return (
      (frame === 0 && this.initialState === undefined) ||
      (frame === this.next && this.admitQueue.length > 0 && this.cuts === 0)
    );
  }

  storeState(frame: number, state: Uint8Array, dirty?: DirtyPageSet): void {
    if (frame === 0 && this.initialState === undefined) {
      this.initialState = state;
      this.deltas.setBase(state);
    }
    // Admissions wait until every departure is settled (a welcome must not list a leaver).
    if (frame !== this.next || this.admitQueue.length === 0 || !this.initialState || !this.joined || this.cuts > 0)
      return;
    for (const { id, port } of this.admitQueue.splice(0)) this.admit(id, port, frame, state, dirty);
  }

  takeLoad():
    | {
        /** The frame the host's state in the welcome is at the start of: the next frame this newcomer runs. */
        frame: number;
        /** The host's state at the start of `frame`, rebuilt from the welcome's page delta against power-on (the core's state size). */
        state: Uint8Array;
      }
    | undefined {
    const l = this.load;
    this.load = undefined;
    return l;
  }

  /**
   * Host only: peer `id` left (the shell calls this once its connection is closed and nothing more
   * from it can arrive). With A = the last advance the host received from it, every remaining peer
   * gets `LEAVE(id, A + 1, port)` on `sched` and applies, as the host does here, the rule: the
   * leaver's events for frames ≤ A count as usual (its advance A is waited for if it has not
   * arrived), its events for later frames are discarded whenever they arrive, it is not waited for
   * from frame A + 1 on, and its port (the one its events drive; 255 on the wire if it never sent
   * one) is set to zeros first thing in frame A + 1, before that frame's events apply. The peer is
   * then dropped. Safe when every peer's view of the leaver's schedule is a prefix of the host's
   * (the star topology). Admissions of late joiners wait until the departure is settled; a queued
   * join request of `id` is forgotten. Unknown or already removed ids are a no-op.
   * @param id The leaver's peer id.
   * @param _now The time (not needed; kept for a uniform call with the other schedulers).
   * @throws LockstepError `bad-argument` on a peer other than the host.
   */
  removePeer(id: number, _now: number): void {
    if (this.id !== this.host || !this.joined) throw new LockstepError('bad-argument', 'only the host removes peers');
    const q = this.admitQueue.findIndex((a) => a.id === id);
    if (q >= 0) this.admitQueue.splice(q, 1);
    const r = this.remotes.get(id);
    if (!r || r.cut !== Infinity) return;
    const last = r.advanced;
    const port = r.port >= 0 ? r.port : r.portSeen;
    const msg = encodeLeave(id, last + 1, port);
    // Everyone, the leaver included: it learns it was removed (and where its finals stop).
    for (const m of this.remotes.keys()) this.outbox.push({ to: m, channel: 'sched', data: msg });
    this.cut(r, last, port);
  }

  /** Applies a departure: `r`'s events count up to frame `last`, its `port` is neutral from `last + 1`. */
  private cut(r: Remote, last: number, port: number): void {
    r.cut = last;
    r.neutralPort = port;
    this.cuts++;
    // It left the membership: no longer watched nor counted for quorum.
    this.live.remove(r.id);
    // Events of the leaver already queued for later frames are discarded.
    this.queue.discardAfter(r.id, last);
  }

  /**
   * First thing in frame `f`: every departed peer whose cut is before `f` gets its port set to
   * neutral (frame `cut + 1`) and is dropped.
   */
  private settleCuts(f: number): void {
    for (let i = this.remoteList.length - 1; i >= 0; i--) {
      const r = this.remoteList[i]!;
      if (r.cut >= f) continue;
      if (r.neutralPort >= 0 && r.neutralPort < this.ports)
        this.inputs.fill(0, r.neutralPort * this.inputBytes, (r.neutralPort + 1) * this.inputBytes);
      this.remoteList.splice(i, 1);
      this.remotes.delete(r.id);
      this.departed.add(r.id);
      this.cuts--;
      this.timing.dirty = true;
    }
  }

  /** The frame this peer has promised to schedule nothing more for (its last advance message). */
  get promisedFrame(): number {
    return this.promised;
  }

  /** The one-way estimate to `peer` in ms. */
  oneWayMs(peer: number): number {
    const r = this.remotes.get(peer);
    if (!r) throw new LockstepError('bad-argument', `unknown peer ${peer}`);
    return r.history.oneWayMs();
  }

  /** The delay an input of this peer gets before every peer can have it: largest estimate (or the session's, equalized) + extra. */
  delayMs(): number {
    const t = this.timing;
    if (t.dirty) t.refresh();
    return t.delay;
  }

  /** The frame an input made at `now` would be scheduled for. */
  targetFrame(now: number): number {
    return Math.max(this.promised + 1, this.bound(now) + 1);
  }

  receive(from: number, channel: string, data: Uint8Array, now: number): void {
    this.pool.recycle();
    if (this.live.ended) {
      this.dropped++;
      return;
    }
    if (channel === 'sched' && isJoinMessage(data)) {
      try {
        this.onJoinMessage(from, data, now);
      } catch (e) {
        if (e instanceof DecodeError || e instanceof DeltaError) this.dropped++;
        else throw e;
      }
      return;
    }
    if (!this.joined) {
      // Before the welcome: keep what members already send us (channels are not ordered together).
      if (channel === 'sched' && this.held.length < 100_000) this.held.push({ from, channel, data: data.slice() });
      return;
    }
    const r = this.remotes.get(from);
    if (!r && this.departed.has(from)) {
      this.dropped++;
      return;
    }
    if (!r) {
      // A newcomer may reach us before the host's admission does: keep its schedule for then.
      if (channel === 'sched' && this.strangers.length < 100_000)
        this.strangers.push({ from, channel, data: data.slice() });
      else this.dropped++;
      return;
    }
    const m = this.msg;
    try {
      decodeFaMessageInto(data, this.inputBytes, m);
    } catch (e) {
      if (e instanceof DecodeError) {
        this.dropped++;
        return;
      }
      throw e;
    }
    const sched = channel === 'sched';
    if (m.type === FaType.Event && sched) {
      // An event must come before its sender's advance for that frame, for a port that exists.
      if (m.frame <= r.advanced || m.frame < this.next || m.port >= this.ports || m.client !== from) {
        this.dropped++;
        return;
      }
      r.portSeen = m.port;
      // A departed peer's events after its cut never count.
      if (m.frame > r.cut) return;
      const e = this.queue.takeEvent();
      e.frame = m.frame;
      e.key = m.key;
      e.client = m.client;
      e.port = m.port;
      for (let i = 0; i < this.inputBytes; i++) e.input[i] = data[m.inputAt + i]!;
      this.queue.addEvent(e, this.next);
    } else if (m.type === FaType.Advance && sched) {
      // Progress: a later advance (a replayed or older one is no life while we wait on it).
      if (m.frame > r.advanced) {
        r.advanced = m.frame;
        this.live.progress(from, now);
      }
    } else if (m.type === FaType.Ping && !sched) {
      const out = this.pongPool.take();
      try {
        encodeFaPongInto(m.seq, m.sentAtUs, now, out);
        this.pool.push(from, 'ping', out);
      } catch (e) {
        if (!(e instanceof EncodeError)) throw e;
        this.dropped++;
      }
    } else if (m.type === FaType.Pong && !sched) {
      const rtt = now - m.pingSentAtUs / 1000;
      if (rtt >= 0) {
        r.history.add(rtt);
        this.timing.dirty = true;
      }
    } else if (m.type === FaType.Latency && !sched) {
      r.maxOneWay = m.maxOneWayMs;
      this.timing.dirty = true;
    } else if (m.type === FaType.Progress && !sched && from === this.host) {
      this.watermark.heard(m.frame);
    } else {
      this.dropped++;
      return;
    }
    this.live.heard(from, now);
  }

  setLocalInput(input: Uint8Array, now: number): void {
    this.pool.recycle();
    if (input.length !== this.inputBytes) throw new LockstepError('bad-argument', 'input size');
    this.local.set(input);
    if (this.myPort < 0 || !this.joined) return;
    let changed = false;
    for (let i = 0; i < input.length; i++) if (input[i] !== this.sentLocal[i]) changed = true;
    if (!changed) return;
    this.sentLocal.set(input);
    this.tick(now);
    const e = this.queue.takeEvent();
    this.own.stamp(e, this.promised);
    e.client = this.id;
    e.port = this.myPort;
    e.input.set(input);
    this.queue.addEvent(e, this.next);
    this.own.keep(e, this.next);
    const data = this.eventPool.take();
    encodeFaEventInto(e, data);
    for (let i = 0; i < this.remoteList.length; i++) this.pool.push(this.remoteList[i]!.id, 'sched', data);
  }

  tick(now: number): void {
    this.pool.recycle();
    if (!this.joined) {
      // Ask the host, again every second until welcomed (the connection may not be there yet).
      if (now >= this.nextJoinAt) {
        this.nextJoinAt = now + 1000;
        this.outbox.push({ to: this.host, channel: 'sched', data: encodeJoinRequest(this.id, this.myPort) });
      }
      return;
    }
    if (this.live.ended) return;
    if (this.live.enabled && now >= this.startMs) {
      const lost = p2pVerdict(this.live, now, this.id, this.host, this.watermark.final(this.next));
      if (lost >= 0) {
        const a = this.remotes.get(lost)?.advanced ?? this.next - 1;
        this.removePeer(lost, now);
        this.live.removed(lost, a + 1, now);
      }
      if (this.live.ended) return;
    }
    const bound = this.bound(now);
    if (bound > this.promised) {
      this.promised = bound;
      const data = this.advancePool.take();
      encodeFaAdvanceInto(bound, data);
      for (let i = 0; i < this.remoteList.length; i++) this.pool.push(this.remoteList[i]!.id, 'sched', data);
    }
    if (now >= this.nextPingAt) {
      this.nextPingAt = now + this.pingIntervalMs;
      const data = this.pingPool.take();
      encodeFaPingInto(this.pingSeq++, now, data);
      const info = this.latencyPool.take();
      if (this.timing.dirty) this.timing.refresh();
      encodeFaLatencyInfoInto(this.timing.ownMaxMs, info);
      const progress = this.watermark.isHost ? this.progressPool.take() : undefined;
      if (progress) encodeFaHostProgressInto(this.next, progress);
      for (let i = 0; i < this.remoteList.length; i++) {
        const p = this.remoteList[i]!.id;
        this.pool.push(p, 'ping', data);
        this.pool.push(p, 'ping', info);
        if (progress) this.pool.push(p, 'ping', progress);
      }
    }
  }

  dueAt(): number {
    return this.joined && !this.live.ended ? this.startMs + this.next * this.frameMs : Infinity;
  }

  nextWakeAt(now: number): number {
    if (this.live.ended) return Infinity;
    if (!this.joined) return this.nextJoinAt;
    const advanceAt = this.startMs + (this.promised + 1) * this.frameMs - this.delayMs();
    const live = this.live.enabled ? Math.max(this.live.wakeAt(now), this.startMs) : Infinity;
    return Math.min(advanceAt, this.nextPingAt, live);
  }

  /**
   * The next frame, once every peer advanced past it. The returned object (and its `inputs`) is
   * reused by the next call: copy what you keep (see `logEntry`).
   */
  poll(now: number): FrameRequest | undefined {
    this.pool.recycle();
    if (!this.joined || this.load || now < this.dueAt()) return undefined;
    this.tick(now);
    const live = this.live;
    // Ended, or a host whose group lacks quorum: no frame is marked final (rule 3).
    if (live.ended || (live.enabled && live.noQuorumSince >= 0)) {
      live.blocked(now);
      return undefined;
    }
    const f = this.next;
    if (this.promised < f) return undefined;
    let blocked = false;
    for (let i = 0; i < this.remoteList.length; i++) {
      const r = this.remoteList[i]!;
      // A departed peer is waited for up to its cut only.
      const waits = r.advanced < f && f <= r.cut;
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
    if (this.cuts > 0) this.settleCuts(f);
    this.queue.applyFrame(f, this.inputs);
    this.next++;
    const r = this.request;
    r.frame = f;
    return r;
  }

  /** Host: admit `cand` (on the port it asked for; the shell hands out free ports) with the state at the start of frame `sync`. */
  private admit(cand: number, port: number, sync: number, state: Uint8Array, dirty?: DirtyPageSet): void {
    if (this.remotes.has(cand) || cand === this.id) return;
    // The candidate's events count from the first frame this host has not promised yet, so every
    // member reads this admission (it precedes the host's advance for that frame) before it matters.
    const from = this.promised + 1;
    const members = [this.id, ...this.remotes.keys()].map((m) => ({
      id: m,
      port: m === this.id ? this.myPort : this.remotes.get(m)!.port,
    }));
    const admitMsg = encodeAdmit(cand, port, from);
    for (const p of this.remotes.keys()) this.outbox.push({ to: p, channel: 'sched', data: admitMsg });
    const delta = this.deltas.delta(state, dirty);
    // The port inputs in force (events before `sync` set them) travel with the state.
    const w = encodeWelcome({ port, from, sync, hostNext: this.next, members, inputs: this.inputs, delta });
    this.outbox.push({ to: cand, channel: 'sched', data: w });
    this.welcome(cand, port, from, sync);
  }

  /** Member: start exchanging with an admitted peer: our events since `sync`, our promise. */
  private welcome(cand: number, port: number, from: number, sync: number): void {
    if (this.remotes.has(cand) || cand === this.id) return;
    this.departed.delete(cand);
    this.addRemote(cand, port, from - 1);
    this.own.since(sync, (data) => this.outbox.push({ to: cand, channel: 'sched', data }));
    if (this.promised >= 0) this.outbox.push({ to: cand, channel: 'sched', data: encodeFaAdvance(this.promised) });
    const mine = this.strangers.filter((m) => m.from === cand);
    this.strangers = this.strangers.filter((m) => m.from !== cand);
    for (const m of mine) this.receive(m.from, m.channel, m.data, 0);
  }

  private addRemote(id: number, port: number, advanced: number, initial?: number): void {
    const r = newRemote(id, port, advanced, this.historyOptions, initial);
    this.remotes.set(id, r);
    this.timing.dirty = true;
    this.remoteList.push(r);
    this.live?.add(id);
  }

  private onJoinMessage(from: number, data: Uint8Array, now: number): void {
    const m = readJoinMessage(data, this.inputs.length);
    if (m.type === X_JOIN) {
      const { cand, port } = m;
      if (cand !== from || this.id !== this.host || !this.joined || port >= this.ports)
        throw new DecodeError('bad-value', 1, 'join');
      if (!this.admitQueue.some((a) => a.id === cand)) this.admitQueue.push({ id: cand, port });
    } else if (m.type === X_ADMIT) {
      if (from !== this.host || !this.joined || m.port >= this.ports) throw new DecodeError('bad-value', 0, 'admit');
      // Our events since the state the host sent: the host's `sync` is at most `m.from`, and we
      // cannot know it, so send everything we kept from `m.from - retainFrames`.
      this.welcome(m.cand, m.port, m.from, m.from - this.own.retainFrames);
    } else if (m.type === X_WELCOME) {
      if (from !== this.host || this.joined || !this.initialState) throw new DecodeError('bad-value', 0, 'welcome');
      const { port, from: fromFrame, sync, hostNext, members, inputs, delta } = m.welcome;
      // Capped at the core's state size (the power-on state's): a hostile host cannot make us allocate more.
      const state = applyDelta(this.initialState, delta, {
        layoutHash: this.layoutHash,
        maxTargetBytes: this.initialState.length,
      });
      if (port >= this.ports || sync > fromFrame) throw new DecodeError('bad-value', 1, 'welcome');
      this.joined = true;
      this.inputs.set(inputs);
      this.myPort = port;
      this.next = sync;
      this.promised = fromFrame - 1;
      this.load = { frame: sync, state };
      this.startMs = now - hostNext * this.frameMs;
      for (const x of members) if (!this.remotes.has(x.id)) this.addRemote(x.id, x.port, -1);
      for (const h of this.held.splice(0)) this.receive(h.from, h.channel, h.data, now);
    } else {
      const { leaver, from: fromFrame, port } = m;
      if (from === this.host && this.joined && leaver === this.id) {
        // The host removed us: our events after frame `fromFrame - 1` do not count, our finals stop there.
        this.live.end('removed', this.watermark.final(this.next, fromFrame), now);
        return;
      }
      const rem = this.remotes.get(leaver);
      // Only the host decides a cut, once per peer; a LEAVE for this peer itself is the shell's business.
      if (from !== this.host || !this.joined || leaver === this.id || !rem || rem.cut !== Infinity)
        throw new DecodeError('bad-value', 0, 'unexpected leave');
      this.cut(rem, fromFrame - 1, port === 255 ? -1 : port);
    }
  }

  private bound(now: number): number {
    return this.timing.bound(now, this.startMs, this.frameMs);
  }
}

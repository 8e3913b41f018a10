import {
  ByteReader,
  DecodeError,
  decodeMameHubInputPacket,
  encodeMameHubInputPacket,
  type MameInputState,
  mameHubInputPacketSize,
  mergeMameInputStates,
} from '@netplay/protocol';
import { applyDelta, DeltaError, pageDelta } from '@netplay/state';
import type { ChannelSpec } from '@netplay/transport';
import { LockstepError } from './errors.js';
import { decodeFaMessage, encodeFaPing, encodeFaPong } from './frame-advance-wire.js';
import { PingHistory, type PingHistoryOptions } from './latency.js';
import type { Envelope, FrameRequest, LockstepScheduler, StatefulScheduler } from './types.js';

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
}

interface Packet {
  readonly id: number;
  readonly time: number;
  /** The port inputs this packet sets (all ports, OR-merged with the other peers'). */
  readonly state: MameInputState;
}

interface Remote {
  readonly id: number;
  port: number;
  readonly history: PingHistory;
  /** Next packet id expected; -1 until a joiner learns the base. */
  expected: number;
  readonly early: Map<number, Uint8Array>;
  readonly packets: Packet[];
  /** First frame this peer's input counts and is waited for. */
  activeFrom: number;
}

interface OwnItem {
  readonly id: number;
  readonly time: number;
  readonly bytes: Uint8Array;
}

const K_PACKET = 1;
const K_NOTICE = 2;
const K_BASE = 3;
const J_HELLO = 1;
const J_CANDIDATE = 2;
const J_REPORT = 3;
const J_ACCEPTED = 4;
const J_REJECT = 5;

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
  private readonly own: OwnItem[] = [];
  private readonly ownPackets: Packet[] = [];
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

  /** Ids of the peers this one waits for (members other than itself). */
  get peerIds(): number[] {
    return [...this.remotes.keys()];
  }

  /** The latency estimate in frames (future input time minus current time): one-way estimate plus extra delay, in frames, plus one. */
  latencyFrames(): number {
    let d = 0;
    for (const r of this.remotes.values()) d = Math.max(d, r.history.oneWayMs());
    // A packet with time T is sent while frame T - L starts and is needed when frame T - 1 starts
    // (that frame waits for a packet beyond it): L - 1 frames must cover the one-way time.
    return Math.ceil((d + this.extraDelayMs) / this.frameMs) + 1;
  }

  /** Host: a candidate contacted us at `address` (the shell calls this, or the candidate's hello does). */
  private onCandidate(cand: number, address: string, now: number): void {
    if (this.id !== this.host || !this.joined) return;
    if (this.pending?.id === cand || this.pendingNotice?.cand === cand) return;
    if (this.pending || this.pendingNotice || this.remotes.has(cand) || cand === this.id) {
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
    try {
      if (channel === 'join') this.onJoin(from, data, now);
      else if (channel === 'ping') this.onPing(from, data, now);
      else if (channel === 'input' || channel === 'input-u') {
        if (!this.joined && this.hello) {
          if (this.early.length >= 100_000) throw new DecodeError('too-large', 0, 'too many inputs before acceptance');
          this.early.push({ from, channel, data });
        } else this.onInput(from, channel, data);
      } else this.dropped++;
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
    if (this.hello && now >= this.nextHelloAt) {
      this.nextHelloAt = now + 1000;
      this.outbox.push({ to: this.host, channel: 'join', data: this.hello });
    }
    if (now >= this.nextPingAt && this.remotes.size > 0) {
      this.nextPingAt = now + this.pingIntervalMs;
      const data = encodeFaPing(this.pingSeq++, now);
      for (const p of this.remotes.keys()) this.outbox.push({ to: p, channel: 'ping', data });
    }
    if (this.pending && now >= this.pending.deadline) this.reject(this.pending.id);
  }

  dueAt(): number {
    return this.joined ? this.startMs + this.next * this.frameMs : Infinity;
  }

  nextWakeAt(): number {
    const hello = this.hello ? this.nextHelloAt : Infinity;
    return Math.min(this.remotes.size > 0 ? this.nextPingAt : Infinity, this.pending?.deadline ?? Infinity, hello);
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

  poll(now: number): FrameRequest | undefined {
    if (!this.joined || this.load || now < this.dueAt()) return undefined;
    const f = this.next;
    if (this.sentFor < f) this.sendPacket(f);
    for (const r of this.remotes.values()) {
      if (f < r.activeFrom) continue;
      const last = r.packets[r.packets.length - 1];
      if (!last || last.time <= f) return undefined;
    }
    const states: MameInputState[] = [];
    if (f >= this.activeFrom) pick(this.ownPackets, f, states);
    for (const r of this.remotes.values()) if (f >= r.activeFrom) pick(r.packets, f, states);
    mergeMameInputStates(states, this.merged);
    stateToBytes(this.merged, this.inputBytes, this.inputs);
    this.next++;
    return { frame: f, inputs: this.inputs, command: 0 };
  }

  private sendPacket(f: number): void {
    this.sentFor = f;
    if (this.pendingNotice) this.emitNotice();
    // MAMEHub: future input time = now + latency; if it went back, previous + 1.
    let time = f + this.latencyFrames();
    if (time < this.lastTime) time = this.lastTime + 1;
    if (time < this.activeFrom) time = this.activeFrom;
    this.lastTime = time;
    const state = blankState(this.ports);
    if (this.myPort >= 0) state[this.myPort]!.currentMask = bytesToMask(this.local);
    const packet: Packet = { id: this.nextId++, time, state };
    const bytes = new Uint8Array(1 + mameHubInputPacketSize(state));
    bytes[0] = K_PACKET;
    encodeMameHubInputPacket({ inputId: packet.id, futureInputTime: time, state }, bytes, 1);
    this.ownPackets.push(packet);
    prune(this.ownPackets, f);
    this.own.push({ id: packet.id, time, bytes });
    for (const p of this.remotes.keys()) {
      this.outbox.push({ to: p, channel: 'input', data: bytes });
      this.outbox.push({ to: p, channel: 'input-u', data: bytes });
    }
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
    this.own.push({ id, time, bytes });
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
    for (let i = 0; i < this.own.length; i++) if (this.own[i]!.time <= sync) from = i;
    const firstId = this.own[from]?.id ?? this.nextId;
    this.outbox.push({ to: cand, channel: 'input', data: u32msg(K_BASE, firstId) });
    for (let i = from; i < this.own.length; i++)
      this.outbox.push({ to: cand, channel: 'input', data: this.own[i]!.bytes });
  }

  private addRemote(id: number, port: number, activeFrom: number, expected: number): void {
    this.remotes.set(id, {
      id,
      port,
      history: new PingHistory(this.historyOptions),
      expected,
      early: new Map(),
      packets: [],
      activeFrom,
    });
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
      const state = applyDelta(this.initialState, delta, { layoutHash: this.layoutHash });
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
    throw new DecodeError('unknown-type', 0, `join message ${type}`);
  }

  private onPing(from: number, data: Uint8Array, now: number): void {
    const r = this.remotes.get(from);
    const m = decodeFaMessage(data, this.inputBytes);
    if (m.type === 'ping') {
      this.outbox.push({ to: from, channel: 'ping', data: encodeFaPong(m.seq, m.sentAtUs, now) });
    } else if (m.type === 'pong' && r && m.pingSentAtUs / 1000 <= now) r.history.add(now - m.pingSentAtUs / 1000);
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
      r.expected = new DataView(data.buffer, data.byteOffset).getUint32(1);
      for (const id of [...r.early.keys()]) if (id < r.expected) r.early.delete(id);
      this.drain(r);
      return;
    }
    const id = new DataView(data.buffer, data.byteOffset).getUint32(1);
    if (kind !== K_PACKET && kind !== K_NOTICE) throw new DecodeError('unknown-type', 0, `input kind ${kind}`);
    if (r.expected >= 0 && id < r.expected) return;
    if (r.early.size > 100_000) throw new DecodeError('too-large', 0, 'too many packets ahead');
    if (!r.early.has(id)) r.early.set(id, data);
    this.drain(r);
  }

  private drain(r: Remote): void {
    if (r.expected < 0) return;
    for (;;) {
      const data = r.early.get(r.expected);
      if (!data) return;
      r.early.delete(r.expected);
      r.expected++;
      if (data[0] === K_PACKET) {
        const p = decodeMameHubInputPacket(data.subarray(1));
        const last = r.packets[r.packets.length - 1];
        if (p.state.length !== this.ports || p.state.some((s) => s.analogs.length !== 0))
          throw new DecodeError('bad-value', 1, 'packet shape');
        // Assumption 1 of the seed: input times never go back.
        if (last && p.futureInputTime < last.time) throw new DecodeError('bad-value', 5, 'input time went back');
        r.packets.push({ id: p.inputId, time: p.futureInputTime, state: p.state });
        prune(r.packets, this.next);
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
}

function u32msg(type: number, v: number): Uint8Array {
  const m = new Uint8Array(5);
  m[0] = type;
  new DataView(m.buffer).setUint32(1, v);
  return m;
}

function blankState(ports: number): MameInputState {
  return Array.from({ length: ports }, () => ({ defaultMask: 0, currentMask: 0, analogs: [] }));
}

function bytesToMask(b: Uint8Array): number {
  let m = 0;
  for (let i = b.length - 1; i >= 0; i--) m = (m * 256 + b[i]!) >>> 0;
  return m;
}

function stateToBytes(state: MameInputState, inputBytes: number, out: Uint8Array): void {
  for (let p = 0; p < state.length; p++) {
    let m = state[p]!.currentMask;
    for (let k = 0; k < inputBytes; k++) {
      out[p * inputBytes + k] = m & 0xff;
      m >>>= 8;
    }
  }
}

/** Pushes the most recent packet at or before `frame` (if any) onto `out`. */
function pick(packets: readonly Packet[], frame: number, out: MameInputState[]): void {
  for (let i = packets.length - 1; i >= 0; i--) {
    if (packets[i]!.time <= frame) {
      out.push(packets[i]!.state);
      return;
    }
  }
}

/** Drops packets superseded before `frame` (keeps the last one at or before it). */
function prune(packets: Packet[], frame: number): void {
  let keep = 0;
  for (let i = 0; i < packets.length; i++) if (packets[i]!.time <= frame) keep = i;
  if (keep > 0) packets.splice(0, keep);
}

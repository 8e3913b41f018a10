import {
  crc32,
  DecodeError,
  decodeFceuClientText,
  encodeFceuServerInit,
  encodeFceuServerText,
  encodeFceuTcpFrame,
  encodeFceuUdpFrame,
  FCEU_TCP_FRAME_SIZE,
  FCEU_UDP_FRAME_SIZE,
  FCEU_UDP_HEADER_SIZE,
  FCEU_UDP_INPUT_SIZE,
  type FceuFrameData,
  fceuServerTextSize,
  isFceuCommand,
} from '@netplay/protocol';
import type { DirtyPageSet } from '@netplay/state';
import type { ChannelSpec } from '@netplay/transport';
import { LockstepError } from './errors.js';
import { LateJoinDelta } from './late-join-delta.js';
import { type EndReason, Liveness, type LivenessOptions, type LockstepEvent } from './liveness.js';
import { type BufferPool, OutboxPool, readU32BE, readU32LE, writeU32BE } from './pool.js';
import type { Envelope, FrameRequest, LockstepScheduler, StatefulScheduler } from './types.js';

/**
 * Channels of the client-server mode. Frame data travels twice, as FCE Ultra sends it over TCP
 * and UDP: reliably (`frame`) and unreliably (`frame-u`, whichever arrives first wins).
 */
export const CLIENT_SERVER_CHANNELS: readonly ChannelSpec[] = Object.freeze([
  { name: 'frame', kind: 'reliable' },
  { name: 'frame-u', kind: 'unreliable' },
  { name: 'input', kind: 'unreliable' },
  { name: 'control', kind: 'reliable' },
  { name: 'chat', kind: 'reliable' },
  { name: 'sync', kind: 'reliable' },
]);

/** Options shared by {@link ClientServerServer} and {@link ClientServerClient}. */
export interface ClientServerOptions {
  /** This peer's id. */
  readonly id: number;
  /** Ports (players) of the core. */
  readonly ports: number;
  /** Input bytes per port. */
  readonly inputBytes: number;
  /** Frame duration in ms (e.g. 1000/60). */
  readonly frameMs: number;
  /** Time frame 0 is due (server only; default 0). */
  readonly startMs?: number;
  /** Also send frame data unreliably (default true), as FCE Ultra does over UDP. */
  readonly unreliableCopy?: boolean;
  /** State layout hash written into late-join deltas and checked by the joiner (default 0). */
  readonly layoutHash?: bigint;
  /** Page size of late-join deltas (default 4096). */
  readonly pageSize?: number;
  /**
   * Liveness by progress (defaults: 750 / 5000 ms, as @netplay/transport's `DEFAULT_TIMEOUTS`).
   * Server: a client whose input counter stops advancing is `interrupted`, then removed (with
   * quorum; see the README, "Finality and partitions"). Client: a server whose frames stop coming
   * is `interrupted`, then the client ends `host-lost`.
   */
  readonly liveness?: LivenessOptions;
}

/** Server → client on `control`: `0x52, u32 frame (BE)`: you were removed, your port is neutral from `frame`. */
export const REMOVED = 0x52;

/** Watcher → server on `control`: `0x53, u32 frames run (BE)`: how far a watcher (spectator) got. */
export const WATCHER_PROGRESS = 0x53;

/** Frames a watcher may trail the server by (default 300: 5 s at 60 Hz) before it is dropped. */
export const DEFAULT_WATCHER_LAG_FRAMES = 300;

/** A watcher as the server tracks it. */
interface Watcher {
  readonly id: number;
  /** Frames it reported run (its progress); it starts at its sync frame. */
  acked: number;
}

/**
 * Whether a core shape uses FCE Ultra's own wire formats (seed 002: four 1-byte controllers and a
 * command byte). Other shapes use the generic layout documented in the README.
 */
export function isFceuShape(ports: number, inputBytes: number): boolean {
  return ports <= 4 && inputBytes === 1;
}

export function checkShape(o: ClientServerOptions): void {
  if (!Number.isInteger(o.ports) || o.ports < 1 || o.ports > 255)
    throw new LockstepError('bad-argument', `ports must be 1..255, got ${o.ports}`);
  if (!Number.isInteger(o.inputBytes) || o.inputBytes < 1 || o.inputBytes > 1024)
    throw new LockstepError('bad-argument', `inputBytes must be 1..1024, got ${o.inputBytes}`);
  if (!(o.frameMs > 0)) throw new LockstepError('bad-argument', `frameMs must be > 0, got ${o.frameMs}`);
}

/** A chat line as the server relays it. */
export interface ChatLine {
  /** Peer id of the author. */
  readonly from: number;
  /**
   * The line as relayed to every client: `"<from>: "` then the author's text cleaned (NUL and
   * characters above U+00FF become `?`, cut at 200 characters), the whole at most 255 characters.
   */
  readonly text: string;
}

export const GENERIC_FRAME_HEADER = 5;
const putU32 = writeU32BE;
const getU32 = readU32BE;

/** The request object a scheduler reuses from frame to frame. */
export interface MutableRequest {
  frame: number;
  inputs: Uint8Array;
  command: number;
}

/** Checks an FCE Ultra UDP datagram of `size` bytes (length, CRC32) as `decodeFceuUdpPacket` does. */
export function checkUdp(data: Uint8Array, size: number): void {
  if (data.length < FCEU_UDP_HEADER_SIZE)
    throw new DecodeError('truncated', data.length, `FCEU UDP header needs 12 bytes, got ${data.length}`);
  if (crc32(data, 4) !== readU32LE(data, 0)) throw new DecodeError('bad-checksum', 0, 'FCEU UDP CRC32 mismatch');
  if (data.length !== size) throw new DecodeError('bad-length', FCEU_UDP_HEADER_SIZE, 'FCEU UDP data size');
}

/** Chat text as the FCE Ultra codec accepts it: Latin-1 without NUL, at most 255 characters. */
export function cleanText(text: string): string {
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    out += c === 0 || c > 0xff ? '?' : ch;
    if (out.length >= 200) break;
  }
  return out;
}

/**
 * The FCE Ultra server (seed 002): every frame it collates the latest input of every client (the
 * UDP rule: the packet with the highest counter wins) and its own, adds at most one pending
 * command, runs the frame and broadcasts its data. It never waits for clients. It relays chat.
 */
export class ClientServerServer implements LockstepScheduler, StatefulScheduler {
  readonly id: number;
  readonly outbox: Envelope[] = [];
  /** Chat lines seen, in order. */
  readonly chat: ChatLine[] = [];
  /** Messages dropped because they did not decode or broke the protocol. */
  dropped = 0;
  private readonly ports: number;
  private readonly inputBytes: number;
  private readonly frameMs: number;
  private readonly startMs: number;
  private readonly fceu: boolean;
  private readonly udpCopy: boolean;
  private readonly magic: number;
  private localPort: number;
  private next = 0;
  private readonly inputs: Uint8Array;
  private readonly local: Uint8Array;
  private readonly clients = new Map<number, { id: number; port: number; counter: number }>();
  /** The clients again, in insertion order, for iteration without an iterator object. */
  private readonly clientList: { id: number; port: number; counter: number }[] = [];
  private readonly commands: number[] = [];
  private readonly pool: OutboxPool;
  private readonly reliablePool: BufferPool;
  private readonly unreliablePool: BufferPool | undefined;
  private readonly request: MutableRequest;
  private readonly frameData: FceuFrameData = { controllers: new Uint8Array(4), command: 0 };
  private initialState: Uint8Array | undefined;
  /** Late joiners' page deltas against the power-on state (issue 16: `DeltaBase`, dirty pages). */
  private readonly deltas: LateJoinDelta;
  private readonly lateJoiners: number[] = [];
  /** Watchers (spectators): they get the state and every frame, and affect nothing. */
  private readonly watchers: Watcher[] = [];
  private readonly maxWatcherLag: number;
  /** Interruptions, removals and the end (see {@link LockstepEvent}); the driver empties it. */
  readonly events: LockstepEvent[] = [];
  private readonly live: Liveness;

  constructor(
    options: ClientServerOptions & {
      /** The server's own player port, or -1 for a server without a player (default 0). */
      readonly port?: number;
      /** The UDP magic number (FCE Ultra: as random as possible; pass one from a seeded PRNG). */
      readonly magic?: number;
      /**
       * Frames a watcher ({@link ClientServerServer.addWatcher}) may trail the server by, by its own
       * progress reports, before it is dropped (default {@link DEFAULT_WATCHER_LAG_FRAMES}): the bound
       * on the frames queued for a watcher that cannot keep up.
       */
      readonly maxWatcherLagFrames?: number;
    },
  ) {
    checkShape(options);
    this.id = options.id;
    this.ports = options.ports;
    this.inputBytes = options.inputBytes;
    this.frameMs = options.frameMs;
    this.startMs = options.startMs ?? 0;
    this.fceu = isFceuShape(options.ports, options.inputBytes);
    this.udpCopy = options.unreliableCopy !== false;
    this.magic = (options.magic ?? 0x4e504c53) >>> 0;
    this.localPort = options.port ?? 0;
    this.deltas = new LateJoinDelta(options.layoutHash ?? 0n, options.pageSize ?? 4096);
    this.maxWatcherLag = options.maxWatcherLagFrames ?? DEFAULT_WATCHER_LAG_FRAMES;
    if (!(this.maxWatcherLag >= 1))
      throw new LockstepError('bad-argument', `maxWatcherLagFrames must be >= 1, got ${this.maxWatcherLag}`);
    if (this.localPort >= this.ports) throw new LockstepError('bad-argument', `port ${this.localPort} >= ports`);
    this.inputs = new Uint8Array(this.ports * this.inputBytes);
    this.local = new Uint8Array(this.inputBytes);
    this.pool = new OutboxPool(this.outbox);
    this.reliablePool = this.pool.buffers(this.fceu ? FCEU_TCP_FRAME_SIZE : GENERIC_FRAME_HEADER + this.inputs.length);
    this.unreliablePool = this.fceu && this.udpCopy ? this.pool.buffers(FCEU_UDP_FRAME_SIZE) : undefined;
    this.request = { frame: 0, inputs: this.inputs, command: 0 };
    this.live = new Liveness(options.liveness, this.events);
  }

  get port(): number {
    return this.localPort;
  }

  get nextFrame(): number {
    return this.next;
  }

  /** Why the server ended (it runs no more frames), or `undefined` while it runs. */
  get endReason(): EndReason | undefined {
    return this.live.ended;
  }

  /** The last frame final for every member: every frame run (-1 none); the server only runs frames while its group has quorum. */
  get finalFrame(): number {
    return this.live.ended ? this.live.finalFrame : this.next - 1;
  }

  /** Accepts peer `peer` as the player on `port` and sends it the init message. */
  addClient(peer: number, port: number): void {
    if (!Number.isInteger(port) || port < 0 || port >= this.ports || port === this.localPort)
      throw new LockstepError('bad-argument', `port ${port} is not a free player port`);
    for (const c of this.clientList)
      if (c.port === port) throw new LockstepError('bad-argument', `port ${port} is taken`);
    const old = this.clients.get(peer);
    if (old) this.clientList.splice(this.clientList.indexOf(old), 1);
    const client = { id: peer, port, counter: -1 };
    this.clients.set(peer, client);
    this.clientList.push(client);
    this.live.add(peer);
    let data: Uint8Array;
    if (this.fceu) {
      data = new Uint8Array(12);
      encodeFceuServerInit({ udpPort: 0, player: port, magic: this.magic }, data);
    } else {
      data = new Uint8Array(8);
      putU32(data, 0, port);
      putU32(data, 4, this.magic);
    }
    this.outbox.push({ to: peer, channel: 'control', data });
    // A client added once the game runs gets the state at the start of the next frame (a page
    // delta against the power-on state) and every frame from there.
    if (this.next > 0) this.lateJoiners.push(peer);
  }

  /**
   * Adds peer `peer` as a watcher (a spectator, at any time): it gets, on `sync`, the state at the
   * start of the next frame S (a page delta against the power-on state) and then every frame's data
   * from S, like a late-joining client, but it has no port, is never waited for, and its inputs,
   * chat and commands are dropped: it cannot affect the game. It reports its progress
   * (`0x53, u32 frames run` on `control`); one trailing the server by more than
   * `maxWatcherLagFrames` is dropped: removed, told so (`0x52, u32 frame`) and reported as a
   * `removed` event naming it.
   */
  addWatcher(peer: number): void {
    if (this.clients.has(peer) || this.watcherOf(peer) !== undefined)
      throw new LockstepError('bad-argument', `peer ${peer} is already a client or a watcher`);
    this.watchers.push({ id: peer, acked: this.next });
    this.lateJoiners.push(peer);
  }

  /** Forgets a watcher (no-op for an unknown one). */
  removeWatcher(peer: number): void {
    const w = this.watcherOf(peer);
    if (w !== undefined) this.watchers.splice(this.watchers.indexOf(w), 1);
  }

  /** Watchers now. */
  get watcherCount(): number {
    return this.watchers.length;
  }

  private watcherOf(peer: number): Watcher | undefined {
    for (let i = 0; i < this.watchers.length; i++) if (this.watchers[i]!.id === peer) return this.watchers[i];
    return undefined;
  }

  wantsState(frame: number): boolean {
    return (frame === 0 && this.initialState === undefined) || (frame === this.next && this.lateJoiners.length > 0);
  }

  storeState(frame: number, state: Uint8Array, dirty?: DirtyPageSet): void {
    if (frame === 0 && this.initialState === undefined) {
      this.initialState = state;
      this.deltas.setBase(state);
    }
    if (this.lateJoiners.length === 0 || frame !== this.next || !this.initialState) return;
    const delta = this.deltas.delta(state, dirty);
    const data = new Uint8Array(4 + delta.length);
    putU32(data, 0, frame);
    data.set(delta, 4);
    for (const peer of this.lateJoiners.splice(0))
      if (this.clients.has(peer) || this.watcherOf(peer) !== undefined)
        this.outbox.push({ to: peer, channel: 'sync', data });
  }

  takeLoad(): undefined {
    return undefined;
  }

  /** Forgets a client; its port reads as neutral from the next frame on. */
  removeClient(peer: number): void {
    const c = this.clients.get(peer);
    if (!c) return;
    this.inputs.fill(0, c.port * this.inputBytes, (c.port + 1) * this.inputBytes);
    this.clients.delete(peer);
    this.clientList.splice(this.clientList.indexOf(c), 1);
    this.live.remove(peer);
  }

  /** Queues a machine command (FCE Ultra command byte); it applies on a coming frame, one per frame. */
  command(code: number): void {
    if (!isFceuCommand(code) || code === 0) throw new LockstepError('bad-argument', `unknown command ${code}`);
    this.commands.push(code);
  }

  /** Sends a chat line from the server's player to every client. */
  say(text: string): void {
    this.relay(this.id, text);
  }

  receive(from: number, channel: string, data: Uint8Array, now = 0): void {
    this.pool.recycle();
    const c = this.clients.get(from);
    if (!c || this.live.ended) {
      const w = c === undefined && !this.live.ended ? this.watcherOf(from) : undefined;
      // A watcher's progress; anything else of a watcher (inputs, chat, commands) affects nothing.
      if (w !== undefined && channel === 'control' && data.length === 5 && data[0] === WATCHER_PROGRESS) {
        const ran = getU32(data, 1);
        if (ran <= this.next) {
          if (ran > w.acked) w.acked = ran;
          return;
        }
      }
      this.dropped++;
      return;
    }
    try {
      if (channel === 'input') {
        // Decoded in place (the protocol's decoders return new objects): nothing is allocated.
        let counter: number;
        let at: number;
        if (this.fceu) {
          checkUdp(data, FCEU_UDP_INPUT_SIZE);
          if (readU32LE(data, 4) !== this.magic) {
            this.dropped++;
            return;
          }
          counter = readU32LE(data, 8);
          at = FCEU_UDP_INPUT_SIZE - 1;
        } else {
          if (data.length !== 4 + this.inputBytes) throw new DecodeError('bad-length', 0, 'input size');
          counter = getU32(data, 0);
          at = 4;
        }
        // Seed 002: use the packet with the highest counter, and remember it. A replayed or older
        // packet is not life; a new counter is (the client delivers its input).
        if (counter <= c.counter) return;
        c.counter = counter;
        this.live.progress(from, now);
        const o = c.port * this.inputBytes;
        for (let i = 0; i < this.inputBytes; i++) this.inputs[o + i] = data[at + i]!;
      } else if (channel === 'chat') {
        this.relay(from, decodeFceuClientText(data));
        this.live.heard(from, now);
      } else if (channel === 'control') {
        if (data.length !== 1 || !isFceuCommand(data[0]!) || data[0] === 0)
          throw new DecodeError('bad-value', 0, 'command');
        this.commands.push(data[0]!);
        this.live.heard(from, now);
      } else this.dropped++;
    } catch (e) {
      if (e instanceof DecodeError) this.dropped++;
      else throw e;
    }
  }

  setLocalInput(input: Uint8Array): void {
    if (input.length !== this.inputBytes) throw new LockstepError('bad-argument', 'input size');
    this.local.set(input);
  }

  tick(now = 0): void {
    this.pool.recycle();
    if (this.live.needsCheck(now)) this.checkLiveness(now);
  }

  dueAt(): number {
    return this.live.ended ? Infinity : this.startMs + this.next * this.frameMs;
  }

  nextWakeAt(now = 0): number {
    return this.live.enabled && !this.live.ended ? this.live.wakeAt(now) : Infinity;
  }

  /**
   * The server needs every client's input every frame: a client whose counter has not advanced
   * for `interruptMs` is `interrupted` and out of the group, for `disconnectMs` removed (if the
   * group without it has quorum). Without quorum the server runs no frame; after `disconnectMs`
   * without it, it ends `partitioned`.
   */
  private checkLiveness(now: number): void {
    const live = this.live;
    // Nobody is waited on before the game starts.
    if (now < this.startMs) {
      live.due = this.startMs;
      return;
    }
    for (let i = 0; i < this.clientList.length; i++) {
      const w = live.get(this.clientList[i]!.id);
      if (w) live.waiting(w, true, now);
    }
    live.check(now);
    const lost = live.lost(now);
    if (lost && live.hasQuorum(now, true, this.id, lost.id)) this.expel(lost.id, now);
    if (live.hasQuorum(now, true, this.id)) live.noQuorumSince = -1;
    else if (live.noQuorumSince < 0) live.noQuorumSince = now;
    else if (now >= live.noQuorumSince + live.disconnectMs) live.end('partitioned', this.next - 1, now);
    live.checked(now);
  }

  /** Host decision: removes a stalled client at the next frame and tells it so. */
  private expel(peer: number, now: number): void {
    const frame = this.next;
    this.removeClient(peer);
    const data = new Uint8Array(5);
    data[0] = REMOVED;
    putU32(data, 1, frame);
    this.outbox.push({ to: peer, channel: 'control', data });
    this.live.removed(peer, frame, now);
  }

  /**
   * The next frame, if due. The returned object (and its `inputs`) is reused by the next call:
   * copy what you keep (see `logEntry`).
   */
  poll(now: number): FrameRequest | undefined {
    this.pool.recycle();
    if (now < this.dueAt()) return undefined;
    if (this.live.enabled) {
      if (this.live.needsCheck(now)) this.checkLiveness(now);
      // Without quorum no frame is final: the server does not play on alone.
      if (this.live.ended || this.live.noQuorumSince >= 0) return undefined;
    }
    if (this.localPort >= 0) this.inputs.set(this.local, this.localPort * this.inputBytes);
    const frame = this.next++;
    const command = this.commands.length > 0 ? this.commands.shift()! : 0;
    this.broadcastFrame(frame, command);
    if (this.watchers.length > 0) this.dropSlowWatchers(frame, now);
    const r = this.request;
    r.frame = frame;
    r.command = command;
    return r;
  }

  /** Drops every watcher that trails frame `frame` by more than `maxWatcherLagFrames` (its queue's bound). */
  private dropSlowWatchers(frame: number, now: number): void {
    for (let i = this.watchers.length - 1; i >= 0; i--) {
      const w = this.watchers[i]!;
      if (frame - w.acked < this.maxWatcherLag) continue;
      this.watchers.splice(i, 1);
      const data = new Uint8Array(5);
      data[0] = REMOVED;
      putU32(data, 1, frame + 1);
      this.outbox.push({ to: w.id, channel: 'control', data });
      this.live.removed(w.id, frame + 1, now);
    }
  }

  private broadcastFrame(frame: number, command: number): void {
    let reliable: Uint8Array;
    let unreliable: Uint8Array | undefined;
    if (this.fceu) {
      const fd = this.frameData;
      fd.controllers.fill(0);
      fd.controllers.set(this.inputs);
      fd.command = command;
      reliable = this.reliablePool.take();
      encodeFceuTcpFrame(frame, fd, reliable);
      if (this.unreliablePool) {
        unreliable = this.unreliablePool.take();
        encodeFceuUdpFrame(this.magic, frame, fd, unreliable);
      }
    } else {
      reliable = this.reliablePool.take();
      putU32(reliable, 0, frame);
      reliable[4] = command;
      reliable.set(this.inputs, GENERIC_FRAME_HEADER);
      if (this.udpCopy) unreliable = reliable;
    }
    for (let i = 0; i < this.clientList.length; i++) {
      const peer = this.clientList[i]!.id;
      this.pool.push(peer, 'frame', reliable);
      if (unreliable) this.pool.push(peer, 'frame-u', unreliable);
    }
    // Watchers get the reliable copy only: they are never waited for, so nothing is gained by racing it.
    for (let i = 0; i < this.watchers.length; i++) this.pool.push(this.watchers[i]!.id, 'frame', reliable);
  }

  private relay(from: number, text: string): void {
    const line = `${from}: ${cleanText(text)}`.slice(0, 255);
    this.chat.push({ from, text: line });
    const data = new Uint8Array(fceuServerTextSize(line));
    encodeFceuServerText(line, data);
    for (const peer of this.clients.keys()) this.outbox.push({ to: peer, channel: 'chat', data });
  }
}

import {
  DecodeError,
  decodeFceuFrameData,
  decodeFceuServerInit,
  decodeFceuServerTcpMessage,
  EncodeError,
  encodeFceuClientText,
  encodeFceuUdpInput,
  FCEU_TCP_FRAME_SIZE,
  FCEU_TCP_HEADER_SIZE,
  FCEU_TEXT_COUNTER,
  FCEU_UDP_FRAME_SIZE,
  FCEU_UDP_HEADER_SIZE,
  FCEU_UDP_INPUT_SIZE,
  type FceuFrameData,
  isFceuCommand,
} from '@netplay/protocol';
import { applyDelta, DeltaError } from '@netplay/state';
import {
  type ClientServerOptions,
  checkShape,
  checkUdp,
  cleanText,
  GENERIC_FRAME_HEADER,
  isFceuShape,
  type MutableRequest,
  REMOVED,
  WATCHER_PROGRESS,
} from './client-server.js';
import { LockstepError } from './errors.js';
import { type EndReason, Liveness, type LockstepEvent } from './liveness.js';
import { type BufferPool, OutboxPool, readU32BE, readU32LE, writeU32BE } from './pool.js';
import type { Envelope, FrameRequest, LockstepScheduler, StatefulScheduler } from './types.js';

const putU32 = writeU32BE;
const getU32 = readU32BE;

/** Slots of the client's ring of early frames (frames further ahead go to a map). */
const EARLY_RING = 64;

/** A watcher reports its progress every this many frames (and while it waits, as a keepalive). */
export const WATCHER_PROGRESS_EVERY = 8;

interface EarlyFrame {
  frame: number;
  readonly inputs: Uint8Array;
  command: number;
}

/**
 * An FCE Ultra client (seed 002): sends its controller to the server on every change and every
 * frame, and runs frame N only once the server's data for frame N arrived (it blocks). Duplicates
 * are discarded; frames that arrive early are kept until their turn.
 */
export class ClientServerClient implements LockstepScheduler, StatefulScheduler {
  readonly id: number;
  readonly outbox: Envelope[] = [];
  /** Chat lines received from the server, in order (already prefixed with the author's id). */
  readonly chat: string[] = [];
  /** Messages dropped because they did not decode or broke the protocol. */
  dropped = 0;
  private readonly server: number;
  private readonly ports: number;
  private readonly inputBytes: number;
  private readonly frameMs: number;
  private readonly fceu: boolean;
  private localPort = -1;
  private magic = 0;
  private next = 0;
  private counter = 0;
  private lastRunAt = Infinity;
  private readonly local: Uint8Array;
  /** Frames that arrived before their turn, at `frame % EARLY_RING` (those within reach of `next`). */
  private readonly early: EarlyFrame[] = [];
  /** Frames that arrived even earlier (rare: copies kept in a map). */
  private readonly farEarly = new Map<number, { inputs: Uint8Array; command: number }>();
  private readonly fd: FceuFrameData = { controllers: new Uint8Array(4), command: 0 };
  private readonly pool: OutboxPool;
  private readonly inputPool: BufferPool;
  private readonly request: MutableRequest;
  private readonly inputs: Uint8Array;
  private readonly layoutHash: bigint;
  private initialState: Uint8Array | undefined;
  private load: { frame: number; state: Uint8Array } | undefined;
  private synced = false;
  /** Interruptions of the server and the end (see {@link LockstepEvent}); the driver empties it. */
  readonly events: LockstepEvent[] = [];
  private readonly live: Liveness;
  /** Whether the server has spoken (init or a frame): liveness starts then. */
  private started = false;
  private lastSentAt = -Infinity;
  private readonly keepaliveMs: number;
  /** A watcher (spectator): no port, no input; it starts at the server's `sync` and reports its progress. */
  readonly watch: boolean;
  private readonly progressPool: BufferPool | undefined;

  constructor(
    options: ClientServerOptions & {
      /** Peer id of the server. */
      readonly server: number;
      /**
       * Watch instead of play (default false): for a server that added this peer with `addWatcher`.
       * It runs nothing before the server's `sync`, sends no input, and reports its progress
       * (`0x53, u32 frames run` on `control`) every 8 frames and while it waits.
       */
      readonly watch?: boolean;
    },
  ) {
    checkShape(options);
    this.id = options.id;
    this.server = options.server;
    this.ports = options.ports;
    this.inputBytes = options.inputBytes;
    this.frameMs = options.frameMs;
    this.fceu = isFceuShape(options.ports, options.inputBytes);
    this.local = new Uint8Array(this.inputBytes);
    this.inputs = new Uint8Array(this.ports * this.inputBytes);
    this.layoutHash = options.layoutHash ?? 0n;
    for (let i = 0; i < EARLY_RING; i++)
      this.early.push({ frame: -1, inputs: new Uint8Array(this.inputs.length), command: 0 });
    this.pool = new OutboxPool(this.outbox);
    this.inputPool = this.pool.buffers(this.fceu ? FCEU_UDP_INPUT_SIZE : 4 + this.inputBytes);
    this.watch = options.watch === true;
    this.progressPool = this.watch ? this.pool.buffers(5) : undefined;
    this.request = { frame: 0, inputs: this.inputs, command: 0 };
    this.live = new Liveness(options.liveness, this.events);
    // While it waits for frames, the client repeats its input (a new counter) so that a server
    // short of quorum hears it is alive.
    this.keepaliveMs = Math.min(250, this.live.interruptMs / 3);
  }

  /** Why the client ended (it runs no more frames), or `undefined` while it runs. */
  get endReason(): EndReason | undefined {
    return this.live.ended;
  }

  /**
   * The last final frame: every frame run (-1 before the first: a late joiner's frames before its
   * sync frame were final but it never ran them), until a removal says where its finals stop.
   */
  get finalFrame(): number {
    if (this.live.ended) return this.live.finalFrame;
    return this.lastRunAt === Infinity ? -1 : this.next - 1;
  }

  wantsState(frame: number): boolean {
    return frame === 0 && this.initialState === undefined;
  }

  storeState(frame: number, state: Uint8Array): void {
    if (frame === 0 && this.initialState === undefined) this.initialState = state;
  }

  takeLoad():
    | {
        /** The server frame the state is at the start of (from the server's `sync` message): the next frame this client runs. */
        frame: number;
        /** The server's state at the start of `frame`, rebuilt from its page delta against power-on (the core's state size). */
        state: Uint8Array;
      }
    | undefined {
    const l = this.load;
    this.load = undefined;
    return l;
  }

  get port(): number {
    return this.localPort;
  }

  get nextFrame(): number {
    return this.next;
  }

  /** Asks the server to apply a machine command on a coming frame. */
  requestCommand(code: number): void {
    if (!isFceuCommand(code) || code === 0) throw new LockstepError('bad-argument', `unknown command ${code}`);
    this.outbox.push({ to: this.server, channel: 'control', data: Uint8Array.of(code) });
  }

  /** Sends a chat line (Latin-1; other characters become `?`; at most 200 characters). */
  say(text: string): void {
    const t = cleanText(text);
    const data = new Uint8Array(t.length + 1);
    encodeFceuClientText(t, data);
    this.outbox.push({ to: this.server, channel: 'chat', data });
  }

  receive(from: number, channel: string, data: Uint8Array, now: number): void {
    this.pool.recycle();
    if (from !== this.server || this.live.ended) {
      this.dropped++;
      return;
    }
    try {
      if (channel === 'frame' || channel === 'frame-u') this.onFrame(channel, data, now);
      else if (channel === 'sync') {
        // Late join: the state at the start of frame S, as a page delta against power-on.
        if (this.synced || this.next !== 0 || !this.initialState || data.length < 4)
          throw new DecodeError('bad-value', 0, 'unexpected sync');
        const frame = getU32(data, 0);
        // The state keeps the core's size (the power-on state's): a delta announcing more is refused
        // before anything is allocated (a hostile server cannot make us reserve a huge target).
        const state = applyDelta(this.initialState, data.subarray(4), {
          layoutHash: this.layoutHash,
          maxTargetBytes: this.initialState.length,
        });
        this.synced = true;
        this.load = { frame, state };
        this.next = frame;
        if (!this.started) this.start();
        for (const e of this.early) if (e.frame < frame) e.frame = -1;
        for (const f of [...this.farEarly.keys()]) if (f < frame) this.farEarly.delete(f);
      } else if (channel === 'control') {
        if (data.length === 5 && data[0] === REMOVED) {
          // The server removed us: our port is neutral from frame R; frames before it are final.
          const frame = getU32(data, 1);
          this.live.end('removed', Math.min(this.next, frame) - 1, now);
          return;
        }
        if (this.watch) throw new DecodeError('bad-value', 0, 'a watcher gets no init');
        if (this.fceu) {
          const init = decodeFceuServerInit(data);
          this.localPort = init.player;
          this.magic = init.magic;
        } else {
          if (data.length !== 8) throw new DecodeError('bad-length', 0, 'init is 8 bytes');
          const port = getU32(data, 0);
          if (port >= this.ports) throw new DecodeError('bad-value', 0, 'port');
          this.localPort = port;
          this.magic = getU32(data, 4);
        }
        this.start();
        this.sendInput(now);
      } else if (channel === 'chat') {
        const m = decodeFceuServerTcpMessage(data);
        if (m.kind === 'text') this.chat.push(m.text);
        else this.dropped++;
      } else this.dropped++;
    } catch (e) {
      if (e instanceof DecodeError || e instanceof EncodeError || e instanceof DeltaError) this.dropped++;
      else throw e;
    }
  }

  setLocalInput(input: Uint8Array, now = 0): void {
    this.pool.recycle();
    if (input.length !== this.inputBytes) throw new LockstepError('bad-argument', 'input size');
    let changed = false;
    for (let i = 0; i < input.length; i++) if (input[i] !== this.local[i]) changed = true;
    this.local.set(input);
    if (changed && !this.live.ended) this.sendInput(now);
  }

  tick(now = 0): void {
    this.pool.recycle();
    if (!this.started || this.live.ended || !this.live.enabled) return;
    const live = this.live;
    if (live.needsCheck(now)) {
      const w = live.get(this.server)!;
      live.waiting(w, true, now);
      live.check(now);
      // The client waits on the server's frames: none for `disconnectMs` and the host is lost.
      if (live.lost(now)) {
        live.end('host-lost', this.next - 1, now);
        return;
      }
      live.checked(now);
    }
    if (now - this.lastSentAt >= this.keepaliveMs) {
      if (this.watch) this.sendProgress(now);
      else this.sendInput(now);
    }
  }

  dueAt(): number {
    return this.lastRunAt + this.frameMs;
  }

  nextWakeAt(now = 0): number {
    if (!this.started || this.live.ended || !this.live.enabled) return Infinity;
    const keepalive = this.lastSentAt + this.keepaliveMs;
    return Math.min(this.live.wakeAt(now), keepalive > now ? keepalive : now + this.keepaliveMs);
  }

  /** The server spoke: its frames are waited for from now on. */
  private start(): void {
    if (this.started) return;
    this.started = true;
    this.live.add(this.server);
  }

  /**
   * The next frame, once the server's data for it arrived. The returned object (and its
   * `inputs`) is reused by the next call: copy what you keep (see `logEntry`).
   */
  poll(now: number): FrameRequest | undefined {
    this.pool.recycle();
    if (this.load || this.live.ended || (this.watch && !this.synced)) return undefined;
    let command: number;
    const slot = this.early[this.next % EARLY_RING]!;
    if (slot.frame === this.next) {
      slot.frame = -1;
      if (this.farEarly.size > 0) this.farEarly.delete(this.next);
      this.inputs.set(slot.inputs);
      command = slot.command;
    } else {
      const f = this.farEarly.size > 0 ? this.farEarly.get(this.next) : undefined;
      if (!f) return undefined;
      this.farEarly.delete(this.next);
      this.inputs.set(f.inputs);
      command = f.command;
    }
    const frame = this.next++;
    this.lastRunAt = now;
    if (!this.watch) this.sendInput(now);
    else if (this.next % WATCHER_PROGRESS_EVERY === 0) this.sendProgress(now);
    const r = this.request;
    r.frame = frame;
    r.command = command;
    return r;
  }

  private onFrame(channel: string, data: Uint8Array, now: number): void {
    // Decoded in place, into reused objects (the protocol's message decoders allocate).
    let frame: number;
    let command: number;
    let inputs: Uint8Array;
    let at: number;
    if (this.fceu) {
      const fd = this.fd;
      if (channel === 'frame') {
        // As decodeFceuServerTcpMessage: a text (counter 0xFFFFFFFF) is not a frame; 9 bytes exactly.
        if (data.length < FCEU_TCP_HEADER_SIZE) throw new DecodeError('truncated', data.length, 'FCEU TCP message');
        if (readU32LE(data, 0) === FCEU_TEXT_COUNTER)
          throw new DecodeError('bad-value', 0, 'text on the frame channel');
        if (data.length !== FCEU_TCP_FRAME_SIZE) throw new DecodeError('bad-length', 0, 'FCEU TCP frame size');
        decodeFceuFrameData(data, FCEU_TCP_HEADER_SIZE, fd);
        frame = readU32LE(data, 0);
      } else {
        checkUdp(data, FCEU_UDP_FRAME_SIZE);
        decodeFceuFrameData(data, FCEU_UDP_HEADER_SIZE, fd);
        if (readU32LE(data, 4) !== this.magic) {
          this.dropped++;
          return;
        }
        frame = readU32LE(data, 8);
      }
      command = fd.command;
      inputs = fd.controllers;
      at = 0;
    } else {
      if (data.length !== GENERIC_FRAME_HEADER + this.inputs.length)
        throw new DecodeError('bad-length', 0, 'frame size');
      frame = getU32(data, 0);
      command = data[4]!;
      inputs = data;
      at = GENERIC_FRAME_HEADER;
    }
    // Duplicates (the other channel's copy) and frames already run are discarded.
    if (frame < this.next) return;
    const n = this.inputs.length;
    if (!this.started) this.start();
    if (frame < this.next + EARLY_RING) {
      const slot = this.early[frame % EARLY_RING]!;
      if (slot.frame === frame) return;
      // A new frame of the server: what the client waits on.
      this.live.progress(this.server, now);
      slot.frame = frame;
      slot.command = command;
      for (let i = 0; i < n; i++) slot.inputs[i] = inputs[at + i]!;
      return;
    }
    if (this.farEarly.has(frame)) return;
    if (frame > this.next + 1_000_000) throw new DecodeError('bad-value', 0, 'frame too far ahead');
    this.live.progress(this.server, now);
    this.farEarly.set(frame, { inputs: inputs.slice(at, at + n), command });
  }

  /** A watcher's progress report: `0x53, u32 frames run`. */
  private sendProgress(now: number): void {
    if (this.progressPool === undefined) return;
    this.lastSentAt = now;
    const data = this.progressPool.take();
    data[0] = WATCHER_PROGRESS;
    putU32(data, 1, this.next);
    this.pool.push(this.server, 'control', data);
  }

  private sendInput(now: number): void {
    if (this.localPort < 0) return;
    this.lastSentAt = now;
    const counter = this.counter++;
    const data = this.inputPool.take();
    if (this.fceu) {
      encodeFceuUdpInput(this.magic, counter, this.local[0]!, data);
    } else {
      putU32(data, 0, counter);
      data.set(this.local, 4);
    }
    this.pool.push(this.server, 'input', data);
  }
}

import { encodeFceuTcpFrame, FCEU_TCP_FRAME_SIZE, type FceuFrameData } from '@netplay/protocol';
import type { DirtyPageSet } from '@netplay/state';
import {
  DEFAULT_WATCHER_LAG_FRAMES,
  GENERIC_FRAME_HEADER,
  isFceuShape,
  REMOVED,
  WATCHER_PROGRESS,
} from './client-server.js';
import { LockstepError } from './errors.js';
import { LateJoinDelta } from './late-join-delta.js';
import { type BufferPool, OutboxPool, readU32BE, writeU32BE } from './pool.js';
import type { Envelope } from './types.js';

/** Options of {@link WatcherStream}. */
export interface WatcherStreamOptions {
  /** Ports of the frames (every player's). */
  readonly ports: number;
  /** Input bytes per port. */
  readonly inputBytes: number;
  /** The power-on state every delta is made against (kept by reference). */
  readonly initialState: Uint8Array;
  /** Layout hash written into the deltas (default 0). */
  readonly layoutHash?: bigint;
  /** Page size of the deltas (default 4096). */
  readonly pageSize?: number;
  /** Frames a watcher may trail the stream by before it is dropped (default {@link DEFAULT_WATCHER_LAG_FRAMES}). */
  readonly maxWatcherLagFrames?: number;
}

/**
 * Watchers (spectators) of a game whose frames this peer runs with every input (a P2P host: its
 * frames are final for everyone), on the client-server wire so that a `ClientServerClient` with
 * `watch: true` runs them: a watcher added at frame S gets `sync` (`u32 S` + the page delta of the
 * state at the start of S against the power-on state) and then each frame's data (`frame`: FCE
 * Ultra's TCP frame for ≤ 4 one-byte ports, else `u32 frame, u8 command, inputs`) once it ran here.
 * It reports its progress (`0x53, u32 frames run` on `control`); one trailing by more than
 * `maxWatcherLagFrames` is dropped (`0x52, u32 frame` to it, and listed by {@link frameRan}).
 * Sans-I/O: the caller sends and empties {@link outbox} (envelopes and buffers are reused
 * once it is empty, as a scheduler's) and feeds
 * {@link receive}.
 */
export class WatcherStream {
  /** Messages to send, each to one watcher; emptied by the caller. */
  readonly outbox: Envelope[] = [];
  private readonly watchers: { id: number; acked: number }[] = [];
  private readonly fceu: boolean;
  private readonly inputBytes: number;
  private readonly ports: number;
  private readonly pool: OutboxPool;
  private readonly framePool: BufferPool;
  private readonly frameData: FceuFrameData = { controllers: new Uint8Array(4), command: 0 };
  private readonly deltas: LateJoinDelta;
  private readonly maxLag: number;
  private next = 0;

  constructor(options: WatcherStreamOptions) {
    this.ports = options.ports;
    this.inputBytes = options.inputBytes;
    this.fceu = isFceuShape(options.ports, options.inputBytes);
    this.pool = new OutboxPool(this.outbox);
    this.framePool = this.pool.buffers(
      this.fceu ? FCEU_TCP_FRAME_SIZE : GENERIC_FRAME_HEADER + options.ports * options.inputBytes,
    );
    this.deltas = new LateJoinDelta(options.layoutHash ?? 0n, options.pageSize ?? 4096);
    this.deltas.setBase(options.initialState);
    this.maxLag = options.maxWatcherLagFrames ?? DEFAULT_WATCHER_LAG_FRAMES;
    if (!(this.maxLag >= 1))
      throw new LockstepError('bad-argument', `maxWatcherLagFrames must be >= 1, got ${this.maxLag}`);
  }

  /** Watchers now. */
  get count(): number {
    return this.watchers.length;
  }

  /**
   * Adds watcher `id` at frame `frame`, whose starting state is `state` (the state at the start of
   * `frame`: the caller's core between frames); `dirty` as `DeltaBase.pageDelta` takes it.
   */
  addWatcher(id: number, frame: number, state: Uint8Array, dirty?: DirtyPageSet): void {
    for (const w of this.watchers) if (w.id === id) throw new LockstepError('bad-argument', `watcher ${id} exists`);
    if (frame < this.next) throw new LockstepError('bad-argument', `frame ${frame} already streamed`);
    this.pool.recycle();
    const delta = this.deltas.delta(state, dirty);
    const data = new Uint8Array(4 + delta.length);
    writeU32BE(data, 0, frame);
    data.set(delta, 4);
    this.watchers.push({ id, acked: frame });
    this.outbox.push({ to: id, channel: 'sync', data });
  }

  /** Forgets watcher `id` (no-op if unknown). */
  removeWatcher(id: number): void {
    const i = this.watchers.findIndex((w) => w.id === id);
    if (i >= 0) this.watchers.splice(i, 1);
  }

  /** A message from watcher `id`: its progress report; false if it is not one (the caller drops it). */
  receive(id: number, channel: string, data: Uint8Array): boolean {
    if (channel !== 'control' || data.length !== 5 || data[0] !== WATCHER_PROGRESS) return false;
    const w = this.watchers.find((x) => x.id === id);
    if (w === undefined) return false;
    const ran = readU32BE(data, 1);
    if (ran > this.next) return false;
    if (ran > w.acked) w.acked = ran;
    return true;
  }

  /**
   * Frame `frame` ran here with `inputs` (every port's) and `command`: its data goes to every
   * watcher; returns the watchers dropped for trailing too far (told so), or an empty array.
   */
  frameRan(frame: number, inputs: Uint8Array, command = 0): readonly number[] {
    if (inputs.length !== this.ports * this.inputBytes) throw new LockstepError('bad-argument', 'inputs size');
    this.next = frame + 1;
    if (this.watchers.length === 0) return NONE;
    this.pool.recycle();
    const data = this.framePool.take();
    if (this.fceu) {
      const fd = this.frameData;
      fd.controllers.fill(0);
      fd.controllers.set(inputs);
      fd.command = command;
      encodeFceuTcpFrame(frame, fd, data);
    } else {
      writeU32BE(data, 0, frame);
      data[4] = command;
      data.set(inputs, GENERIC_FRAME_HEADER);
    }
    let dropped: number[] | undefined;
    for (let i = this.watchers.length - 1; i >= 0; i--) {
      const w = this.watchers[i]!;
      if (frame < w.acked) continue;
      if (frame - w.acked >= this.maxLag) {
        this.watchers.splice(i, 1);
        const notice = new Uint8Array(5);
        notice[0] = REMOVED;
        writeU32BE(notice, 1, frame);
        this.outbox.push({ to: w.id, channel: 'control', data: notice });
        dropped ??= [];
        dropped.push(w.id);
        continue;
      }
      this.pool.push(w.id, 'frame', data);
    }
    return dropped ?? NONE;
  }
}

const NONE: readonly number[] = Object.freeze([]);

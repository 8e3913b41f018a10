import type { FrameAdvanceEvent } from './frame-advance-wire.js';
import { PingHistory, type PingHistoryOptions } from './latency.js';

/** Frames ahead of `next` whose events live in the ring (events further ahead go to a map). */
const EVENT_RING = 256;

/** A reused event (its `input` is its own buffer). */
export interface Ev {
  frame: number;
  key: number;
  client: number;
  port: number;
  readonly input: Uint8Array;
}

/** The events of one frame, in the ring. */
interface FrameSlot {
  frame: number;
  readonly list: Ev[];
}

/** Another peer as a frame-advance peer tracks it. */
export interface Remote {
  readonly id: number;
  readonly history: PingHistory;
  advanced: number;
  maxOneWay: number;
  /** The port it drives (-1 if unknown). */
  port: number;
  /** The port of its events (-1 before the first one). */
  portSeen: number;
  /** After a departure: the last frame its events count for (`Infinity` while it plays). */
  cut: number;
  /** After a departure: the port that reads neutral from frame `cut + 1` on (-1: none). */
  neutralPort: number;
}

/** A remote driving `port` (-1 if unknown), advanced to `advanced`, with its own ping history (`initialOneWayMs`: a known one-way time). */
export function newRemote(
  id: number,
  port: number,
  advanced: number,
  history: PingHistoryOptions,
  initialOneWayMs?: number,
): Remote {
  const h = new PingHistory({ ...history, ...(initialOneWayMs !== undefined ? { initialOneWayMs } : {}) });
  return { id, history: h, advanced, maxOneWay: 0, port, portSeen: -1, cut: Infinity, neutralPort: -1 };
}

/**
 * The events a frame-advance peer holds for coming frames: frame f's at `f % EVENT_RING` while
 * f < next + EVENT_RING, further ones in a map (rare), and a free list of reused event objects.
 */
export class EventQueue {
  /** Events of frame f at `f % EVENT_RING` while f < next + EVENT_RING. */
  private readonly slots: FrameSlot[] = [];
  /** Events of frames further ahead (rare; a map of arrays). */
  private readonly farEvents = new Map<number, Ev[]>();
  private readonly freeEvents: Ev[] = [];

  constructor(private readonly inputBytes: number) {
    for (let i = 0; i < EVENT_RING; i++) this.slots.push({ frame: -1, list: [] });
  }

  /** A new event object (not from the free list). */
  newEvent(): Ev {
    return { frame: 0, key: 0, client: 0, port: 0, input: new Uint8Array(this.inputBytes) };
  }

  /** An event object from the free list (or a new one). */
  takeEvent(): Ev {
    return this.freeEvents.pop() ?? this.newEvent();
  }

  /** Queues `e` for its frame (`next`: the peer's next frame). */
  addEvent(e: Ev, next: number): void {
    if (e.frame < next + EVENT_RING) {
      const slot = this.slots[e.frame % EVENT_RING]!;
      // A slot still holding an older frame (not run: a late joiner's jump) is stale.
      if (slot.frame !== e.frame && slot.frame < next) this.resetSlot(slot, e.frame);
      if (slot.frame === e.frame) {
        slot.list.push(e);
        return;
      }
    }
    let list = this.farEvents.get(e.frame);
    if (!list) {
      list = [];
      this.farEvents.set(e.frame, list);
    }
    list.push(e);
  }

  /** Discards `client`'s queued events for frames after `last` (a departure's cut). */
  discardAfter(client: number, last: number): void {
    for (const slot of this.slots) if (slot.frame > last) this.discardEvents(slot.list, client, last);
    for (const [frame, list] of this.farEvents) {
      this.discardEvents(list, client, last);
      if (list.length === 0) this.farEvents.delete(frame);
    }
  }

  /** Applies frame `f`'s events to `inputs` (port `e.port`'s bytes), in {@link compareEvents} order, and frees them. */
  applyFrame(f: number, inputs: Uint8Array): void {
    const slot = this.slots[f % EVENT_RING]!;
    if (this.farEvents.size > 0) {
      const far = this.farEvents.get(f);
      if (far) {
        this.farEvents.delete(f);
        if (slot.frame !== f) this.resetSlot(slot, f);
        for (const e of far) slot.list.push(e);
      }
    }
    if (slot.frame === f) {
      const list = slot.list;
      sortEvents(list);
      for (let i = 0; i < list.length; i++) {
        const e = list[i]!;
        inputs.set(e.input, e.port * this.inputBytes);
      }
      this.resetSlot(slot, -1);
    }
  }

  /** Removes `client`'s events for frames after `last` from `list` (they go back to the free list). */
  private discardEvents(list: Ev[], client: number, last: number): void {
    let k = 0;
    for (let i = 0; i < list.length; i++) {
      const e = list[i]!;
      if (e.client === client && e.frame > last) this.freeEvents.push(e);
      else list[k++] = e;
    }
    list.length = k;
  }

  /** Empties `slot` (its events go back to the free list) and gives it to `frame`. */
  private resetSlot(slot: FrameSlot, frame: number): void {
    const list = slot.list;
    while (list.length > 0) this.freeEvents.push(list.pop()!);
    slot.frame = frame;
  }
}

export function copyEvent(from: Ev, to: Ev): void {
  to.frame = from.frame;
  to.key = from.key;
  to.client = from.client;
  to.port = from.port;
  to.input.set(from.input);
}

/** Insertion sort by {@link compareEvents} (few events per frame; `Array.prototype.sort` allocates). */
export function sortEvents(list: Ev[]): void {
  for (let i = 1; i < list.length; i++) {
    const e = list[i]!;
    let j = i - 1;
    while (j >= 0 && compareEvents(list[j]!, e) > 0) {
      list[j + 1] = list[j]!;
      j--;
    }
    list[j + 1] = e;
  }
}

/** (random key, client id), then port and input bytes: the order of `compareFsUaeInputEvents`. */
function compareEvents(a: FrameAdvanceEvent, b: FrameAdvanceEvent): number {
  if (a.key !== b.key) return a.key - b.key;
  if (a.client !== b.client) return a.client - b.client;
  if (a.port !== b.port) return a.port - b.port;
  const n = Math.min(a.input.length, b.input.length);
  for (let i = 0; i < n; i++) if (a.input[i] !== b.input[i]) return a.input[i]! - b.input[i]!;
  return a.input.length - b.input.length;
}

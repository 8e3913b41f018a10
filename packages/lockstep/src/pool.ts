import type { Envelope } from './types.js';

/** An envelope the scheduler reuses. */
interface MutableEnvelope {
  to: number;
  channel: string;
  data: Uint8Array;
}

/**
 * The per-frame outbox of a scheduler, without allocation: envelopes and message buffers come
 * from pools that are recycled once the driver has emptied the outbox. A scheduler calls
 * {@link OutboxPool.recycle} at the start of each public entry point: when the outbox is empty
 * then, every envelope and buffer handed out before has been sent (and `Connection.send` copies
 * its data), so they are free again. Within one entry point nothing is recycled, so every buffer
 * taken there is distinct. A driver that keeps envelopes after emptying the outbox must copy them.
 */
export class OutboxPool {
  private readonly envelopes: MutableEnvelope[] = [];
  private used = 0;
  private readonly pools: BufferPool[] = [];

  constructor(readonly outbox: Envelope[]) {}

  /** A pool of buffers of exactly `size` bytes. */
  buffers(size: number): BufferPool {
    const p = new BufferPool(size);
    this.pools.push(p);
    return p;
  }

  /** Frees everything handed out, if the driver emptied the outbox. */
  recycle(): void {
    if (this.outbox.length !== 0) return;
    this.used = 0;
    for (let i = 0; i < this.pools.length; i++) this.pools[i]!.reset();
  }

  /** Queues `data` for peer `to` on `channel` in a reused envelope. */
  push(to: number, channel: string, data: Uint8Array): void {
    let e = this.envelopes[this.used];
    if (e === undefined) {
      e = { to, channel, data };
      this.envelopes.push(e);
    } else {
      e.to = to;
      e.channel = channel;
      e.data = data;
    }
    this.used++;
    this.outbox.push(e);
  }
}

/** Buffers of one size, handed out in turn and recycled by their {@link OutboxPool}. */
export class BufferPool {
  private readonly items: Uint8Array[] = [];
  private used = 0;

  constructor(readonly size: number) {}

  /** A buffer of `size` bytes not handed out since the last recycle (its content is stale). */
  take(): Uint8Array {
    let b = this.items[this.used];
    if (b === undefined) {
      b = new Uint8Array(this.size);
      this.items.push(b);
    }
    this.used++;
    return b;
  }

  /** Buffers allocated so far (for tests: it stays small in a steady state). */
  get allocated(): number {
    return this.items.length;
  }

  reset(): void {
    this.used = 0;
  }
}

/**
 * A FIFO of reused slot objects (a growable ring): `push` returns the slot to fill, `shift`
 * drops the oldest. It only allocates when it grows past its largest size so far.
 */
export class Ring<T> {
  private slots: T[];
  private head = 0;
  private count = 0;

  constructor(
    private readonly make: () => T,
    capacity = 16,
  ) {
    this.slots = Array.from({ length: capacity }, make);
  }

  get length(): number {
    return this.count;
  }

  /** Slots allocated (the ring's capacity). */
  get capacity(): number {
    return this.slots.length;
  }

  /** The `i`-th oldest slot (0 = oldest). */
  at(i: number): T {
    return this.slots[(this.head + i) % this.slots.length]!;
  }

  /** The newest slot, or `undefined` when empty. */
  last(): T | undefined {
    return this.count === 0 ? undefined : this.at(this.count - 1);
  }

  /** Appends a slot (reused: the caller overwrites every field) and returns it. */
  push(): T {
    if (this.count === this.slots.length) {
      const old = this.slots;
      const grown: T[] = [];
      for (let i = 0; i < old.length; i++) grown.push(old[(this.head + i) % old.length]!);
      for (let i = old.length; i < old.length * 2; i++) grown.push(this.make());
      this.slots = grown;
      this.head = 0;
    }
    const s = this.slots[(this.head + this.count) % this.slots.length]!;
    this.count++;
    return s;
  }

  /** Drops the `n` oldest slots. */
  shift(n = 1): void {
    const k = Math.min(n, this.count);
    this.head = (this.head + k) % this.slots.length;
    this.count -= k;
  }

  clear(): void {
    this.head = 0;
    this.count = 0;
  }
}

/** Big-endian u32 read (no DataView, no allocation). */
export function readU32BE(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

/** Big-endian u32 write. */
export function writeU32BE(t: Uint8Array, o: number, v: number): void {
  t[o] = v >>> 24;
  t[o + 1] = v >>> 16;
  t[o + 2] = v >>> 8;
  t[o + 3] = v;
}

/** Little-endian u32 read (FCE Ultra's byte order). */
export function readU32LE(b: Uint8Array, o: number): number {
  return (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
}

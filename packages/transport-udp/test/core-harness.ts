/**
 * Pieces for driving the sans-I/O core in process without allocating per datagram (used by the
 * steady-state allocation tests and the core benchmark).
 */

/** A FIFO of datagram copies in preallocated slots; delivery hands out views cached per length. */
export class Link {
  private readonly slots: Uint8Array[] = [];
  private readonly lengths: number[] = [];
  private readonly views: Array<Array<Uint8Array | undefined>> = [];
  private head = 0;
  count = 0;

  constructor(capacity: number, mtu: number) {
    for (let i = 0; i < capacity; i++) {
      this.slots.push(new Uint8Array(mtu));
      this.lengths.push(0);
      this.views.push([]);
    }
  }

  readonly push = (d: Uint8Array): void => {
    if (this.count === this.slots.length) throw new Error('link full');
    const i = (this.head + this.count) % this.slots.length;
    this.slots[i]!.set(d);
    this.lengths[i] = d.length;
    this.count++;
  };

  deliver(to: (d: Uint8Array) => void): void {
    while (this.count > 0) {
      const i = this.head;
      const n = this.lengths[i]!;
      let v = this.views[i]![n];
      if (!v) {
        v = this.slots[i]!.subarray(0, n);
        this.views[i]![n] = v;
      }
      this.head = (this.head + 1) % this.slots.length;
      this.count--;
      to(v);
    }
  }
}

/**
 * Deferred calls, run in order from a reused array (never emptied by `length = 0` or `pop`, which
 * make V8 release the storage that the next push allocates again).
 */
export class Deferred {
  private readonly fns: Array<(() => void) | undefined> = [];
  private count = 0;
  readonly defer = (fn: () => void): void => {
    this.fns[this.count++] = fn;
  };
  run(): void {
    for (let i = 0; i < this.count; i++) {
      const fn = this.fns[i]!;
      this.fns[i] = undefined;
      fn();
    }
    this.count = 0;
  }
  get pending(): number {
    return this.count;
  }
}

/**
 * A growable first-in first-out ring with indexed access. Pushing and shifting allocate nothing
 * once the ring has grown to the largest length it holds (it doubles when full and never shrinks
 * until {@link clear}), unlike `Array.prototype.shift`, which moves every element.
 * @internal
 */
export class Deque<T> {
  private items: Array<T | undefined>;
  private mask: number;
  private head = 0;
  private count = 0;

  constructor(initialCapacity = 16) {
    let cap = 1;
    while (cap < initialCapacity) cap *= 2;
    this.items = new Array<T | undefined>(cap).fill(undefined);
    this.mask = cap - 1;
  }

  /** Number of elements. */
  get length(): number {
    return this.count;
  }

  /** Appends `x` at the back. */
  push(x: T): void {
    if (this.count > this.mask) this.grow();
    this.items[(this.head + this.count) & this.mask] = x;
    this.count++;
  }

  /** Removes and returns the front element (undefined when empty). */
  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const x = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.count--;
    return x;
  }

  /** The front element, without removing it. */
  peek(): T | undefined {
    return this.count === 0 ? undefined : this.items[this.head];
  }

  /** The element `i` places from the front (the caller checks `0 <= i < length`). */
  at(i: number): T {
    return this.items[(this.head + i) & this.mask] as T;
  }

  /** Removes every element (keeps the capacity). */
  clear(): void {
    for (let i = 0; i < this.count; i++) this.items[(this.head + i) & this.mask] = undefined;
    this.head = 0;
    this.count = 0;
  }

  private grow(): void {
    const cap = this.items.length;
    const next = new Array<T | undefined>(cap * 2).fill(undefined);
    for (let i = 0; i < this.count; i++) next[i] = this.items[(this.head + i) & this.mask];
    this.items = next;
    this.mask = cap * 2 - 1;
    this.head = 0;
  }
}

/**
 * Reassembly of fragmented reliable messages, charged by what was actually received.
 *
 * A message's announced length reserves nothing: each fragment is kept as its own copy until the
 * message is complete, and only then is one buffer of the message's length assembled (and handed
 * to the application, which owns it). A connection's account is the fragments' bytes plus
 * {@link FRAGMENT_OVERHEAD} per fragment and {@link MESSAGE_OVERHEAD} per message (the objects and
 * map entries that hold them), so 65 536 one-byte messages held out of order cost what they occupy,
 * not 65 536 bytes. An account may belong to a listener-wide {@link ReassemblyBudget}.
 */

/** Bytes charged per message held (its record, map entry and fragment map). */
export const MESSAGE_OVERHEAD = 256;
/** Bytes charged per fragment held (its `Uint8Array` object and map entry). */
export const FRAGMENT_OVERHEAD = 96;

interface PartialMessage {
  readonly length: number;
  readonly fragSize: number;
  readonly frags: Map<number, Uint8Array>;
  missing: number;
  /** Bytes charged for this message. */
  charged: number;
  /** Arrival order of its first fragment (a listener-wide serial number). */
  readonly born: number;
}

/** What {@link Reassembly.add} did. */
export const AddResult = {
  /** The fragment is held (or was a duplicate). */
  Held: 0,
  /** Fragments of one message disagree on its length or fragment size. */
  Mismatch: 1,
  /** Holding it would exceed the connection's `maxReassemblyBytes`. */
  OverConnection: 2,
  /** Holding it would exceed the listener-wide budget, and this connection's oldest message is the oldest. */
  OverListener: 3,
} as const;
export type AddResult = (typeof AddResult)[keyof typeof AddResult];

/**
 * A listener-wide cap on the reassembly bytes of all its connections. When a fragment would take
 * the total past it, the connection whose oldest unfinished message started first is evicted (its
 * `onEvict` ends it with `limit`) until the fragment fits; if that connection is the one receiving,
 * the fragment is refused instead (and that connection ends). A stalled announcement (a hostile
 * peer that never finishes its messages) thus goes before a transfer in progress that started
 * after it: an honest savestate completes unless the cap is filled anew while it is in flight.
 */
export class ReassemblyBudget {
  /** Bytes held by all member accounts. */
  held = 0;
  /** @internal Serial number of the next message started. */
  serial = 0;
  /** Connections evicted to make room so far. */
  evictions = 0;
  private readonly members = new Set<Reassembly>();

  constructor(
    /** Cap on `held`, in bytes counted as each connection counts them (fragments received plus per-message and per-fragment overhead); set by the listener from `maxListenerReassemblyBytes` (default 32 MiB). */
    readonly maxBytes: number,
  ) {}

  /** @internal */
  join(r: Reassembly): void {
    this.members.add(r);
  }

  /** @internal */
  leave(r: Reassembly): void {
    this.members.delete(r);
  }

  /** Makes room for `bytes` more on behalf of `r`; false when `r`'s oldest message is the oldest. */
  reserve(r: Reassembly, bytes: number): boolean {
    while (this.held + bytes > this.maxBytes) {
      let top = r;
      let topBorn = r.oldest();
      for (const m of this.members) {
        const born = m.oldest();
        if (born < topBorn) {
          top = m;
          topBorn = born;
        }
      }
      if (top === r) return false;
      const before = this.held;
      this.evictions++;
      top.evict();
      if (this.held >= before) return false; // the evicted account did not let go: refuse
    }
    return true;
  }
}

/** The reassembly state of one connection: per channel, the messages not yet delivered. */
export class Reassembly {
  /** Bytes charged now. */
  held = 0;
  private readonly channels: Array<Map<number, PartialMessage> | undefined> = [];

  constructor(
    readonly maxBytes: number,
    private readonly budget: ReassemblyBudget | undefined,
    private readonly onEvict: () => void,
  ) {
    budget?.join(this);
  }

  /**
   * Holds fragment `idx` (bytes `d[start, end)`) of message `seq` on channel `ch`, announced as
   * `length` bytes in fragments of `fragSize` (`fragCount` of them; the caller checked the bounds).
   */
  add(
    ch: number,
    seq: number,
    length: number,
    fragSize: number,
    fragCount: number,
    idx: number,
    d: Uint8Array,
    start: number,
    end: number,
  ): AddResult {
    let map = this.channels[ch];
    if (!map) {
      map = new Map();
      this.channels[ch] = map;
    }
    let part = map.get(seq);
    if (part && (part.fragSize !== fragSize || part.length !== length)) return AddResult.Mismatch;
    if (part?.frags.has(idx)) return AddResult.Held;
    const cost = end - start + FRAGMENT_OVERHEAD + (part ? 0 : MESSAGE_OVERHEAD);
    if (this.held + cost > this.maxBytes) return AddResult.OverConnection;
    if (this.budget && !this.budget.reserve(this, cost)) return AddResult.OverListener;
    if (!part) {
      const born = this.budget ? this.budget.serial++ : 0;
      part = { length, fragSize, frags: new Map(), missing: fragCount, charged: 0, born };
      map.set(seq, part);
    }
    part.frags.set(idx, d.slice(start, end));
    part.missing--;
    part.charged += cost;
    this.charge(cost);
    return AddResult.Held;
  }

  /** The complete message `seq` of channel `ch`, assembled and released; undefined if incomplete. */
  take(ch: number, seq: number): Uint8Array | undefined {
    const map = this.channels[ch];
    const part = map?.get(seq);
    if (!map || !part || part.missing > 0) return undefined;
    map.delete(seq);
    this.charge(-part.charged);
    if (part.frags.size === 1) {
      const only = part.frags.get(0);
      if (only && only.length === part.length) return only;
    }
    const out = new Uint8Array(part.length);
    for (const [idx, bytes] of part.frags) out.set(bytes, idx * part.fragSize);
    return out;
  }

  /** Serial number of the oldest message held (+Infinity when none). */
  oldest(): number {
    let born = Number.POSITIVE_INFINITY;
    for (const map of this.channels) {
      if (!map) continue;
      for (const part of map.values()) {
        if (part.born < born) born = part.born;
        break; // maps keep insertion order: the first is the oldest of its channel
      }
    }
    return born;
  }

  /** Drops everything and leaves the listener's budget (the connection ended). */
  clear(): void {
    for (const map of this.channels) map?.clear();
    this.charge(-this.held);
    this.budget?.leave(this);
  }

  /** @internal Called by the budget: the connection must end (its `onEvict` calls {@link clear}). */
  evict(): void {
    this.onEvict();
    if (this.held > 0) this.clear();
  }

  private charge(bytes: number): void {
    this.held += bytes;
    if (this.budget) this.budget.held += bytes;
  }
}

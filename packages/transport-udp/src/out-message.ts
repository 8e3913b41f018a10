import { Deque } from './deque.js';

/** Messages up to this size are copied byte by byte (no view object is needed). */
const SMALL_COPY = 64;
/** Pooled entries keep their byte buffer only up to this capacity. */
const MAX_POOLED_BUFFER = 2048;
/** Pooled entries keep their fragment-state buffer only up to this capacity. */
const MAX_POOLED_FRAGS = 64;
const EMPTY = new Uint8Array(0);

/**
 * A message queued for sending, and while it is not acknowledged, the sender's copy of it. Entries
 * are pooled ({@link MessagePool}): the byte buffer and the per-fragment state are reused, so a
 * steady stream of messages allocates nothing.
 * @internal
 */
export class OutMessage {
  /** Channel index. */
  channel = 0;
  /** Message sequence number on its channel. */
  seq = 0;
  /** Message length (`data` may be longer: it is a pooled buffer). */
  length = 0;
  /** The bytes, in `data[0, length)`. */
  data: Uint8Array = EMPTY;
  /** `data[0, length)` as a view, made when first needed and kept while the length stays. */
  whole: Uint8Array = EMPTY;
  fragCount = 0;
  /** Per fragment (first `fragCount`): 0 not sent / to resend, 1 in flight, 2 acknowledged. */
  fragState: Uint8Array = EMPTY;
  ackedCount = 0;
  /** Next never-sent fragment. */
  nextFrag = 0;

  /** Copies `n` bytes from offset `from` of the message to `dst` at `at`. */
  copyTo(from: number, n: number, dst: Uint8Array, at: number): void {
    if (n <= SMALL_COPY) {
      const d = this.data;
      for (let i = 0; i < n; i++) dst[at + i] = d[from + i]!;
    } else if (from === 0 && n === this.length) {
      if (this.whole.length !== n || this.whole.buffer !== this.data.buffer) this.whole = this.data.subarray(0, n);
      dst.set(this.whole, at);
    } else {
      // A fragment of a large message (bulk transfers): one view per fragment.
      dst.set(this.data.subarray(from, from + n), at);
    }
  }
}

/**
 * A free list of {@link OutMessage} entries, bounded in entries and in bytes kept: small buffers
 * (inputs) are reused, large ones (savestates) are left to the garbage collector.
 * @internal
 */
export class MessagePool {
  // A ring, not an array used as a stack: popping an array to empty makes V8 trim its storage,
  // and the next push allocates it again.
  private readonly free = new Deque<OutMessage>();
  private pooledBytes = 0;

  constructor(
    /** Most entries kept. */
    private readonly maxEntries = 1024,
    /** Most buffer bytes kept over all entries. */
    private readonly maxBytes = 256 << 10,
  ) {}

  /** An entry holding a copy of `src`, split into `fragCount` fragments. */
  take(channel: number, seq: number, src: Uint8Array, fragCount: number): OutMessage {
    const m = this.free.shift() ?? new OutMessage();
    this.pooledBytes -= m.data.length;
    const n = src.length;
    if (m.data.length < n) m.data = new Uint8Array(n <= MAX_POOLED_BUFFER ? Math.max(32, ceilPow2(n)) : n);
    m.data.set(src);
    if (m.fragState.length < fragCount) {
      m.fragState = new Uint8Array(fragCount <= MAX_POOLED_FRAGS ? Math.max(4, ceilPow2(fragCount)) : fragCount);
    } else m.fragState.fill(0, 0, fragCount);
    m.channel = channel;
    m.seq = seq;
    m.length = n;
    m.fragCount = fragCount;
    m.ackedCount = 0;
    m.nextFrag = 0;
    return m;
  }

  /** Returns an entry that nothing references any more. */
  release(m: OutMessage): void {
    if (this.free.length >= this.maxEntries) return;
    if (m.data.length > MAX_POOLED_BUFFER || this.pooledBytes + m.data.length > this.maxBytes) {
      m.data = EMPTY;
      m.whole = EMPTY;
    }
    if (m.fragState.length > MAX_POOLED_FRAGS) m.fragState = EMPTY;
    this.pooledBytes += m.data.length;
    this.free.push(m);
  }
}

function ceilPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * Follows the WebSocket frame headers of one received byte stream (RFC 6455 §5.2; masked or not)
 * and counts the payload bytes of the data message that has not finished yet, i.e. what `ws`'s
 * receiver holds for this socket until the message is complete. `ws` does not reserve a message's
 * announced length up front (it keeps the chunks as they arrive), so this count is the memory an
 * unfinished message really holds. It validates nothing (`ws` does, and closes the socket on bad
 * frames); it only has to stay in step with a valid stream. Allocation-free per chunk.
 */
export class MessageTracker {
  /** Payload bytes of the current unfinished data message received so far (across fragments). */
  unfinished = 0;
  /** When the current unfinished message began (caller's clock), or -1 when none is under way. */
  startedAt = -1;
  private readonly header = new Uint8Array(14);
  private have = 0;
  private need = 2;
  private remaining = 0;
  private dataFrame = false;
  private fin = false;

  /** Accounts for `chunk`, received at `now`; returns by how much `unfinished` changed. */
  feed(chunk: Uint8Array, now: number): number {
    const before = this.unfinished;
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, n - i);
        if (this.dataFrame) this.unfinished += take;
        this.remaining -= take;
        i += take;
        if (this.remaining === 0) this.frameDone();
        continue;
      }
      if (this.have === 0 && n - i >= 14) {
        // Fast path: the whole header is in this chunk (the usual case); read it in place.
        const b1 = chunk[i + 1]!;
        const len7 = b1 & 0x7f;
        const ext = len7 === 126 ? 2 : len7 === 127 ? 8 : 0;
        let len = len7;
        if (ext === 2) len = (chunk[i + 2]! << 8) | chunk[i + 3]!;
        else if (ext === 8) len = readLength64(chunk, i + 2);
        this.startFrame(chunk[i]!, len, now);
        i += 2 + ext + (b1 & 0x80 ? 4 : 0);
        continue;
      }
      this.header[this.have++] = chunk[i++]!;
      if (this.have === 2) {
        const len7 = this.header[1]! & 0x7f;
        this.need = 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (this.header[1]! & 0x80 ? 4 : 0);
      }
      if (this.have === this.need) this.headerDone(now);
    }
    return this.unfinished - before;
  }

  private headerDone(now: number): void {
    const h = this.header;
    const len7 = h[1]! & 0x7f;
    let len = len7;
    if (len7 === 126) len = (h[2]! << 8) | h[3]!;
    else if (len7 === 127) len = readLength64(h, 2);
    this.have = 0;
    this.need = 2;
    this.startFrame(h[0]!, len, now);
  }

  private startFrame(b0: number, len: number, now: number): void {
    this.fin = (b0 & 0x80) !== 0;
    this.dataFrame = (b0 & 0x0f) < 8;
    if (this.dataFrame && this.startedAt < 0) this.startedAt = now;
    this.remaining = len;
    if (len === 0) this.frameDone();
  }

  private frameDone(): void {
    if (this.dataFrame && this.fin) {
      this.unfinished = 0;
      this.startedAt = -1;
    }
  }
}

/** A 64-bit big-endian length at `at` (lengths past 2^53 lose precision; `ws` refuses them anyway). */
function readLength64(b: Uint8Array, at: number): number {
  const hi = ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
  const lo = ((b[at + 4]! << 24) | (b[at + 5]! << 16) | (b[at + 6]! << 8) | b[at + 7]!) >>> 0;
  return hi * 2 ** 32 + lo;
}

/** One tracked connection of a {@link ReceiveMemory}. */
export interface TrackedSocket {
  readonly tracker: MessageTracker;
  /** Stops reading the socket (TCP then holds the sender back). */
  pause(): void;
  /** Reads the socket again. */
  resume(): void;
}

/**
 * Unfinished messages up to this size never make their connection stop reading: a small message
 * cut by a TCP segment boundary (inputs, unreliable state up to 64 KiB) always goes through.
 */
export const PAUSE_FLOOR_BYTES = 64 << 10;

/**
 * The listener-wide cap on bytes held in unfinished received messages. When a chunk leaves the
 * total past `maxBytes` and its connection's unfinished message is above {@link PAUSE_FLOOR_BYTES},
 * that connection stops being read (TCP backpressure holds the rest in the sender); every paused
 * connection is read again once the total is back under `maxBytes` (a message completed or a
 * connection closed). Nothing read is thrown away, so an attack leaves no garbage behind: the held
 * total stays under `maxBytes + connections × (one socket read)`. A paused sender that never
 * finishes is closed by its own timeouts (`connectMs` before HELLO; `disconnectMs` after, since no
 * PING can pass the middle of a frame).
 */
export class ReceiveMemory {
  /** Bytes held in unfinished messages now, all connections together. */
  total = 0;
  /** Times a connection was paused because the total was past `maxBytes`. */
  pauses = 0;
  private readonly all = new Set<TrackedSocket>();
  private readonly paused = new Set<TrackedSocket>();

  constructor(readonly maxBytes: number) {}

  add(socket: TrackedSocket): void {
    this.all.add(socket);
  }

  /** Connections not being read now. */
  get pausedCount(): number {
    return this.paused.size;
  }

  /** The connection is gone: its unfinished bytes no longer count. */
  remove(socket: TrackedSocket): void {
    if (!this.all.delete(socket)) return;
    this.paused.delete(socket);
    this.total -= socket.tracker.unfinished;
    socket.tracker.unfinished = 0;
    this.resumeIfRoom();
  }

  /** Accounts for `chunk` received by `socket` at `now`; pauses it if the total is past the cap. */
  feed(socket: TrackedSocket, chunk: Uint8Array, now: number): void {
    if (!this.all.has(socket)) return;
    const delta = socket.tracker.feed(chunk, now);
    this.total += delta;
    if (delta < 0) this.resumeIfRoom();
    if (this.total > this.maxBytes && socket.tracker.unfinished > PAUSE_FLOOR_BYTES && !this.paused.has(socket)) {
      this.paused.add(socket);
      this.pauses++;
      socket.pause();
    }
  }

  private resumeIfRoom(): void {
    if (this.total > this.maxBytes || this.paused.size === 0) return;
    const all = [...this.paused];
    this.paused.clear();
    for (const s of all) s.resume();
  }
}

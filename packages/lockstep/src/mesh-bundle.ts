import { DecodeError } from '@netplay/protocol';
import { K_NOTICE, K_PACKET } from './mesh-join.js';
import type { BufferPool, OutboxPool } from './pool.js';

/**
 * A bundle on `input-u`: `4, u8 n (1..8), n × (u16 length, message)`, each message a packet
 * (`1 …`) or a join notice (`2 …`) of the sender's input stream, oldest first. The sender's
 * unreliable copy of each packet carries its {@link BUNDLE_DEPTH} previous messages too, so a lost
 * datagram is made good by the next one, a frame later, instead of the reliable copy's
 * retransmission (an RTO, doubled on each loss: seconds at 20 % loss).
 */
export const K_BUNDLE = 4;
/** Previous messages of the stream each unreliable packet carries again. */
export const BUNDLE_DEPTH = 2;
/** Most messages a bundle may hold (a decoder bound; senders put at most {@link BUNDLE_DEPTH} + 1). */
export const MAX_BUNDLE = 8;

/**
 * The sender's side: remembers the last {@link BUNDLE_DEPTH} messages of its stream (copies in
 * buffers it reuses) and writes each new packet's bundle into a buffer of exactly its length from
 * `pool` (one buffer pool per length, made on first use: distinct within one scheduler entry
 * point; nothing allocated per frame once they exist).
 */
export class BundleWriter {
  private readonly recent: Uint8Array[] = [];
  private readonly lengths: number[] = [];
  private count = 0;
  private head = 0;

  private readonly pools = new Map<number, BufferPool>();

  constructor(
    private readonly pool: OutboxPool,
    maxMessageBytes: number,
  ) {
    for (let i = 0; i < BUNDLE_DEPTH; i++) {
      this.recent.push(new Uint8Array(maxMessageBytes));
      this.lengths.push(0);
    }
  }

  /** Remembers `message` (a packet or notice sent on its own) for the next bundles. */
  remember(message: Uint8Array): void {
    const slot = this.recent[this.head]!;
    if (message.length > slot.length) this.recent[this.head] = message.slice();
    else slot.set(message);
    this.lengths[this.head] = message.length;
    this.head = (this.head + 1) % BUNDLE_DEPTH;
    if (this.count < BUNDLE_DEPTH) this.count++;
  }

  /** The bundle of `packet` after the remembered messages (then remembers it). */
  bundle(packet: Uint8Array): Uint8Array {
    let size = 2 + 2 + packet.length;
    for (let k = 0; k < this.count; k++) size += 2 + this.lengths[(this.head - 1 - k + BUNDLE_DEPTH) % BUNDLE_DEPTH]!;
    let buffers = this.pools.get(size);
    if (buffers === undefined) {
      buffers = this.pool.buffers(size);
      this.pools.set(size, buffers);
    }
    const out = buffers.take();
    out[0] = K_BUNDLE;
    out[1] = this.count + 1;
    let o = 2;
    // Oldest first: the ring's entries from `head - count` on.
    for (let k = 0; k < this.count; k++) {
      const i = (this.head - this.count + k + BUNDLE_DEPTH) % BUNDLE_DEPTH;
      o = put(out, o, this.recent[i]!, this.lengths[i]!);
    }
    put(out, o, packet, packet.length);
    this.remember(packet);
    return out;
  }
}

function put(out: Uint8Array, o: number, message: Uint8Array, length: number): number {
  out[o] = length >>> 8;
  out[o + 1] = length & 0xff;
  for (let i = 0; i < length; i++) out[o + 2 + i] = message[i]!;
  return o + 2 + length;
}

/**
 * The receiver's side: checks a bundle whole, then hands out its messages one at a time, each
 * copied into a scratch buffer of its length (valid until the next {@link message} call; a reader
 * that keeps one must copy it, as the mesh's input stream does): no views, nothing allocated per
 * frame for the stream's own message sizes.
 */
export class BundleReader {
  private readonly scratch = new Map<number, Uint8Array>();

  constructor(packetBytes: number) {
    this.scratch.set(packetBytes, new Uint8Array(packetBytes));
    this.scratch.set(22, new Uint8Array(22));
  }

  /**
   * The number of messages in bundle `data`.
   * @throws DecodeError when the count is 0 or past {@link MAX_BUNDLE}, a length runs past the end,
   *   a message is shorter than 5 bytes or not a packet or notice, or bytes follow the last one.
   */
  check(data: Uint8Array): number {
    if (data.length < 2) throw new DecodeError('truncated', data.length, 'bundle count');
    const n = data[1]!;
    if (n === 0 || n > MAX_BUNDLE) throw new DecodeError('bad-value', 1, `bundle of ${n} messages`);
    let o = 2;
    for (let k = 0; k < n; k++) {
      if (o + 2 > data.length) throw new DecodeError('truncated', o, 'bundle length');
      const len = (data[o]! << 8) | data[o + 1]!;
      if (len < 5 || o + 2 + len > data.length) throw new DecodeError('bad-length', o, 'bundle message');
      const kind = data[o + 2];
      if (kind !== K_PACKET && kind !== K_NOTICE) throw new DecodeError('unknown-type', o + 2, `bundled kind ${kind}`);
      o += 2 + len;
    }
    if (o !== data.length) throw new DecodeError('bad-length', o, 'bytes after the bundle');
    return n;
  }

  /** Message `k` (0 = oldest) of a bundle {@link check} accepted, in a scratch buffer. */
  message(data: Uint8Array, k: number): Uint8Array {
    let o = 2;
    for (let i = 0; i < k; i++) o += 2 + ((data[o]! << 8) | data[o + 1]!);
    const len = (data[o]! << 8) | data[o + 1]!;
    // A length the stream never uses (a hostile peer's) gets a buffer of its own.
    const out = this.scratch.get(len) ?? new Uint8Array(len);
    for (let i = 0; i < len; i++) out[i] = data[o + 2 + i]!;
    return out;
  }
}

/** A mesh peer's two sides of the unreliable copies: its own bundles and the ones it receives. */
export class MeshBundles {
  /** Bundles this peer's packets (undefined: its unreliable copies are the bare packets). */
  readonly writer: BundleWriter | undefined;
  /** Unpacks the bundles it receives. */
  readonly reader: BundleReader;

  constructor(pool: OutboxPool, packetBytes: number, bundle = true) {
    this.writer = bundle ? new BundleWriter(pool, Math.max(22, packetBytes)) : undefined;
    this.reader = new BundleReader(packetBytes);
  }
}

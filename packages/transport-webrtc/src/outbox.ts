import type { Timer } from '@netplay/transport';
import { TransportError } from '@netplay/transport';
import type { Chan, MutableStats } from './channel-state.js';
import type { ResolvedOptions } from './options.js';
import type { RtcDataChannelLike } from './rtc.js';
import { encodeReliable, encodeUnreliable, UNRELIABLE_HEADER_BYTES } from './wire.js';

/** What an {@link Outbox} asks of its connection. */
export interface OutboxHost {
  /** A data channel `send` threw: end the connection. */
  fail(error: TransportError): void;
  /** Whether the connection is open (polling stops otherwise). */
  open(): boolean;
}

/**
 * The sending side of a connection: messages queued before open, reliable messages cut into
 * frames of `chunkBytes` with a `limit` past `maxBufferedBytes` of `bufferedAmount`, unreliable
 * messages sequenced and held back (newest only per channel) above `highWaterBytes`, a poll of
 * `bufferedAmount` while anything is queued, and the send-queue stats.
 */
export class Outbox {
  /** Largest frame on a data channel (set when the SCTP transport is up). */
  chunkBytes = 16 << 10;
  private readonly queued: Array<{ chan: Chan; data: Uint8Array }> = [];
  private queuedBytes = 0;
  private pendingCount = 0;
  private pendingBytes = 0;
  private pollTimer: Timer | undefined;

  constructor(
    private readonly chans: readonly Chan[],
    private readonly opts: ResolvedOptions,
    private readonly stats: MutableStats,
    private readonly host: OutboxHost,
  ) {}

  /** Hands one frame to a data channel, counting it; false if the channel is not open or failed. */
  transmit(dc: RtcDataChannelLike, frame: Uint8Array): boolean {
    if (dc.readyState !== 'open') return false;
    try {
      dc.send(frame);
    } catch (e) {
      this.host.fail(new TransportError('io', `data channel send failed: ${(e as Error).message}`, { cause: e }));
      return false;
    }
    this.stats.bytesSent += frame.length;
    this.stats.packetsSent++;
    return true;
  }

  /** Keeps a copy of a message sent before open. Throws `limit` past `maxBufferedBytes`. */
  queue(chan: Chan, data: Uint8Array): void {
    if (this.queuedBytes + data.length > this.opts.maxBufferedBytes) {
      throw new TransportError('limit', `more than ${this.opts.maxBufferedBytes} bytes queued before open`);
    }
    this.queued.push({ chan, data: data.slice() });
    this.queuedBytes += data.length;
    this.refreshStats();
  }

  /** The messages queued before open, in order (the queue is emptied). */
  takeQueued(): Array<{ chan: Chan; data: Uint8Array }> {
    const list = this.queued.splice(0);
    this.queuedBytes = 0;
    this.refreshStats();
    return list;
  }

  /**
   * At open: sends the messages queued before it, each checked against the agreed `limits`; one
   * that cannot go out is reported to `error` (a `TransportError`). Stops when `closed()`.
   */
  flushQueued(
    limits: { readonly maxMessageBytes: number; readonly maxUnreliableBytes: number },
    error: (e: TransportError) => void,
    closed: () => boolean,
  ): void {
    for (const { chan, data } of this.takeQueued()) {
      const max = chan.reliable ? limits.maxMessageBytes : limits.maxUnreliableBytes;
      try {
        if (data.length > max)
          throw new TransportError(
            'too-large',
            `a ${data.length}-byte message queued before open exceeds the agreed ${max}`,
          );
        this.send(chan, data);
      } catch (e) {
        if (!(e instanceof TransportError)) throw e;
        error(e);
      }
      if (closed()) return;
    }
  }

  /** Sends a message on an open connection. Throws `limit` (reliable buffer full). */
  send(chan: Chan, data: Uint8Array): void {
    if (chan.reliable) {
      if (chan.dc.bufferedAmount + data.length > this.opts.maxBufferedBytes) {
        throw new TransportError('limit', `the data channel buffer would pass ${this.opts.maxBufferedBytes} bytes`);
      }
      let bytes = 0;
      for (const f of encodeReliable(data, this.chunkBytes)) {
        if (!this.transmit(chan.dc, f)) return;
        bytes += f.length;
      }
      chan.sent++;
      chan.ledger.push(bytes, data.length, true);
      chan.ledger.update(chan.dc.bufferedAmount);
      this.refreshStats();
      if (chan.ledger.length > 0) this.armPoll();
      return;
    }
    const frame = encodeUnreliable(chan.nextSeq, data);
    chan.nextSeq = (chan.nextSeq + 1) >>> 0;
    if (chan.pending) {
      this.pendingCount--;
      this.pendingBytes -= chan.pending.length - UNRELIABLE_HEADER_BYTES;
      chan.pending = undefined;
      this.stats.staleDropped++;
    }
    if (chan.dc.bufferedAmount <= this.opts.highWaterBytes) {
      this.transmit(chan.dc, frame);
      return;
    }
    chan.pending = frame;
    this.pendingCount++;
    this.pendingBytes += data.length;
    this.refreshStats();
    this.armPoll();
  }

  /** Drops everything queued and stops polling (the connection closed). */
  clear(): void {
    this.pollTimer?.cancel();
    this.pollTimer = undefined;
    for (const c of this.chans) c.pending = undefined;
    this.pendingCount = this.pendingBytes = 0;
    this.queued.length = 0;
    this.queuedBytes = 0;
    this.stats.sendQueueLength = 0;
    this.stats.sendQueueBytes = 0;
  }

  private armPoll(): void {
    if (this.pollTimer || !this.host.open()) return;
    this.pollTimer = this.opts.clock.setTimer(this.opts.pollMs, () => {
      this.pollTimer = undefined;
      this.poll();
    });
  }

  private poll(): void {
    if (!this.host.open()) return;
    let busy = false;
    for (const chan of this.chans) {
      if (chan.pending && chan.dc.bufferedAmount <= this.opts.highWaterBytes) {
        const frame = chan.pending;
        chan.pending = undefined;
        this.pendingCount--;
        this.pendingBytes -= frame.length - UNRELIABLE_HEADER_BYTES;
        this.transmit(chan.dc, frame);
        if (!this.host.open()) return;
      }
      chan.ledger.update(chan.dc.bufferedAmount);
      if (chan.ledger.length > 0 || chan.pending) busy = true;
    }
    this.refreshStats();
    if (busy) this.armPoll();
  }

  private refreshStats(): void {
    let length = this.pendingCount + this.queued.length;
    let bytes = this.pendingBytes + this.queuedBytes;
    for (const c of this.chans) {
      length += c.ledger.length;
      bytes += c.ledger.queuedBytes;
    }
    this.stats.sendQueueLength = length;
    this.stats.sendQueueBytes = bytes;
  }
}

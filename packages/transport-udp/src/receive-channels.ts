import { type ChannelSpec, TransportError } from '@netplay/transport';
import type { UdpConfig } from './config.js';
import type { UdpPeerCounters } from './peer-io.js';
import { AddResult, Reassembly, type ReassemblyBudget } from './reassembly.js';
import { u16, u32 } from './wire.js';

/** Most messages a reliable channel may run ahead of the next one to deliver. */
const MAX_REORDER_MESSAGES = 1 << 16;

/** One channel's incoming side. */
interface InChannel {
  readonly reliable: boolean;
  nextDeliver: number;
  lastUnreliable: number;
}

/** What {@link ReceiveChannels} needs from its peer. */
export interface ReceiveSink {
  /** Whether the connection is open (messages are delivered only then). */
  readonly open: boolean;
  /** Hands one message to the application. */
  deliver(channel: string, data: Uint8Array): void;
  /** Ends the connection with `error` (the peer broke a limit). */
  fail(error: TransportError): void;
  /** Counts a malformed frame (the rest of its datagram is ignored). */
  malformed(what: string): void;
}

/**
 * The receive side of a UDP peer's channels: reliable messages delivered once and in order (a
 * whole next-in-order message directly, anything else through {@link Reassembly}, capped per
 * connection and listener-wide), unreliable-sequenced ones delivered only when newer than the last.
 * Keeps `counters.reassemblyBytes`.
 * @internal
 */
export class ReceiveChannels {
  private readonly inp: InChannel[];
  private readonly reassembly: Reassembly;

  constructor(
    private readonly channels: readonly ChannelSpec[],
    private readonly config: UdpConfig,
    private readonly counters: UdpPeerCounters,
    private readonly sink: ReceiveSink,
    budget: ReassemblyBudget | undefined,
  ) {
    this.inp = channels.map((c) => ({ reliable: c.kind === 'reliable', nextDeliver: 0, lastUnreliable: -1 }));
    this.reassembly = new Reassembly(config.maxReassemblyBytes, budget, () =>
      sink.fail(
        new TransportError('limit', 'listener reassembly limit: this connection held the oldest unfinished message'),
      ),
    );
  }

  /** Handles a Fragment frame whose fields start at `p`; returns the offset after it, or −1 after a fatal error. */
  fragment(d: Uint8Array, p: number, chIndex: number, end: number): number {
    const msgSeq = u32(d, p);
    const msgLen = u32(d, p + 4);
    const idx = u32(d, p + 8);
    const fragSize = u16(d, p + 12);
    const ch = this.inp[chIndex];
    if (!ch?.reliable) {
      this.sink.malformed(`fragment on channel ${chIndex}, which is not reliable`);
      return -1;
    }
    if (msgLen > this.config.maxMessageBytes) {
      this.sink.fail(new TransportError('too-large', `peer announced a ${msgLen}-byte message`));
      return -1;
    }
    if (fragSize < 64) {
      this.sink.malformed('fragment size below 64');
      return -1;
    }
    const fragCount = Math.max(1, Math.ceil(msgLen / fragSize));
    if (idx >= fragCount) {
      this.sink.malformed('fragment index past the end of the message');
      return -1;
    }
    const len = Math.min(fragSize, msgLen - idx * fragSize);
    const dataAt = p + 14;
    if (dataAt + len > end) {
      this.sink.malformed('truncated fragment');
      return -1;
    }
    const next = dataAt + len;
    const ahead = (msgSeq - ch.nextDeliver) >>> 0;
    if (ahead >= 0x8000_0000) return next; // already delivered: a duplicate
    if (ahead >= MAX_REORDER_MESSAGES) {
      this.sink.fail(new TransportError('limit', 'peer is too far ahead on a reliable channel'));
      return -1;
    }
    if (!this.sink.open) return next;
    if (fragCount === 1 && ahead === 0) {
      // The common case (inputs): a whole message that is next in order; no reassembly state.
      ch.nextDeliver = (ch.nextDeliver + 1) >>> 0;
      this.sink.deliver(this.channels[chIndex]!.name, d.slice(dataAt, next));
      if (this.sink.open) this.deliverReliable(chIndex, ch);
      return next;
    }
    const added = this.reassembly.add(chIndex, msgSeq, msgLen, fragSize, fragCount, idx, d, dataAt, next);
    this.counters.reassemblyBytes = this.reassembly.held;
    if (added !== AddResult.Held) {
      if (added === AddResult.Mismatch) this.sink.malformed('fragments of one message disagree on its size');
      else
        this.sink.fail(
          new TransportError(
            'limit',
            `reassembly memory limit (${added === AddResult.OverConnection ? `${this.config.maxReassemblyBytes} bytes` : 'listener-wide'})`,
          ),
        );
      return -1;
    }
    if (msgSeq === ch.nextDeliver) this.deliverReliable(chIndex, ch);
    return next;
  }

  /** Handles an Unreliable frame of channel `chIndex`, sequence `seq`, payload `d[start, end)`. */
  unreliable(chIndex: number, seq: number, d: Uint8Array, start: number, end: number): void {
    const ch = this.inp[chIndex];
    if (!ch || ch.reliable) {
      this.sink.malformed(`unreliable frame on channel ${chIndex}`);
      return;
    }
    if (!this.sink.open) return;
    if (
      ch.lastUnreliable >= 0 &&
      (((seq - ch.lastUnreliable) & 0xffff) === 0 || ((seq - ch.lastUnreliable) & 0xffff) >= 0x8000)
    ) {
      return; // stale or duplicate
    }
    ch.lastUnreliable = seq;
    this.sink.deliver(this.channels[chIndex]!.name, d.slice(start, end));
  }

  /** Frees every held message. */
  clear(): void {
    this.reassembly.clear();
    this.counters.reassemblyBytes = 0;
  }

  private deliverReliable(chIndex: number, ch: InChannel): void {
    const name = this.channels[chIndex]!.name;
    for (;;) {
      const data = this.reassembly.take(chIndex, ch.nextDeliver);
      if (!data) return;
      ch.nextDeliver = (ch.nextDeliver + 1) >>> 0;
      this.counters.reassemblyBytes = this.reassembly.held;
      this.sink.deliver(name, data);
      if (!this.sink.open) return;
    }
  }
}

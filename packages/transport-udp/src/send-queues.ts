import {
  type ChannelSpec,
  type ConnectionLimits,
  type MutableConnectionStats,
  TransportError,
} from '@netplay/transport';
import type { UdpConfig } from './config.js';
import type { CongestionWindow } from './congestion-window.js';
import { Deque } from './deque.js';
import { type InFlightPackets, MAX_TRACKED } from './in-flight.js';
import { MessagePool, type OutMessage } from './out-message.js';
import type { SentPacket } from './sent-packet.js';
import { FRAGMENT_HEADER_BYTES, FrameType, putFrameStart, putU32, putVarint, UNRELIABLE_HEADER_BYTES } from './wire.js';

/** One channel's outgoing side. */
interface OutChannel {
  readonly index: number;
  readonly reliable: boolean;
  nextSeq: number;
  /**
   * Reliable: messages not yet released, oldest first. The front one leaves (back to the pool) once
   * it and every earlier one are fully acknowledged.
   */
  readonly pending: Deque<OutMessage>;
  /** Index in `pending` of the first message that may have never-sent fragments. */
  cursor: number;
  /** Fragments to resend: message and fragment index, in two parallel rings. */
  readonly resendMsg: Deque<OutMessage>;
  readonly resendIdx: Deque<number>;
  inFlightBytes: number;
  /** Unreliable: messages not yet sent. */
  readonly unsent: Deque<OutMessage>;
}

const MAX_UNRELIABLE_QUEUE = 64;
/** Tracked-packet slots only express traffic may use. */
const EXPRESS_RESERVE = 8;

/**
 * The send side of a UDP peer's channels: the queues of messages not yet sent or not yet
 * acknowledged (pooled copies), which fragment goes next (resends first, round robin over
 * channels, within the congestion window and the receiver's reassembly limit), and the frames they
 * become in a datagram. Keeps the send-queue counters of the connection's stats. Allocation-free
 * in the steady state.
 * @internal
 */
export class SendQueues {
  /** After {@link writeFragments}: the record of the packet its fragments went into, if any. */
  packet: SentPacket | undefined;
  private readonly out: OutChannel[];
  private readonly byName = new Map<string, OutChannel>();
  private readonly pool = new MessagePool();
  private rr = 0;
  /** Bytes of messages whose first fragment went out and that are not released yet. */
  private startedMessageBytes = 0;
  /** Reliable bytes in flight over every channel, from {@link beginFlush}. */
  private totalInFlight = 0;
  // The fragment chosen by nextFragment (fields, not a fresh object per call).
  private nfMsg: OutMessage | undefined;
  private nfIdx = 0;
  private nfBytes = 0;
  private nfResend = false;

  constructor(
    channels: readonly ChannelSpec[],
    private readonly config: UdpConfig,
    private readonly limits: ConnectionLimits,
    private readonly fragSize: number,
    private readonly stats: MutableConnectionStats,
    private readonly inFlight: InFlightPackets,
    private readonly window: CongestionWindow,
  ) {
    this.out = channels.map((c, index) => ({
      index,
      reliable: c.kind === 'reliable',
      nextSeq: 0,
      pending: new Deque<OutMessage>(),
      cursor: 0,
      resendMsg: new Deque<OutMessage>(),
      resendIdx: new Deque<number>(),
      inFlightBytes: 0,
      unsent: new Deque<OutMessage>(),
    }));
    for (const c of this.out) this.byName.set(channels[c.index]!.name, c);
  }

  /**
   * Queues a copy of `data` on `channel` (an unreliable channel drops its oldest unsent message
   * when 64 are waiting).
   * @throws TransportError `unknown-channel`, `too-large`, or `limit` (send queue full).
   */
  enqueue(channel: string, data: Uint8Array): void {
    const ch = this.byName.get(channel);
    if (!ch) throw new TransportError('unknown-channel', `no channel named "${channel}"`);
    if (ch.reliable) {
      if (data.length > this.limits.maxMessageBytes) {
        throw new TransportError(
          'too-large',
          `${data.length} bytes exceed maxMessageBytes ${this.limits.maxMessageBytes}`,
        );
      }
      if (this.stats.sendQueueLength >= this.config.maxSendQueue) {
        throw new TransportError('limit', `send queue full (${this.config.maxSendQueue} messages)`);
      }
      const fragCount = Math.max(1, Math.ceil(data.length / this.fragSize));
      ch.pending.push(this.pool.take(ch.index, ch.nextSeq++ >>> 0, data, fragCount));
      this.stats.sendQueueLength++;
      this.stats.sendQueueBytes += data.length;
    } else {
      if (data.length > this.limits.maxUnreliableBytes) {
        throw new TransportError(
          'too-large',
          `${data.length} bytes exceed maxUnreliableBytes ${this.limits.maxUnreliableBytes}`,
        );
      }
      if (ch.unsent.length >= MAX_UNRELIABLE_QUEUE) {
        // Backed up: the oldest unsent message is stale anyway.
        const dropped = ch.unsent.shift()!;
        this.stats.sendQueueLength--;
        this.stats.sendQueueBytes -= dropped.length;
        this.pool.release(dropped);
      }
      ch.unsent.push(this.pool.take(ch.index, ch.nextSeq++ >>> 0, data, 1));
      this.stats.sendQueueLength++;
      this.stats.sendQueueBytes += data.length;
    }
  }

  /** Drops every unsent unreliable message (closing: reliable ones are still delivered). */
  dropUnsent(): void {
    for (const ch of this.out) {
      for (let u = ch.unsent.shift(); u; u = ch.unsent.shift()) {
        this.stats.sendQueueLength--;
        this.stats.sendQueueBytes -= u.length;
        this.pool.release(u);
      }
    }
  }

  /** Starts a flush: sums the reliable bytes in flight. */
  beginFlush(): void {
    let total = 0;
    for (let k = 0; k < this.out.length; k++) total += this.out[k]!.inFlightBytes;
    this.totalInFlight = total;
  }

  /** Writes the unsent unreliable messages that fit before `limit` at `buf[o]`; returns the new offset. */
  writeUnreliable(buf: Uint8Array, o: number, limit: number): number {
    const n = this.out.length;
    for (let k = 0; k < n; k++) {
      const ch = this.out[k]!;
      for (let u = ch.unsent.peek(); u; u = ch.unsent.peek()) {
        if (o + UNRELIABLE_HEADER_BYTES + u.length > limit) break;
        ch.unsent.shift();
        o = putFrameStart(buf, o, FrameType.Unreliable, k);
        buf[o] = u.seq >>> 8;
        buf[o + 1] = u.seq;
        o = putVarint(buf, o + 2, u.length);
        u.copyTo(0, u.length, buf, o);
        o += u.length;
        this.stats.sendQueueLength--;
        this.stats.sendQueueBytes -= u.length;
        this.pool.release(u);
      }
    }
    return o;
  }

  /**
   * Writes reliable fragments that may go now and fit before `limit` at `buf[o]`: resends first,
   * round robin over channels, one fragment per turn. Sets {@link packet} to the record they are
   * in (undefined if none went); returns the new offset.
   */
  writeFragments(buf: Uint8Array, o: number, limit: number): number {
    const n = this.out.length;
    const fragSize = this.fragSize;
    let packet: SentPacket | undefined;
    let progressed = true;
    while (progressed && o + FRAGMENT_HEADER_BYTES < limit) {
      progressed = false;
      for (let step = 0; step < n; step++) {
        const ch = this.out[(this.rr + step) % n]!;
        if (!ch.reliable) continue;
        if (!this.nextFragment(ch, packet !== undefined)) continue;
        const msg = this.nfMsg!;
        const idx = this.nfIdx;
        const bytes = this.nfBytes;
        if (o + FRAGMENT_HEADER_BYTES + bytes > limit) continue;
        this.takeFragment(ch, msg, idx);
        o = putFrameStart(buf, o, FrameType.Fragment, ch.index);
        putU32(buf, o, msg.seq);
        putU32(buf, o + 4, msg.length);
        putU32(buf, o + 8, idx);
        buf[o + 12] = fragSize >>> 8;
        buf[o + 13] = fragSize;
        msg.copyTo(idx * fragSize, bytes, buf, o + 14);
        o += 14 + bytes;
        msg.fragState[idx] = 1;
        ch.inFlightBytes += bytes;
        this.totalInFlight += bytes;
        packet ??= this.inFlight.take();
        packet.add(msg, idx);
        progressed = true;
      }
      this.rr = (this.rr + 1) % n;
    }
    this.packet = packet;
    return o;
  }

  /**
   * The fragments of packet `p` were acknowledged (the window grows by each); returns whether a
   * message was completed by it.
   */
  acked(p: SentPacket): boolean {
    let done = false;
    for (let k = 0; k < p.fragCount; k++) {
      const msg = p.fragMsg[k]!;
      const idx = p.fragIdx[k]!;
      if (msg.fragState[idx] !== 1) continue;
      msg.fragState[idx] = 2;
      const bytes = this.fragBytes(msg, idx);
      const ch = this.out[msg.channel]!;
      ch.inFlightBytes -= bytes;
      this.window.onAcked(bytes);
      if (++msg.ackedCount === msg.fragCount) {
        this.messageDone(ch, msg);
        done = true;
      }
    }
    return done;
  }

  /** Packet `p` was declared lost: its fragments go back in line to be resent. */
  lost(p: SentPacket): void {
    for (let k = 0; k < p.fragCount; k++) {
      const msg = p.fragMsg[k]!;
      const idx = p.fragIdx[k]!;
      if (msg.fragState[idx] !== 1) continue;
      msg.fragState[idx] = 0;
      const ch = this.out[msg.channel]!;
      ch.inFlightBytes -= this.fragBytes(msg, idx);
      ch.resendMsg.push(msg);
      ch.resendIdx.push(idx);
    }
  }

  /** Forgets every queued message. */
  clear(): void {
    for (const ch of this.out) {
      ch.pending.clear();
      ch.resendMsg.clear();
      ch.resendIdx.clear();
      ch.unsent.clear();
    }
  }

  /** Bytes of fragment `idx` of `msg`. */
  private fragBytes(msg: OutMessage, idx: number): number {
    return Math.min(this.fragSize, msg.length - idx * this.fragSize);
  }

  /** Message `msg` of `ch` is fully acknowledged. */
  private messageDone(ch: OutChannel, msg: OutMessage): void {
    this.stats.sendQueueLength--;
    this.stats.sendQueueBytes -= msg.length;
    // The receiver frees a message once it and every earlier one on its channel arrived: only then
    // does it leave the reassembly budget, and the sender's copy goes back to the pool.
    for (let m = ch.pending.peek(); m && m.ackedCount === m.fragCount; m = ch.pending.peek()) {
      ch.pending.shift();
      if (ch.cursor > 0) ch.cursor--;
      this.startedMessageBytes -= m.length;
      this.pool.release(m);
    }
  }

  /**
   * Whether channel `ch` may put another fragment in flight now. The ack bitfield covers
   * {@link MAX_TRACKED} packets, so at most that many tracked packets are in flight, the last few
   * reserved for express traffic. A channel with less than `expressBytes` in flight (an input
   * channel) may send even when the congestion window is full.
   */
  private canSendReliable(ch: OutChannel, packetTracked: boolean): boolean {
    const express = ch.inFlightBytes < this.config.expressBytes;
    if (!packetTracked && this.inFlight.count >= (express ? MAX_TRACKED : MAX_TRACKED - EXPRESS_RESERVE)) return false;
    return express || this.totalInFlight < this.window.bytes;
  }

  /**
   * Chooses the next fragment channel `ch` may send now (into `nfMsg`, `nfIdx`, `nfBytes`,
   * `nfResend`): a fragment to resend first, else the next never-sent one. False if none.
   */
  private nextFragment(ch: OutChannel, packetTracked: boolean): boolean {
    while (ch.resendMsg.length > 0 && ch.resendMsg.peek()!.fragState[ch.resendIdx.peek()!] !== 0) {
      ch.resendMsg.shift();
      ch.resendIdx.shift();
    }
    if (!this.canSendReliable(ch, packetTracked)) return false;
    const again = ch.resendMsg.peek();
    if (again) {
      this.nfMsg = again;
      this.nfIdx = ch.resendIdx.peek()!;
      this.nfBytes = this.fragBytes(again, this.nfIdx);
      this.nfResend = true;
      return true;
    }
    while (ch.cursor < ch.pending.length) {
      const msg = ch.pending.at(ch.cursor);
      if (msg.nextFrag < msg.fragCount) {
        if (msg.nextFrag === 0) {
          // Keep what the receiver must buffer under its reassembly limit.
          const budget = this.config.maxReassemblyBytes / 2;
          if (this.startedMessageBytes > 0 && this.startedMessageBytes + msg.length > budget) return false;
        }
        this.nfMsg = msg;
        this.nfIdx = msg.nextFrag;
        this.nfBytes = this.fragBytes(msg, msg.nextFrag);
        this.nfResend = false;
        return true;
      }
      ch.cursor++;
    }
    return false;
  }

  /** Takes the fragment chosen by {@link nextFragment} off its queue. */
  private takeFragment(ch: OutChannel, msg: OutMessage, idx: number): void {
    if (this.nfResend) {
      ch.resendMsg.shift();
      ch.resendIdx.shift();
      this.stats.retransmissions++;
      return;
    }
    if (idx === 0) this.startedMessageBytes += msg.length;
    msg.nextFrag++;
  }
}

import type { Emitter } from '@netplay/transport';
import type { SessionEventMap } from './events.js';
import { type InputMessage, NO_ECHO, resolve16 } from './input-message.js';
import type { PeerSet } from './peer-set.js';
import { type Remote, TIME_SAMPLES } from './remote.js';
import type { Timeline } from './timeline.js';

/**
 * Time sync (GGPO's frame advantage, RetroArch's catch-up): INPUT messages carry the sender's
 * frame, its advantage over the receiver and the echo of the receiver's newest message seq, from which each peer measures the
 * round trip, estimates where every other peer is now, and averages how far it runs ahead of each
 * (`(local advantage − remote advantage) / 2` over the last {@link TIME_SAMPLES} frames).
 * @internal
 */
export class TimeSync {
  private readonly frameMs: number;
  private lastWaitEvent = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly emitter: Emitter<SessionEventMap>,
    fps: number,
    private readonly waitInterval: number,
  ) {
    this.frameMs = 1000 / fps;
  }

  /** How many frames this peer runs ahead of the slowest connected peer (0 if none is synchronized). */
  get framesAhead(): number {
    let best = Number.NEGATIVE_INFINITY;
    for (const r of this.peers.list) if (r.connected && r.synchronized && r.framesAhead > best) best = r.framesAhead;
    return best === Number.NEGATIVE_INFINITY ? 0 : best;
  }

  /** Frames to skip now to let the others catch up (0 when in step), at most the prediction window. */
  get recommendedWait(): number {
    // The loop of `framesAhead` written out: `update` asks every frame, and a double returned by a
    // getter V8 does not inline is boxed (16 B per frame in some runs, as the JIT inlined or not).
    let best = Number.NEGATIVE_INFINITY;
    for (const r of this.peers.list) if (r.connected && r.synchronized && r.framesAhead > best) best = r.framesAhead;
    return best >= 1 ? Math.min(Math.round(best), this.timeline.maxPrediction) : 0;
  }

  /** Extra frames to run because every other peer is at least two frames ahead of this one. */
  get catchUpFrames(): number {
    let worst = Number.POSITIVE_INFINITY;
    for (const r of this.peers.list) if (r.connected && r.synchronized && r.framesAhead < worst) worst = r.framesAhead;
    if (worst === Number.POSITIVE_INFINITY) return 0;
    return worst <= -2 ? Math.floor(-worst) : 0;
  }

  /** How many frames `r` is estimated to be behind this peer (0 until heard). */
  framesBehind(r: Remote, now: number): number {
    return r.remoteFrame < 0 ? 0 : this.timeline.currentFrame - this.remoteFrameEstimate(r, now);
  }

  /** Takes the timing of an INPUT message from `r`: its frame and advantage, the echo, a round-trip sample. */
  observe(r: Remote, m: InputMessage, now: number): void {
    if (m.frame >= r.remoteFrame) {
      r.remoteFrame = m.frame;
      r.remoteFrameAt = now;
      r.remoteAdvantage = m.advantage16 / 16;
    }
    if (m.echoDelay !== NO_ECHO) {
      // The echo names one of our messages by its seq: its send time is remembered per seq.
      const full = resolve16(m.echoSeq, r.sendCount - 1);
      const slot = full & (r.seqSent.length - 1);
      if (full < r.sendCount && r.seqSent[slot] === full) {
        const sample = now - r.seqSentAt[slot]! - m.echoDelay;
        if (sample >= 0 && sample < 60_000) {
          r.rttMs = r.rttSamples === 0 ? sample : r.rttMs * 0.875 + sample * 0.125;
          r.rttSamples++;
        }
      }
    }
  }

  /** Writes the timing fields of an INPUT message to `r`. */
  stamp(m: InputMessage, r: Remote, now: number): void {
    // The local advantage, written out (see `update`).
    const local =
      r.remoteFrame < 0
        ? 0
        : this.timeline.currentFrame - (r.remoteFrame + (now - r.remoteFrameAt + r.rttMs / 2) / this.frameMs);
    m.advantage16 = Math.max(-32768, Math.min(32767, Math.round(local * 16)));
    m.echoSeq = r.echoSeq;
    m.echoDelay = r.echoAt < 0 ? NO_ECHO : Math.min(NO_ECHO - 1, Math.max(0, Math.floor(now - r.echoAt)));
  }

  /** Adds this frame's sample for every connected peer, and recommends waiting (at most every `waitInterval` frames). */
  update(now: number): void {
    for (const r of this.peers.list) {
      if (!r.connected || r.remoteFrame < 0) continue;
      // How far this peer is ahead of r now: the current frame less r's estimated frame. Written
      // out here and in `stamp` (every peer, every frame) rather than returned by a method: V8
      // boxes a double returned by a call it does not inline, an allocation per peer per frame.
      const local = this.timeline.currentFrame - (r.remoteFrame + (now - r.remoteFrameAt + r.rttMs / 2) / this.frameMs);
      const sample = (local - r.remoteAdvantage) / 2;
      r.samples[r.sampleAt] = sample;
      r.sampleAt = (r.sampleAt + 1) % TIME_SAMPLES;
      if (r.sampleCount < TIME_SAMPLES) r.sampleCount++;
      let sum = 0;
      for (let i = 0; i < r.sampleCount; i++) sum += r.samples[i]!;
      r.framesAhead = sum / r.sampleCount;
    }
    const wait = this.recommendedWait;
    const cur = this.timeline.currentFrame;
    if (wait > 0 && cur - this.lastWaitEvent >= this.waitInterval) {
      this.lastWaitEvent = cur;
      this.emitter.emit('wait-recommended', { frames: wait });
    }
  }

  /** The frame `r` is estimated to be at now: its last frame heard, plus the time since and half a round trip. */
  private remoteFrameEstimate(r: Remote, now: number): number {
    return r.remoteFrame + (now - r.remoteFrameAt + r.rttMs / 2) / this.frameMs;
  }
}

import {
  DecodeError,
  decodeInputStream,
  encodeInputStream,
  INPUT_STREAM_MAX_FRAMES,
  type InputStreamHeaderInfo,
  inputStreamMaxEncodedSize,
} from '@netplay/protocol';
import type { Clock } from '@netplay/transport';
import { INPUT_CHANNEL } from './channels.js';
import type { HostRole } from './host-role.js';
import {
  blankInputHeader,
  INPUT_HEADER_BYTES,
  type InputHeader,
  readInputHeader,
  writeInputHeader,
} from './messages.js';
import type { PeerSet } from './peer-set.js';
import type { Remote } from './remote.js';
import type { TimeSync } from './time-sync.js';
import type { Timeline } from './timeline.js';

/**
 * The input exchange of a full mesh (GGPO): every frame each peer sends each other peer one INPUT
 * message on the unreliable channel, a header (frame, ack, timing, the host's decision count) and
 * every input of its player the receiver has not acknowledged, encoded with the protocol's
 * input-stream codec; received inputs that extend a player's queue are confirmed. Buffers, views
 * and headers are reused: the steady state allocates nothing.
 * @internal
 */
export class InputExchange {
  private readonly outBuf: Uint8Array;
  private readonly encodeIn: Uint8Array;
  private readonly decodeOut: Uint8Array;
  private readonly header: InputHeader = blankInputHeader();
  private readonly streamHeader: InputStreamHeaderInfo = {
    startFrame: 0,
    frameCount: 0,
    inputSize: 0,
    hasReference: false,
  };
  private readonly decodeOptions: { header: InputStreamHeaderInfo; maxBytes: number; offset: number };
  private readonly streamSpec = { startFrame: 0, frameCount: 0, inputSize: 0 };
  private readonly outViews: Uint8Array[] = [];
  /** Per player: 1 while its inputs are not taken from INPUT messages (its leave is being decided). */
  private readonly frozen = new Uint8Array(16);

  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly timeSync: TimeSync,
    private readonly role: HostRole,
    private readonly clock: Clock,
    private readonly localPlayer: number,
  ) {
    const ib = timeline.inputBytes;
    this.outBuf = new Uint8Array(INPUT_HEADER_BYTES + inputStreamMaxEncodedSize(INPUT_STREAM_MAX_FRAMES, ib));
    this.encodeIn = new Uint8Array(INPUT_STREAM_MAX_FRAMES * ib);
    this.decodeOut = new Uint8Array(INPUT_STREAM_MAX_FRAMES * ib);
    this.decodeOptions = { header: this.streamHeader, maxBytes: this.decodeOut.length, offset: 0 };
  }

  /** Stops taking `player`'s inputs from INPUT messages (its leave is being decided). */
  freeze(player: number): void {
    this.frozen[player] = 1;
  }

  /** Takes every player's inputs again but `player`'s (the old host's report requests are void). */
  unfreezeAllBut(player: number): void {
    for (let p = 0; p < this.timeline.players; p++) if (p !== player) this.frozen[p] = 0;
  }

  /** Sends every connected player our inputs it has not acknowledged (at most 255 frames). */
  send(now: number): void {
    const t = this.timeline;
    const q = t.queues[this.localPlayer]!;
    const ib = t.inputBytes;
    const h = this.header;
    const nowU32 = Math.floor(now) >>> 0;
    for (const r of this.peers.list) {
      if (!r.connected) continue;
      h.player = this.localPlayer;
      h.frame = t.currentFrame;
      const rq = t.queues[r.player]!;
      h.ack = rq.lastFrame + 1;
      this.timeSync.stamp(h, r, now, nowU32);
      h.epoch = this.role.epoch;
      h.held = Math.min(t.unreadFrame, 0xffffffff);
      writeInputHeader(this.outBuf, h);
      let n = INPUT_HEADER_BYTES;
      const from = Math.max(r.ackNext, q.oldestFrame);
      const count = Math.min(q.lastFrame - from + 1, INPUT_STREAM_MAX_FRAMES);
      if (count > 0) {
        for (let i = 0; i < count; i++) {
          const src = q.input(from + i)!;
          this.encodeIn.set(src, i * ib);
        }
        const spec = this.streamSpec;
        spec.startFrame = from;
        spec.frameCount = count;
        spec.inputSize = ib;
        n += encodeInputStream(spec, this.encodeIn, undefined, this.outBuf, INPUT_HEADER_BYTES);
      }
      this.peers.send(r, INPUT_CHANNEL, this.outView(n));
    }
  }

  /** An INPUT message from `r`: its timing and ack, then the inputs that extend its player's queue. */
  onInput(r: Remote, data: Uint8Array): void {
    const h = this.header;
    readInputHeader(data, h);
    if (h.player !== r.player)
      throw new DecodeError('bad-value', 1, `peer ${r.peer} plays ${r.player}, not ${h.player}`);
    const now = this.clock.now();
    this.timeSync.observe(r, h, now);
    // Liveness by progress: a replayed (old) message is not news; `held` only grows; only a new
    // message tells how many host decisions the sender has applied.
    if (!r.inputSeen || ((h.sendTime - r.newestSend) | 0) > 0) {
      r.inputSeen = true;
      r.newestSend = h.sendTime;
      r.freshInputAt = now;
      r.decisions = h.epoch;
    }
    if (h.held > r.held) r.held = h.held;
    if (h.ack > r.ackNext) r.ackNext = h.ack;
    // Host inputs made after a decision this peer has not applied yet wait for it (they are resent).
    // Inputs this peer does not take now (not the sender's fault: it is not suspected for them).
    r.inputsHeld = (r.peer === this.role.hostPeer && h.epoch !== this.role.epoch) || this.frozen[r.player] === 1;
    if (r.inputsHeld) return;
    if (data.length > INPUT_HEADER_BYTES) this.take(r.player, data, INPUT_HEADER_BYTES);
  }

  /**
   * Decodes an input stream of one player (in `bytes` from `offset` to the end: no copy, no view)
   * and confirms the frames that extend its queue.
   */
  take(player: number, bytes: Uint8Array, offset = 0): void {
    this.decodeOptions.offset = offset;
    decodeInputStream(bytes, this.decodeOut, this.decodeOptions);
    const sh = this.streamHeader;
    if (sh.inputSize !== this.timeline.inputBytes)
      throw new DecodeError('bad-value', 5, `input size ${sh.inputSize}, expected ${this.timeline.inputBytes}`);
    const q = this.timeline.queues[player]!;
    const ib = sh.inputSize;
    const next = q.lastFrame + 1;
    if (sh.startFrame > next) return; // a gap: wait for a packet that starts earlier
    for (let i = Math.max(0, next - sh.startFrame); i < sh.frameCount; i++) {
      this.timeline.confirm(player, sh.startFrame + i, this.decodeOut, i * ib);
    }
  }

  /** The last (up to 128) inputs of `player` before `frame`, as an input stream, so peers that missed some can confirm them. */
  lastInputs(player: number, frame: number): Uint8Array | undefined {
    const q = this.timeline.queues[player]!;
    const from = Math.max(q.oldestFrame, frame - 128, 0);
    const count = frame - from;
    if (count <= 0) return undefined;
    const ib = this.timeline.inputBytes;
    for (let i = 0; i < count; i++) this.encodeIn.set(q.input(from + i)!, i * ib);
    const buf = new Uint8Array(inputStreamMaxEncodedSize(count, ib));
    const n = encodeInputStream({ startFrame: from, frameCount: count, inputSize: ib }, this.encodeIn, undefined, buf);
    return buf.subarray(0, n);
  }

  /** A view of the first `n` bytes of the output buffer, made once per length. */
  private outView(n: number): Uint8Array {
    let v = this.outViews[n];
    if (v === undefined) {
      v = this.outBuf.subarray(0, n);
      this.outViews[n] = v;
    }
    return v;
  }
}

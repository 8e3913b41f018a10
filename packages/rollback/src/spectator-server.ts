import { EncodeError, encodeInputStream, INPUT_STREAM_MAX_FRAMES, inputStreamMaxEncodedSize } from '@netplay/protocol';
import type { Emitter } from '@netplay/transport';
import { CONTROL_CHANNEL, type SendFn } from './channels.js';
import type { SessionEventMap } from './events.js';
import { encodeByteFrameTail, encodeSync, MessageType, PRESENT } from './messages.js';
import type { PeerSet } from './peer-set.js';
import type { Timeline } from './timeline.js';

/** A {@link SpectatorSession} watching through the host. */
interface Spectator {
  readonly peer: string;
  /** Next confirmed frame to send; −1 until synced. */
  nextFrame: number;
}

/**
 * The host's side of spectating (RetroArch's SYNC): a spectator that asked (SPECTATE) is synced at
 * the host's confirmed frame with its savestate (SYNC; JOINED tells the players), then streamed
 * the confirmed inputs of every player (CONFIRMED) as frames become final.
 * @internal
 */
export class SpectatorServer {
  private readonly spectators: Spectator[] = [];
  private readonly rowScratch: Uint8Array;

  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly sendFn: SendFn,
    private readonly stateSource: ((frame: number) => Uint8Array | undefined) | undefined,
    private readonly emitter: Emitter<SessionEventMap>,
  ) {
    this.rowScratch = new Uint8Array(INPUT_STREAM_MAX_FRAMES * timeline.inputBytes * timeline.players);
  }

  /** `peer` asked to watch (SPECTATE); it is synced at the next frame. */
  add(peer: string): void {
    if (!this.spectators.some((s) => s.peer === peer)) this.spectators.push({ peer, nextFrame: -1 });
  }

  /** Drops `peer` if it is a spectator; false if it is not one. */
  remove(peer: string): boolean {
    const si = this.spectators.findIndex((s) => s.peer === peer);
    if (si < 0) return false;
    this.spectators.splice(si, 1);
    return true;
  }

  /** The first frame no spectator was streamed yet (a player may enter only from there on). */
  streamedUpTo(): number {
    let f = 0;
    for (const s of this.spectators) if (s.nextFrame > f) f = s.nextFrame;
    return f;
  }

  /** Sends a control message to every synced spectator. */
  sendToSynced(data: Uint8Array): void {
    for (const s of this.spectators) if (s.nextFrame >= 0) this.sendFn(s.peer, CONTROL_CHANNEL, data);
  }

  /** A state was loaded at `frame`: inputs before it are irrelevant, spectators jump to it too. */
  jumpTo(frame: number): void {
    for (const sp of this.spectators) if (sp.nextFrame >= 0 && sp.nextFrame < frame) sp.nextFrame = frame;
  }

  /** Syncs new spectators at `other` and streams confirmed inputs to the synced ones. */
  serve(other: number, delay: number): void {
    if (this.spectators.length === 0) return;
    const t = this.timeline;
    const unread = Math.min(t.unreadFrame, t.currentFrame + t.maxPrediction + delay + 1);
    for (const s of this.spectators) {
      if (s.nextFrame < 0) {
        const at = Math.min(other, t.currentFrame);
        const state = this.stateSource?.(at);
        if (state === undefined) continue;
        const disconnectFrames = t.queues.map((q) =>
          q.disconnectFrame === Number.POSITIVE_INFINITY ? PRESENT : q.disconnectFrame,
        );
        this.sendFn(
          s.peer,
          CONTROL_CHANNEL,
          encodeSync({ frame: at, players: t.players, inputBytes: t.inputBytes, disconnectFrames, state }),
        );
        s.nextFrame = at;
        this.peers.sendToConnected(encodeByteFrameTail(MessageType.Joined, 0, at, new TextEncoder().encode(s.peer)));
        this.emitter.emit('spectator-joined', { peer: s.peer, frame: at });
      }
      while (s.nextFrame < unread) {
        const count = Math.min(unread - s.nextFrame, INPUT_STREAM_MAX_FRAMES);
        const row = t.players * t.inputBytes;
        if (count * row > this.rowScratch.length) break;
        for (let i = 0; i < count; i++) this.readConfirmedRow(s.nextFrame + i, this.rowScratch, i * row);
        const buf = new Uint8Array(1 + inputStreamMaxEncodedSize(count, row));
        buf[0] = MessageType.Confirmed;
        let n: number;
        try {
          n = encodeInputStream(
            { startFrame: s.nextFrame, frameCount: count, inputSize: row },
            this.rowScratch,
            undefined,
            buf,
            1,
          );
        } catch (e) {
          if (e instanceof EncodeError) break;
          throw e;
        }
        this.sendFn(s.peer, CONTROL_CHANNEL, buf.subarray(0, 1 + n));
        s.nextFrame += count;
      }
    }
  }

  private readConfirmedRow(frame: number, out: Uint8Array, offset: number): void {
    const t = this.timeline;
    for (let p = 0; p < t.players; p++) {
      const q = t.queues[p]!;
      const ib = t.inputBytes;
      if (frame >= q.disconnectFrame) out.fill(0, offset + p * ib, offset + (p + 1) * ib);
      else out.set(q.input(frame)!, offset + p * ib);
    }
  }
}

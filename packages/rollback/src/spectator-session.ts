import { DecodeError, decodeInputStream, type InputStreamHeaderInfo } from '@netplay/protocol';
import { Emitter, type EventSource, type Handler, type Unsubscribe } from '@netplay/transport';
import { CONTROL_CHANNEL, type SendFn } from './channels.js';
import { RollbackError } from './errors.js';
import type { SessionEventMap } from './events.js';
import { decodeByteFrameTail, decodeSync, MessageType, PRESENT } from './messages.js';
import { predictNoInput } from './predictor.js';
import { RequestList, type SessionRequest } from './requests.js';
import { Timeline } from './timeline.js';

/** Options of {@link SpectatorSession}. */
export interface SpectatorSessionOptions {
  /** The host's peer id. */
  readonly hostPeer: string;
  /** Where messages go. */
  readonly send: SendFn;
  /** Confirmed frames buffered beyond which two frames run per step (RetroArch's catch-up; default 4). */
  readonly catchUpThreshold?: number;
}

/**
 * A spectator (RetroArch): it asks the host to watch, loads the host's savestate of the frame
 * it joins at (like RetroArch's SYNC), then simulates only confirmed inputs streamed by the host,
 * never predicting and never rolling back. When it lags, it runs two frames per step.
 */
export class SpectatorSession implements EventSource<SessionEventMap> {
  private readonly emitter = new Emitter<SessionEventMap>();
  private readonly list = new RequestList();
  private readonly hostPeer: string;
  private readonly sendFn: SendFn;
  private readonly catchUpThreshold: number;
  private timeline: Timeline | undefined;
  private pendingSync: { frame: number; state: Uint8Array } | undefined;
  private decodeOut = new Uint8Array(0);
  private readonly header: InputStreamHeaderInfo = { startFrame: 0, frameCount: 0, inputSize: 0, hasReference: false };
  private requested = false;
  private readonly pendingLoads: Array<{ frame: number; state: Uint8Array }> = [];
  /** The frame the spectator joined at (from the host's SYNC), or undefined before. */
  joinFrame: number | undefined;
  /** Undecodable messages dropped. */
  badMessages = 0;

  constructor(options: SpectatorSessionOptions) {
    this.hostPeer = options.hostPeer;
    this.sendFn = options.send;
    this.catchUpThreshold = options.catchUpThreshold ?? 4;
  }

  on<K extends keyof SessionEventMap>(type: K, handler: Handler<SessionEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  /** Number of players (known after the host's SYNC; 0 before). */
  get players(): number {
    return this.timeline?.players ?? 0;
  }

  /** The next frame to simulate (undefined before SYNC). */
  get currentFrame(): number | undefined {
    return this.timeline?.currentFrame;
  }

  /** Confirmed frames received but not simulated yet. */
  get framesBehind(): number {
    const t = this.timeline;
    return t === undefined ? 0 : Math.max(0, t.unreadFrame - t.currentFrame);
  }

  /** Snapshot slots a driver needs (2: a spectator never rolls back). */
  get ringFrames(): number {
    return 2;
  }

  /** Spectators need no checksums. */
  needsChecksum(_frame: number): boolean {
    return false;
  }

  /** Ignored: spectators need no checksums. */
  setChecksum(_frame: number, _checksum: bigint): void {}

  /** The frame from which `player` is gone, or undefined. */
  playerLeftAt(player: number): number | undefined {
    const f = this.timeline?.queues[player]?.disconnectFrame;
    return f === undefined || f === Number.POSITIVE_INFINITY ? undefined : f;
  }

  /** Feeds one message from the host. */
  receive(peer: string, channel: string, data: Uint8Array): void {
    try {
      if (peer !== this.hostPeer || channel !== CONTROL_CHANNEL) return;
      if (data.length === 0) throw new DecodeError('truncated', 0, 'empty message');
      switch (data[0]) {
        case MessageType.Sync: {
          const m = decodeSync(data);
          const t = new Timeline(m.players, m.inputBytes, 0, predictNoInput);
          for (let p = 0; p < m.players; p++) {
            const d = m.disconnectFrames[p]!;
            if (d !== PRESENT) t.queues[p]!.disconnectAt(d);
            t.queues[p]!.restartAt(m.frame);
          }
          this.timeline = t;
          this.decodeOut = new Uint8Array(255 * m.players * m.inputBytes);
          this.pendingSync = { frame: m.frame, state: m.state };
          break;
        }
        case MessageType.Confirmed:
          this.onConfirmed(data.subarray(1));
          break;
        case MessageType.Leave: {
          const m = decodeByteFrameTail(data, 'LEAVE');
          const t = this.timeline;
          if (t === undefined || m.byte >= t.players) return;
          if (t.queues[m.byte]!.disconnectFrame === Number.POSITIVE_INFINITY) {
            t.disconnect(m.byte, m.frame);
            this.emitter.emit('player-left', { player: m.byte, frame: m.frame });
          }
          break;
        }
        case MessageType.Load: {
          // The host loaded a savestate (reason 1) at a frame: apply it at that frame.
          const m = decodeByteFrameTail(data, 'LOAD');
          const t = this.timeline;
          if (m.byte === 1 && t !== undefined) {
            this.pendingLoads.push({ frame: m.frame, state: m.tail.slice() });
            // Inputs before the loaded frame are irrelevant; the host streams from there on.
            for (const q of t.queues) q.restartAt(m.frame);
          }
          break;
        }
        case MessageType.Enter: {
          // A player enters a free slot mid-game: its inputs in the rows count from that frame on.
          const m = decodeByteFrameTail(data, 'ENTER');
          const t = this.timeline;
          if (t === undefined || m.byte >= t.players) return;
          t.rejoin(m.byte, m.frame);
          break;
        }
        case MessageType.Mode: {
          const m = decodeByteFrameTail(data, 'MODE');
          const t = this.timeline;
          const player = m.byte & 0x7f;
          if (t === undefined || player >= t.players) return;
          const playing = (m.byte & 0x80) !== 0;
          if (playing) t.rejoin(player, m.frame);
          else t.disconnect(player, m.frame);
          this.emitter.emit('mode-changed', { player, frame: m.frame, playing });
          break;
        }
        default:
          break;
      }
    } catch (e) {
      if (!(e instanceof DecodeError || e instanceof RollbackError)) throw e;
      this.badMessages++;
      this.emitter.emit('protocol-error', { peer, error: e });
    }
  }

  private onConfirmed(stream: Uint8Array): void {
    const t = this.timeline;
    if (t === undefined) return;
    const h = this.header;
    decodeInputStream(stream, this.decodeOut, { header: h, maxBytes: this.decodeOut.length });
    const ib = t.inputBytes;
    if (h.inputSize !== t.players * ib) throw new DecodeError('bad-value', 5, `row of ${h.inputSize} bytes`);
    for (let i = 0; i < h.frameCount; i++) {
      const f = h.startFrame + i;
      for (let p = 0; p < t.players; p++) {
        const q = t.queues[p]!;
        if (f === q.lastFrame + 1) t.confirm(p, f, this.decodeOut, i * h.inputSize + p * ib);
      }
    }
  }

  /**
   * One step: asks to watch (first call), loads the host's savestate once it arrived, then
   * simulates the next confirmed frame (two when lagging). The returned list is reused.
   */
  advanceFrame(): readonly SessionRequest[] {
    const list = this.list;
    list.clear();
    if (!this.requested) {
      this.requested = true;
      this.sendFn(this.hostPeer, CONTROL_CHANNEL, new Uint8Array([MessageType.Spectate]));
    }
    const t = this.timeline;
    if (t === undefined) return list.done();
    const sync = this.pendingSync;
    if (sync !== undefined) {
      this.pendingSync = undefined;
      t.loadState(list, sync.frame, sync.state);
      this.joinFrame = sync.frame;
      this.emitter.emit('synchronized', { peer: this.hostPeer });
      this.emitter.emit('running', { frame: sync.frame });
    }
    // A state the host loaded: from that frame on it is the truth (a jump, or a replay).
    for (const load of this.pendingLoads.splice(0)) t.loadState(list, load.frame, load.state);
    const steps = this.framesBehind > this.catchUpThreshold ? 2 : 1;
    for (let i = 0; i < steps && t.currentFrame < t.unreadFrame; i++) t.advance(list);
    return list.done();
  }
}

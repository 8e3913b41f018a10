import type { Emitter } from '@netplay/transport';
import type { SessionEventMap } from './events.js';
import type { HostRole } from './host-role.js';
import { decodeByteFrameTail, encodeByteFrameTail, MessageType } from './messages.js';
import type { Timeline } from './timeline.js';

/** A savestate to load at the next frame: the host's own load, or the repair of a desync. */
export interface PendingLoad {
  readonly frame: number;
  readonly state: Uint8Array;
  readonly repair: boolean;
}

/**
 * The host's commands every peer follows (RetroArch's PAUSE and LOAD_SAVESTATE): pause and resume
 * at the host's frame, and savestate loads, the host's own (a decision) or the repair of a desync
 * (LOAD with reason 0), which the session applies at its next frame.
 * @internal
 */
export class HostCommands {
  private pausedFlag = false;
  /** Loads not applied yet, in frame order (a host load waits for its frame). */
  private readonly pendingLoads: PendingLoad[] = [];

  constructor(
    private readonly timeline: Timeline,
    private readonly role: HostRole,
    private readonly emitter: Emitter<SessionEventMap>,
  ) {}

  /** True while the host has the game paused. */
  get paused(): boolean {
    return this.pausedFlag;
  }

  /** Host: pauses (true) or resumes (false) every peer at the current frame. */
  pause(paused: boolean): void {
    this.role.require('pause');
    const frame = this.timeline.currentFrame;
    this.role.broadcast(encodeByteFrameTail(MessageType.Pause, paused ? 1 : 0, frame, undefined));
    this.setPaused(paused, frame);
  }

  /** A PAUSE from the host. */
  onPause(data: Uint8Array): void {
    const m = decodeByteFrameTail(data, 'PAUSE');
    this.setPaused(m.byte === 1, m.frame);
  }

  /**
   * Host: loads `state` as the state of a coming frame on every peer, and returns that frame: the
   * first whose state no peer can have taken as final yet (its inputs include one the host has not
   * given: after the last input any queue holds, plus one). Loading at the current frame could
   * replace a state some peer (the host included, with input delay or a fast link) already holds
   * as final. Every peer applies it when it reaches that frame, or at once by rolling back.
   */
  load(state: Uint8Array): number {
    this.role.require('load a state');
    let last = this.timeline.currentFrame - 2;
    for (const q of this.timeline.queues) if (q.lastFrame > last) last = q.lastFrame;
    const frame = Math.max(this.timeline.currentFrame, last + 2);
    this.queue({ frame, state: state.slice(), repair: false });
    this.role.broadcastDecision(encodeByteFrameTail(MessageType.Load, 1, frame, state));
    return frame;
  }

  /** A LOAD from the host: its decision to load a state, or the repair of this peer's desync. */
  onLoad(data: Uint8Array): void {
    const m = decodeByteFrameTail(data, 'LOAD');
    if (m.byte !== 0) this.role.applied();
    this.queue({ frame: m.frame, state: m.tail.slice(), repair: m.byte === 0 });
  }

  /** The load to apply now, if any (handed out once): the earliest whose frame this peer reached. */
  takeLoad(): PendingLoad | undefined {
    const first = this.pendingLoads[0];
    if (first === undefined || first.frame > this.timeline.currentFrame) return undefined;
    return this.pendingLoads.shift();
  }

  private queue(load: PendingLoad): void {
    let i = this.pendingLoads.length;
    while (i > 0 && this.pendingLoads[i - 1]!.frame > load.frame) i--;
    this.pendingLoads.splice(i, 0, load);
  }

  private setPaused(paused: boolean, frame: number): void {
    if (this.pausedFlag === paused) return;
    this.pausedFlag = paused;
    this.emitter.emit('paused', { paused, frame });
  }
}

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
  private pendingLoad: PendingLoad | undefined;

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

  /** Host: loads `state` as the state of the current frame on every peer; returns that frame. */
  load(state: Uint8Array): number {
    this.role.require('load a state');
    const frame = this.timeline.currentFrame;
    this.pendingLoad = { frame, state: state.slice(), repair: false };
    this.role.broadcastDecision(encodeByteFrameTail(MessageType.Load, 1, frame, state));
    return frame;
  }

  /** A LOAD from the host: its decision to load a state, or the repair of this peer's desync. */
  onLoad(data: Uint8Array): void {
    const m = decodeByteFrameTail(data, 'LOAD');
    if (m.byte !== 0) this.role.applied(data);
    this.pendingLoad = { frame: m.frame, state: m.tail.slice(), repair: m.byte === 0 };
  }

  /** A player entering mid-game: the host's state of `frame`, loaded at the first frame it runs. */
  loadAtStart(frame: number, state: Uint8Array): void {
    this.pendingLoad = { frame, state, repair: false };
  }

  /** The load to apply now, if any (handed out once). */
  takeLoad(): PendingLoad | undefined {
    const load = this.pendingLoad;
    this.pendingLoad = undefined;
    return load;
  }

  private setPaused(paused: boolean, frame: number): void {
    if (this.pausedFlag === paused) return;
    this.pausedFlag = paused;
    this.emitter.emit('paused', { paused, frame });
  }
}

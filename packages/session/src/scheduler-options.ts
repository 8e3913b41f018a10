import { LockstepError, type LockstepMode, resolveLockstepOptions } from '@netplay/lockstep';
import {
  type ResolvedRollbackOptions,
  RollbackError,
  type RollbackOptions,
  resolveRollbackOptions,
} from '@netplay/rollback';
import type { Core } from '@netplay/state';
import { SessionError } from './errors.js';
import type { SessionMode } from './mode.js';

/**
 * The rollback builder's checks and defaults (`resolveRollbackOptions`), its typed error mapped to
 * SessionError `bad-argument` whose message starts with the bad option's name.
 */
export function rollbackOptions(options: RollbackOptions): ResolvedRollbackOptions {
  try {
    return resolveRollbackOptions(options);
  } catch (e) {
    if (e instanceof RollbackError && e.code === 'invalid-option') throw new SessionError('bad-argument', e.message);
    throw e;
  }
}

/** The lockstep builder's mode for each lockstep session mode. */
const LOCKSTEP_MODE: Readonly<Record<Exclude<SessionMode, 'rollback'>, LockstepMode>> = {
  'lockstep-cs': 'client-server',
  'lockstep-p2p': 'mesh',
  'frame-advance': 'frame-advance',
};

/** The scheduler options of a host, as {@link checkSchedulerOptions} reads them (defaults not yet applied). */
export interface SchedulerOptions {
  readonly mode: SessionMode;
  readonly core: Core;
  readonly players: number;
  readonly inputDelay: number;
  readonly fps: number | undefined;
  readonly maxPrediction: number | undefined;
  readonly checksumInterval: number | undefined;
}

/**
 * Checks the host's scheduler options with the builder of its mode (`resolveRollbackOptions` or
 * `resolveLockstepOptions`) before any client arrives, rather than when the game starts.
 * @throws SessionError `bad-argument` whose message starts with the bad option's name
 * (`fps`, `maxPrediction`, `checksumInterval`, `inputDelay`).
 */
export function checkSchedulerOptions(o: SchedulerOptions): void {
  if (o.mode === 'rollback') {
    rollbackOptions({
      core: o.core,
      players: o.players,
      local: 0,
      inputDelay: o.inputDelay,
      ...(o.fps !== undefined ? { fps: o.fps } : {}),
      ...(o.maxPrediction !== undefined ? { maxPrediction: o.maxPrediction } : {}),
      ...(o.checksumInterval !== undefined ? { checksumInterval: o.checksumInterval } : {}),
    });
    return;
  }
  const fps = o.fps ?? 60;
  try {
    // The session runs its lockstep schedulers at 1000 / fps ms a frame; its input delay (0..255,
    // checked with the host's shape) becomes extra delay, which the builder needs finite and ≥ 0.
    resolveLockstepOptions({
      core: o.core,
      mode: LOCKSTEP_MODE[o.mode],
      id: 0,
      frameMs: 1000 / fps,
      extraDelayMs: (o.inputDelay * 1000) / fps,
    });
  } catch (e) {
    if (!(e instanceof LockstepError) || e.code !== 'invalid-option') throw e;
    if (e.option === 'frameMs' || e.option === 'extraDelayMs')
      throw new SessionError('bad-argument', `fps: must give frames of (0, 1000] ms (fps ≥ 1), got ${String(o.fps)}`);
    throw new SessionError('bad-argument', e.message);
  }
}

import type { Core } from '@netplay/state';
import type { CommandHandler, FrameRequest } from './types.js';

/** One frame as a peer ran it. */
export interface LoggedFrame {
  readonly frame: number;
  readonly inputs: Uint8Array;
  readonly command: number;
}

/** Copies a request into a log entry. */
export function logEntry(req: FrameRequest): LoggedFrame {
  return { frame: req.frame, inputs: req.inputs.slice(), command: req.command };
}

/** The default command handler: `Reset` (30) and `PowerToggle` (31) reset the core; other commands are ignored. */
export function defaultCommandHandler(core: Core, command: number): void {
  if (command === 30 || command === 31) core.reset();
}

/**
 * Runs one frame on `core`: sets every port's input from `inputs`, applies the command, advances.
 * This is the whole "driver" a scheduler needs.
 */
export function runFrame<C extends Core>(
  core: C,
  inputs: Uint8Array,
  command: number,
  onCommand: CommandHandler<C> = defaultCommandHandler,
): void {
  const n = core.inputBytes;
  for (let p = 0; p < core.ports; p++) core.setInput(p, inputs.subarray(p * n, p * n + n));
  if (command !== 0) onCommand(core, command);
  core.advance();
}

/**
 * Offline replay: runs `log` (frames in order, starting where the core is) on `core` and returns
 * its checksum. Determinism tests compare this with every peer's live checksum.
 */
export function replayLog<C extends Core>(
  core: C,
  log: readonly LoggedFrame[],
  onCommand: CommandHandler<C> = defaultCommandHandler,
): bigint {
  for (const f of log) runFrame(core, f.inputs, f.command, onCommand);
  return core.checksum();
}

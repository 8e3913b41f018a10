import type { Core } from '@netplay/state';
import type { CommandHandler, FrameRequest } from './types.js';

/** One frame as a peer ran it. */
export interface LoggedFrame {
  /** The frame index the entry ran as (0-based, the request's `frame`); a log holds frames in order. */
  readonly frame: number;
  /** A copy of every port's input on that frame: `ports * inputBytes` bytes, port 0 first (owned by the log). */
  readonly inputs: Uint8Array;
  /** The machine command applied just before that frame ran (0 = none; `Reset` 30, `PowerToggle` 31). */
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

const viewCache = new WeakMap<Uint8Array, Uint8Array[]>();

/** Per-port views of an inputs buffer, made once per buffer (schedulers reuse theirs), so a frame allocates nothing. */
function portViews(inputs: Uint8Array, ports: number, n: number): Uint8Array[] {
  let views = viewCache.get(inputs);
  if (!views || views.length !== ports || views[0]!.length !== n) {
    views = [];
    for (let p = 0; p < ports; p++) views.push(inputs.subarray(p * n, p * n + n));
    viewCache.set(inputs, views);
  }
  return views;
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
  const views = portViews(inputs, core.ports, core.inputBytes);
  for (let p = 0; p < core.ports; p++) core.setInput(p, views[p]!);
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

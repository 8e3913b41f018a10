import type { RejoinTarget, SessionError } from '@netplay/session';
import type { Clock } from '@netplay/transport';
import { CliError, ExitCode } from './exit-codes.js';
import { sessionFailure } from './session-errors.js';

/** How long `netplay join` tries to get back in after a hand-over by default (`--rejoin-seconds`). */
export const DEFAULT_REJOIN_SECONDS = 10;

/** The pause between two attempts to get back in. */
export const REJOIN_INTERVAL_MS = 1000;

/**
 * Whether a session that ended this way lost its connection (so a player holding a
 * `rejoinTarget` may come back) rather than being refused: the connection closed or went silent,
 * or the finality rule ended the game for this peer (`host-lost`, `partitioned`, `removed`: what a
 * player cut off from the others sees when its links time out). A refusal (`bad-password`, `flood`,
 * …) is final.
 */
export function isConnectionLoss(error: SessionError): boolean {
  return (
    error.code === 'closed' ||
    error.code === 'timeout' ||
    error.code === 'host-lost' ||
    error.code === 'partitioned' ||
    error.code === 'removed'
  );
}

/**
 * Whether a failed attempt to get back in may be tried again: the new host could not be reached
 * yet, or the connection closed or timed out in the handshake. A refusal (wrong token, wrong
 * password, a spectator, …) ends the tries.
 */
export function isRetryable(e: unknown): boolean {
  const cli = e instanceof CliError ? e : safeFailure(e);
  return cli !== undefined && cli.exitCode === ExitCode.Network;
}

function safeFailure(e: unknown): CliError | undefined {
  try {
    return sessionFailure(e);
  } catch {
    return undefined;
  }
}

/**
 * The hosts a player may come back to, latest first: every host it followed after a hand-over to
 * another player (`rejoinTarget` at each `host-changed`, and at the end). A player cut off from the
 * others runs the election steps alone before it ends, so its last target can name a player the
 * others never followed (whose listener answers `closed: not taking links`); the host the group
 * follows is one it followed before.
 */
export class RejoinTargets {
  private readonly list: RejoinTarget[] = [];

  /** Notes `t` as the latest host followed (undefined: nothing to note). */
  note(t: RejoinTarget | undefined): void {
    if (t === undefined) return;
    const i = this.list.findIndex((o) => o.host === t.host);
    if (i >= 0) this.list.splice(i, 1);
    this.list.unshift(t);
  }

  /** The targets, latest first. */
  get all(): readonly RejoinTarget[] {
    return this.list;
  }
}

/** What {@link rejoinLoop} needs: one attempt, the clock, the window and where to report. */
export interface RejoinLoop<T> {
  /** Where to try, in this order each round (non-empty). */
  readonly targets: readonly RejoinTarget[];
  /** Connects to `target.address` with `rejoin: target` and resolves once admitted. */
  attempt(target: RejoinTarget): Promise<T>;
  readonly clock: Clock;
  /** Tries until this much time passed since the first attempt (ms). */
  readonly windowMs: number;
  /** Waits this long after a round of failed attempts (ms). */
  readonly intervalMs: number;
  /** A line for the person (a retry). */
  say(line: string): void;
  /** The person quit (Q, Ctrl-C) meanwhile: stop trying. */
  quit?(): boolean;
}

/**
 * Tries to get back in: each round tries every target in order, and rounds follow every
 * `intervalMs` until one attempt is admitted or `windowMs` passed since the first (an attempt under
 * way finishes), or an attempt is refused (no more tries).
 * @throws CliError `PeerLost` naming the last failure (the session's or the network's).
 */
export async function rejoinLoop<T>(o: RejoinLoop<T>): Promise<{ value: T; target: RejoinTarget }> {
  const start = o.clock.now();
  const first = o.targets[0]!;
  for (let round = 1; ; round++) {
    let why = '';
    for (const target of o.targets) {
      try {
        return { value: await o.attempt(target), target };
      } catch (e) {
        why = `${o.targets.length > 1 ? `${target.host}: ` : ''}${describe(e)}`;
        if (!isRetryable(e) || o.quit?.())
          throw new CliError(
            ExitCode.PeerLost,
            `could not get back in at ${target.host} (${target.address}) as P${target.slot + 1}: ${why}`,
          );
      }
    }
    const left = start + o.windowMs - o.clock.now();
    if (left < o.intervalMs)
      throw new CliError(
        ExitCode.PeerLost,
        `could not get back in at ${first.host} (${first.address}) as P${first.slot + 1} ` +
          `after ${round} attempt${round === 1 ? '' : 's'} in ${Math.round((o.clock.now() - start) / 100) / 10} s: ${why}`,
      );
    o.say(`rejoin attempt ${round} failed (${why}); trying again in ${Math.round(o.intervalMs / 100) / 10} s`);
    await new Promise<void>((resolve) => o.clock.setTimer(o.intervalMs, resolve));
  }
}

function describe(e: unknown): string {
  const cli = e instanceof CliError ? e : safeFailure(e);
  if (cli !== undefined) return cli.message;
  return e instanceof Error ? e.message : String(e);
}

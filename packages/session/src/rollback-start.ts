import { CoreDriver, P2PSession, type RemotePlayer, resolveRollbackOptions, type SendFn } from '@netplay/rollback';
import type { Core } from '@netplay/state';
import type { Clock } from '@netplay/transport';
import type { SessionError } from './errors.js';
import { endError } from './lockstep-finality.js';

/** What the host and a client pass to start a rollback game on their core. */
export interface RollbackStart {
  readonly core: Core;
  readonly players: number;
  /** This peer's player slot (0 on the host). */
  readonly localPlayer: number;
  /** The other players, by nick and slot. */
  readonly remotes: readonly RemotePlayer[];
  readonly hostPeer: string;
  readonly isHost: boolean;
  readonly clock: Clock;
  readonly send: SendFn;
  readonly inputDelay: number;
  readonly fps: number | undefined;
  readonly maxPrediction: number | undefined;
  readonly checksumInterval: number | undefined;
  /** A player entering a running game: the host's WELCOME and the state of its frame (issue 15). */
  readonly join?: { readonly welcome: Uint8Array; readonly state: Uint8Array } | undefined;
  /** Time sync recommends skipping `frames` frames. */
  wait(frames: number): void;
  /** The finality rule ended the game for this peer: `error` is `removed`, `host-lost` or `partitioned`. */
  ended(error: SessionError, frame: number): void;
}

/**
 * The rollback scheduler and its core driver, as both ends of a session run them: the driver's
 * states are the scheduler's state source (checksums, desync repair, spectators), time sync's waits
 * and the finality rule's end go to the caller. The options are checked and completed by the
 * rollback builder's `resolveRollbackOptions`; the session is made here rather than by the builder's
 * `start()` because its messages go through the session's own star routing (`send`, and the
 * caller's message dispatch) instead of one bound connection per remote player.
 * @throws RollbackError `invalid-option` naming the bad option: the host checked its own options
 * when it was made, so this is a shape a client got in SYNC (the client maps it to `protocol`).
 */
export function startRollback(s: RollbackStart): { session: P2PSession; driver: CoreDriver } {
  const o = resolveRollbackOptions({
    core: s.core,
    players: s.players,
    local: s.localPlayer,
    clock: s.clock,
    inputDelay: s.inputDelay,
    ...(s.fps !== undefined ? { fps: s.fps } : {}),
    ...(s.maxPrediction !== undefined ? { maxPrediction: s.maxPrediction } : {}),
    ...(s.checksumInterval !== undefined ? { checksumInterval: s.checksumInterval } : {}),
  });
  let driver: CoreDriver | undefined;
  const session = new P2PSession({
    players: o.players,
    inputBytes: o.core.inputBytes,
    localPlayer: o.local,
    remotes: s.remotes,
    isHost: s.isHost,
    hostPeer: s.hostPeer,
    clock: o.clock,
    send: s.send,
    inputDelay: o.inputDelay,
    fps: o.fps,
    maxPrediction: o.maxPrediction,
    checksumInterval: o.checksumInterval,
    stateSource: (f) => driver?.stateOf(f),
    ...(s.join !== undefined ? { join: s.join } : {}),
  });
  driver = new CoreDriver(o.core, session.ringFrames);
  session.on('wait-recommended', ({ frames }) => s.wait(frames));
  const who = s.isHost ? 'the host' : 'this peer';
  session.on('ended', ({ reason, frame }) => s.ended(endError(reason, frame, who), frame));
  return { session, driver };
}

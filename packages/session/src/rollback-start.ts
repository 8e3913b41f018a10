import { CoreDriver, P2PSession, type RemotePlayer, type SendFn } from '@netplay/rollback';
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
  /** Time sync recommends skipping `frames` frames. */
  wait(frames: number): void;
  /** The finality rule ended the game for this peer: `error` is `removed`, `host-lost` or `partitioned`. */
  ended(error: SessionError, frame: number): void;
}

/**
 * The rollback scheduler and its core driver, as both ends of a session run them: the driver's
 * states are the scheduler's state source (checksums, desync repair, spectators), time sync's waits
 * and the finality rule's end go to the caller.
 */
export function startRollback(s: RollbackStart): { session: P2PSession; driver: CoreDriver } {
  let driver: CoreDriver | undefined;
  const session = new P2PSession({
    players: s.players,
    inputBytes: s.core.inputBytes,
    localPlayer: s.localPlayer,
    remotes: s.remotes,
    isHost: s.isHost,
    hostPeer: s.hostPeer,
    clock: s.clock,
    send: s.send,
    inputDelay: s.inputDelay,
    fps: s.fps ?? 60,
    stateSource: (f) => driver?.stateOf(f),
    ...(s.maxPrediction !== undefined ? { maxPrediction: s.maxPrediction } : {}),
    ...(s.checksumInterval !== undefined ? { checksumInterval: s.checksumInterval } : {}),
  });
  driver = new CoreDriver(s.core, session.ringFrames);
  session.on('wait-recommended', ({ frames }) => s.wait(frames));
  const who = s.isHost ? 'the host' : 'this peer';
  session.on('ended', ({ reason, frame }) => s.ended(endError(reason, frame, who), frame));
  return { session, driver };
}

import { LockstepRunner } from '@netplay/lockstep';
import type { Core } from '@netplay/state';
import type { Clock, Connection } from '@netplay/transport';
import type { SessionError } from './errors.js';
import type { P2PHistory } from './host-p2p-history.js';
import { endError, type FinalityScheduler, LockstepFinality } from './lockstep-finality.js';
import type { P2PLockstepShape, P2PScheduler } from './p2p-lockstep.js';
import { RoutedConnection, type RoutedConnectionOptions } from './routed-connection.js';

/** lockstep-p2p and frame-advance at the host: its scheduler, the mode's wire and one routed connection per client slot. */
export interface HostP2P {
  readonly scheduler: P2PScheduler;
  readonly shape: P2PLockstepShape;
  readonly routes: Map<number, RoutedConnection>;
  /** Each player's recent broadcasts, replayed to a player entering the game (`BroadcastHistory`, `MeshBroadcastHistory`). */
  readonly history?: P2PHistory;
}

/** What the host's lockstep runner reports back to the host. */
export interface HostRunnerHandlers {
  /** Frames up to `frame` are final. */
  final(frame: number): void;
  /** Frame `frame` ran on the core with `inputs` (every port's). */
  frame(frame: number, inputs: Uint8Array): void;
  /** The scheduler removed the player in `slot` by the finality rule, from `frame` on. */
  removed(slot: number, frame: number): void;
  /** The scheduler ended (finality rule); `frame` is the last final frame. */
  ended(error: SessionError, frame: number): void;
}

/**
 * Lockstep: the host's runner, with the finality rule's events handled (`final` and `frame`
 * events, removals, the end). Returns the runner and the finality watcher.
 */
export function startHostRunner(
  clock: Clock,
  core: Core,
  scheduler: FinalityScheduler,
  on: HostRunnerHandlers,
  peers?: Map<number, RoutedConnection>,
): { runner: LockstepRunner; finality: LockstepFinality } {
  const finality = new LockstepFinality(scheduler, {
    final: on.final,
    removed: on.removed,
    ended: (reason, frame) => on.ended(endError(reason, frame, 'the host'), frame),
  });
  const hooks = finality.hooks((req) => on.frame(req.frame, req.inputs));
  const runner = new LockstepRunner({ clock, scheduler, core, ...(peers ? { peers } : {}), ...hooks });
  return { runner, finality };
}

/**
 * The host's routed connection to the client in `slot` over its session connection `carrier`
 * (`holdUntil`: see {@link RoutedConnectionOptions.holdUntil}).
 */
export function hostRoute(
  shape: P2PLockstepShape,
  slot: number,
  carrier: Connection,
  holdUntil?: (channel: string, data: Uint8Array) => boolean,
): RoutedConnection {
  return new RoutedConnection({
    carrier,
    slot: 0,
    channels: shape.channels,
    remoteAddress: `${carrier.remoteAddress} (slot ${slot})`,
    ...(holdUntil !== undefined ? { holdUntil } : {}),
  });
}

/**
 * A player of a P2P lockstep game left: ends its route and cuts its stream in the host's
 * scheduler (every message of the leaver that any client got came through the host first, so the
 * host's cut is safe). Returns true if the slot had a route.
 */
export function cutRoutedPlayer(
  p2p: HostP2P,
  runner: LockstepRunner | undefined,
  slot: number,
  nick: string,
  now: number,
): boolean {
  const route = p2p.routes.get(slot);
  if (route === undefined) return false;
  p2p.routes.delete(slot);
  p2p.history?.forget(slot);
  runner?.removePeer(slot);
  route.end({ code: 'remote', reason: `${nick} left` });
  p2p.scheduler.removePeer(slot, now);
  runner?.pump();
  return true;
}

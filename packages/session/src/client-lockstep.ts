import { type FrameRequest, LockstepRunner } from '@netplay/lockstep';
import type { Core } from '@netplay/state';
import type { Clock, Connection } from '@netplay/transport';
import type { SessionError } from './errors.js';
import { endError, type FinalityScheduler, LockstepFinality } from './lockstep-finality.js';
import type { P2PLockstepShape } from './p2p-lockstep.js';
import { RoutedConnection } from './routed-connection.js';

/**
 * lockstep-p2p and frame-advance at a client: one routed connection per other player's slot over
 * the client's one connection to the host (`carrier`).
 */
export function clientRoutes(
  carrier: Connection,
  shape: P2PLockstepShape,
  slots: readonly number[],
  self: number,
): Map<number, RoutedConnection> {
  const routes = new Map<number, RoutedConnection>();
  for (const slot of slots) {
    if (slot === self) continue;
    routes.set(
      slot,
      new RoutedConnection({
        carrier,
        slot,
        channels: shape.channels,
        // The host fans out what the scheduler sends every peer alike: send it once, to the host.
        ...(slot === 0 ? { broadcast: shape.broadcast } : { skip: shape.broadcast }),
        remoteAddress: slot === 0 ? carrier.remoteAddress : `${carrier.remoteAddress} → slot ${slot}`,
      }),
    );
  }
  return routes;
}

/**
 * Lockstep at a client: the runner, with the finality rule's events handled: `final` and `frame`
 * events, and the scheduler's end (removed, host lost) as a `SessionError`.
 */
export function startClientRunner(
  clock: Clock,
  core: Core,
  scheduler: FinalityScheduler,
  on: { final(frame: number): void; frame(req: FrameRequest): void; ended(error: SessionError): void },
  peers?: Map<number, RoutedConnection>,
): { runner: LockstepRunner; finality: LockstepFinality } {
  const finality = new LockstepFinality(scheduler, {
    final: on.final,
    removed: () => {},
    ended: (reason, frame) => on.ended(endError(reason, frame, 'this peer')),
  });
  const hooks = finality.hooks(on.frame);
  const runner = new LockstepRunner({ clock, scheduler, core, ...(peers ? { peers } : {}), ...hooks });
  return { runner, finality };
}

import type { Clock, RateLimits } from '@netplay/transport';
import { DEFAULT_RATE_LIMITS, RateBudget, TransportError } from '@netplay/transport';
import { WsCloseCode } from './close-codes.js';
import type { WsConnection } from './connection.js';

/** Charges one received WebSocket message of `bytes`; false when the peer went over its budget (it is being closed). */
export type FrameCharge = (bytes: number) => boolean;

const UNLIMITED: FrameCharge = () => true;

/**
 * The per-connection flood check the socket adapters run before handing a received message to the
 * core: a `RateBudget` (default `DEFAULT_RATE_LIMITS`, `false`: none) charged one message and its
 * bytes per WebSocket message, every frame type counted. A peer over its budget is closed as
 * `@netplay/transport` asks: locally `close` with code `error`, the budget's `flood: …` reason and
 * `TransportError('flood')`; the peer gets close code `flood` of {@link WsCloseCode} with that reason.
 * Allocation-free per message. Browser-safe.
 */
export function frameCharge(conn: WsConnection, limits: RateLimits | false | undefined, clock: Clock): FrameCharge {
  if (limits === false) return UNLIMITED;
  const budget = new RateBudget(limits ?? DEFAULT_RATE_LIMITS, clock.now());
  return (bytes) => {
    if (budget.take(bytes, clock.now())) return true;
    if (conn.state !== 'closed') {
      const reason = budget.describe();
      conn.fail(new TransportError('flood', reason), WsCloseCode.flood);
    }
    return false;
  };
}

import { type ConnectionStats, MutableConnectionStats } from '@netplay/transport';

/** {@link ConnectionStats} plus counters specific to netplay-ws. */
export interface WsConnectionStats extends ConnectionStats {
  /** Unreliable messages this side replaced by a newer one before sending (backpressure). */
  readonly staleDropped: number;
  /** Unreliable messages received that were not newer than the last delivered one (dropped). */
  readonly staleReceived: number;
}

/** The live, writable {@link WsConnectionStats} a connection keeps. */
export class MutableWsStats extends MutableConnectionStats implements WsConnectionStats {
  staleDropped = 0;
  staleReceived = 0;
}

import { type Connection, type RateBudget, type Timer, TransportError, type Unsubscribe } from '@netplay/transport';
import { SESSION_CONTROL_CHANNEL } from './channels.js';

/** A connection as the host tracks it, from arrival to close. */
export interface Peer {
  readonly conn: Connection;
  /** `addressKey` of the remote address: the key of the per-address limits. */
  readonly address: string;
  /** Messages and bytes per second this client may still send (undefined: no limit). */
  readonly budget: RateBudget | undefined;
  stage: 'hello' | 'info' | 'playing' | 'spectating' | 'closed';
  nick: string | undefined;
  spectate: boolean;
  salt: number;
  slot: number | undefined;
  timer: Timer | undefined;
  offs: Unsubscribe[];
  /** Game messages of a spectator that arrived before the scheduler started. */
  early: Array<{ channel: string; data: Uint8Array }>;
  /** The admitted player this connection takes over from (the same nick reconnecting from the same address). */
  replaces: Peer | undefined;
  /** When the host last heard from it (clock ms; its arrival before any message). */
  heardAt: number;
}

/** A peer record for a connection that just arrived (stage `hello`). */
export function newPeer(conn: Connection, address: string, budget: RateBudget | undefined, now: number): Peer {
  return {
    conn,
    address,
    budget,
    stage: 'hello',
    nick: undefined,
    spectate: false,
    salt: 0,
    slot: undefined,
    timer: undefined,
    offs: [],
    early: [],
    replaces: undefined,
    heardAt: now,
  };
}

/** Sends a session message to `peer` on `np-session` (nothing if its connection is closed). */
export function sendControl(peer: Peer, data: Uint8Array): void {
  if (peer.conn.state === 'closed') return;
  try {
    peer.conn.send(SESSION_CONTROL_CHANNEL, data);
  } catch (e) {
    if (!(e instanceof TransportError)) throw e;
  }
}

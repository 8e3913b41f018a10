import { type Connection, TransportError } from '@netplay/transport';
import { RELAY_CONTROL_CHANNEL, RELAY_INPUT_CHANNEL } from './channels.js';
import { SessionError } from './errors.js';
import type { P2PHistory } from './host-p2p-history.js';
import type { P2PLockstepShape } from './p2p-lockstep.js';
import type { RelayFramer } from './relay.js';
import { BROADCAST_SLOT, ROUTE_HEADER_BYTES, type RoutedConnection, routedChannelIndex } from './routed-connection.js';

/** What the host's routing needs of a client. */
export interface RoutedPlayer {
  readonly conn: Connection;
  readonly slot: number | undefined;
  readonly stage: string;
}

/** lockstep-p2p and frame-advance at the host: the mode's wire and one routed connection per client slot. */
export interface HostRoutes {
  readonly shape: P2PLockstepShape;
  readonly routes: Map<number, RoutedConnection>;
  /** Keeps the broadcasts for players entering later. */
  readonly history?: P2PHistory;
}

/**
 * lockstep-p2p and frame-advance, at the host: a routed message from a player,
 * `[destination][channel][payload]`. Destination 0 is the host's scheduler; {@link BROADCAST_SLOT}
 * (required on the mode's broadcast channels, refused elsewhere) is the host's scheduler and then
 * every other player, in order of arrival; another slot is forwarded to that player as
 * `[source][channel][payload]`. Returns the error to refuse the sender with, if any. Players
 * the host no longer lists (left, removed) get nothing and are heard no more (the host drops them
 * from `players` before this can run for them again).
 */
export function routeFromPlayer<P extends RoutedPlayer>(
  p2p: HostRoutes | undefined,
  players: ReadonlyMap<number, P>,
  framer: RelayFramer,
  mode: string,
  peer: P,
  channel: string,
  data: Uint8Array,
): SessionError | undefined {
  if (peer.stage !== 'playing' || peer.slot === undefined)
    return new SessionError('protocol', `game message on ${channel} before the handshake finished`);
  if (p2p === undefined) return new SessionError('protocol', `game message on ${channel} before the game started`);
  if (channel !== RELAY_CONTROL_CHANNEL && channel !== RELAY_INPUT_CHANNEL)
    return new SessionError('protocol', `message on ${channel}, which mode ${mode} does not use`);
  const ci = routedChannelIndex(channel, data, p2p.shape.channels);
  if (ci < 0) return new SessionError('protocol', `bad routed message on ${channel}`);
  const name = p2p.shape.channels[ci]!.name;
  const to = data[0]!;
  if ((to === BROADCAST_SLOT) !== p2p.shape.broadcast.has(name))
    return new SessionError(
      'protocol',
      to === BROADCAST_SLOT ? `broadcast on channel ${name}` : `channel ${name} must be broadcast`,
    );
  const payload = data.subarray(ROUTE_HEADER_BYTES);
  if (to === 0 || to === BROADCAST_SLOT) p2p.routes.get(peer.slot)?.deliver(ci, payload);
  if (to === BROADCAST_SLOT) {
    p2p.history?.record(peer.slot, name, ci, payload);
    for (const [slot, q] of players) if (slot !== peer.slot) forward(framer, q, channel, peer.slot, ci, payload);
  } else if (to !== 0 && to !== peer.slot) {
    const q = players.get(to);
    if (q !== undefined) forward(framer, q, channel, peer.slot, ci, payload);
  }
  return undefined;
}

function forward(
  framer: RelayFramer,
  to: RoutedPlayer,
  channel: string,
  from: number,
  ci: number,
  payload: Uint8Array,
): void {
  if (to.stage !== 'playing' || to.conn.state === 'closed') return;
  try {
    to.conn.send(channel, framer.frameRouted(from, ci, payload));
  } catch (e) {
    if (!(e instanceof TransportError)) throw e;
  }
}

import type { SendFn } from '@netplay/rollback';
import { TransportError } from '@netplay/transport';
import { type ClientContext, MAX_EARLY_MESSAGES } from './client-context.js';
import { SessionError } from './errors.js';
import { relayChannelOf, rollbackChannelOf } from './relay.js';
import { ROUTE_HEADER_BYTES, routedChannelIndex } from './routed-connection.js';

/**
 * The rollback scheduler's send at a client: over the direct link to `peer` if there is one, else
 * through the host (to the host as is; to another player framed on the relay channel with its slot).
 */
export function clientSender(c: ClientContext): SendFn {
  return (peer, channel, data) => {
    const direct = c.mesh()?.connectionTo(peer);
    if (direct !== undefined) {
      try {
        direct.send(channel, data);
      } catch (e) {
        if (!(e instanceof TransportError)) throw e;
      }
      return;
    }
    if (c.conn.state === 'closed') return;
    try {
      const slot = peer === c.hostNick() ? undefined : c.game.slotOf.get(peer);
      if (slot === undefined) c.conn.send(channel, data);
      else c.conn.send(relayChannelOf(channel), c.game.framer.frame(slot, data));
    } catch (e) {
      if (!(e instanceof TransportError)) throw e;
    }
  };
}

/**
 * A game message (not `np-session`) from the host: to the P2P lockstep routes, the lockstep-cs
 * runner (which reads its channels itself), the rollback scheduler (relayed ones from the player
 * in their first byte's slot), or kept until the scheduler runs.
 */
export function clientGameMessage(c: ClientContext, channel: string, data: Uint8Array): void {
  const g = c.game;
  if (g.routed !== undefined) {
    // A routed message: `[source slot][channel][payload]`; a departed source's are dropped.
    const ci = routedChannelIndex(channel, data, g.routed.shape.channels);
    if (ci < 0) {
      c.fail(new SessionError('protocol', `bad routed message on ${channel} from the host`));
      return;
    }
    g.routed.routes.get(data[0]!)?.deliver(ci, data.subarray(ROUTE_HEADER_BYTES));
    return;
  }
  if (g.runner !== undefined) return; // lockstep-cs: the runner reads them itself
  const host = c.hostNick() ?? '';
  const relayed = rollbackChannelOf(channel);
  if (relayed !== undefined && g.p2p !== undefined) {
    const from = data.length > 0 ? g.nickOf.get(data[0] ?? 0) : undefined;
    if (from !== undefined) g.p2p.receive(from, relayed, data.subarray(1));
  } else if (g.p2p !== undefined) g.p2p.receive(host, channel, data);
  else if (g.watch !== undefined) g.watch.receive(host, channel, data);
  else if (g.early.length < MAX_EARLY_MESSAGES) g.early.push({ channel, data });
}

import { DecodeError } from '@netplay/protocol';
import { SESSION_CONTROL_CHANNEL } from './channels.js';
import { SessionError } from './errors.js';
import { refusePeer } from './host-close.js';
import type { HostContext } from './host-context.js';
import { onHello, onInfo } from './host-handshake.js';
import type { Peer } from './host-peer.js';
import { rollbackGameMessage } from './host-rollback.js';
import { decodeSessionMessage, SessionMessageType } from './messages.js';
import { isP2PLockstep } from './p2p-lockstep.js';
import { routeFromPlayer } from './p2p-routing.js';

/**
 * A message from `peer`, dispatched by channel and stage: a game message goes to the spectators'
 * stream, the P2P lockstep routing, the lockstep-cs runner (which reads its channels itself) or the
 * rollback scheduler and relay; a session message to the links, the control messages of an
 * admitted peer, or the handshake step of its stage. Anything else refuses the peer (`protocol`),
 * as does a flood past its budget.
 */
export function hostMessage(h: HostContext, peer: Peer, channel: string, data: Uint8Array): void {
  if (peer.stage === 'closed') return;
  peer.heardAt = h.clock.now();
  if (peer.budget !== undefined && !peer.budget.take(data.length, h.clock.now())) {
    refusePeer(h, peer, h.guard.floodError(peer.budget));
    return;
  }
  if (channel !== SESSION_CONTROL_CHANNEL) {
    if (peer.stage === 'spectating' && h.watchers.message(peer, channel, data)) return;
    if (isP2PLockstep(h.mode)) {
      const error = routeFromPlayer(h.game.p2p, h.bySlot, h.framer, h.mode, peer, channel, data);
      if (error !== undefined) refusePeer(h, peer, error);
      return;
    }
    // lockstep-cs: the runner reads the game channels of admitted peers (spectators too) itself.
    if (h.mode !== 'rollback' && (peer.stage === 'playing' || peer.stage === 'spectating')) return;
    const error = rollbackGameMessage(h.game.session, h.bySlot, h.framer, peer, channel, data);
    if (error !== undefined) refusePeer(h, peer, error);
    return;
  }
  const link = h.links.onMessage(peer, data);
  if (link !== false) {
    if (link !== true) refusePeer(h, peer, link);
    return;
  }
  let m: ReturnType<typeof decodeSessionMessage>;
  try {
    m = decodeSessionMessage(data);
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    refusePeer(h, peer, new SessionError('protocol', `bad session message: ${e.message}`));
    return;
  }
  if (m.type === SessionMessageType.Refuse) {
    // The client gives up (e.g. unsupported mode); it closes itself.
    peer.stage = 'closed';
    return;
  }
  if ((peer.stage === 'playing' || peer.stage === 'spectating') && h.control.onClientMessage(peer, m)) return;
  if (peer.stage === 'hello' && m.type === SessionMessageType.Hello) {
    h.control.hello(peer, m);
    onHello(h.handshake, peer, m);
    return;
  }
  if (peer.stage === 'info' && m.type === SessionMessageType.Info) {
    onInfo(h.handshake, peer, m);
    return;
  }
  refusePeer(h, peer, new SessionError('protocol', `unexpected session message ${m.type} at stage ${peer.stage}`));
}

import type { SessionError } from './errors.js';
import { gameStarted, type HostContext } from './host-context.js';
import { cutRoutedPlayer } from './host-lockstep.js';
import { type Peer, sendControl } from './host-peer.js';
import { encodeRefuse, encodeWait } from './messages.js';

/**
 * Refuses `peer` (REFUSE, close, `peer-refused`, and `peer-left` if it was admitted; `refused`
 * false: no `peer-refused`).
 */
export function refusePeer(h: HostContext, peer: Peer, error: SessionError, refused = true): void {
  const nick = peer.nick;
  const admitted = peer.stage === 'playing' || peer.stage === 'spectating';
  sendControl(peer, encodeRefuse({ code: error.code, message: error.message }));
  dropPeer(h, peer);
  if (admitted && nick !== undefined) forgetPeer(h, peer, nick);
  peer.conn.close(error.closeReason);
  if (refused) h.emitter.emit('peer-refused', { nick, remoteAddress: peer.conn.remoteAddress, error });
  if (admitted && nick !== undefined) h.emitter.emit('peer-left', { nick, slot: peer.slot, reason: error.closeReason });
}

/** The scheduler ended (finality rule): tell every client why and close. */
export function endHostGame(h: HostContext, error: SessionError, frame: number): void {
  h.game.runner?.stop();
  for (const p of [...h.peers]) {
    dropPeer(h, p);
    p.conn.close(error.closeReason);
  }
  h.emitter.emit('ended', { frame, error });
}

/** A peer's connection closed; `voluntary`: the peer closed it itself (close code `remote`), not a timeout. */
export function peerClosed(h: HostContext, peer: Peer, reason: string, voluntary = false): void {
  for (const off of peer.offs) off();
  if (peer.stage === 'closed' || !h.peers.has(peer)) return;
  const admitted = peer.stage === 'playing' || peer.stage === 'spectating';
  const nick = peer.nick;
  dropPeer(h, peer);
  if (admitted && nick !== undefined) {
    forgetPeer(h, peer, nick, voluntary);
    h.emitter.emit('peer-left', { nick, slot: peer.slot, reason });
  }
}

/** Forgets a peer (before its connection closes). */
function dropPeer(h: HostContext, peer: Peer): void {
  if (peer.slot !== undefined && h.bySlot.get(peer.slot) === peer) h.bySlot.delete(peer.slot);
  peer.stage = 'closed';
  h.guard.gone(peer);
  h.links.gone(peer);
  peer.timer?.cancel();
  peer.timer = undefined;
  h.peers.delete(peer);
  if (peer.nick !== undefined && h.byNick.get(peer.nick) === peer) h.byNick.delete(peer.nick);
}

/** Tells the scheduler an admitted peer is gone. */
function forgetPeer(h: HostContext, peer: Peer, nick: string, voluntary = false): void {
  const { game } = h;
  if (h.mode === 'rollback') h.retired.add(nick);
  if (peer.slot !== undefined && !peer.spectate) h.slots.left(nick, peer.slot);
  game.session?.disconnectPeer(nick, voluntary ? 'left' : 'lost');
  if (h.mode !== 'lockstep-cs' && !gameStarted(game) && !peer.spectate) {
    const wait = encodeWait({ joined: h.bySlot.size + 1, players: h.players });
    for (const p of h.bySlot.values()) sendControl(p, wait);
  }
  if (peer.spectate) h.watchers.forget(peer);
  if (game.server !== undefined && peer.slot !== undefined && !peer.spectate) {
    game.server.removeClient(peer.slot);
    game.runner?.removePeer(peer.slot);
  }
  if (game.p2p !== undefined && peer.slot !== undefined && !peer.spectate)
    cutRoutedPlayer(game.p2p, game.runner, peer.slot, nick, h.clock.now());
}

import { SessionError } from './errors.js';
import { refusePeer } from './host-close.js';
import { gameFrame, type HostContext } from './host-context.js';
import { admitLockstepPlayer, startP2PHost } from './host-lockstep-start.js';
import { admitP2PMidGame } from './host-p2p-join.js';
import { type Peer, sendControl } from './host-peer.js';
import { startHostRollback } from './host-rollback.js';
import { hostRoster, syncMessage, syncSpectator } from './host-sync.js';
import { encodeWait } from './messages.js';
import { isP2PLockstep } from './p2p-lockstep.js';

/**
 * An authenticated peer is admitted: a spectator is synced; a lockstep-cs player takes a port; a
 * player entering a running rollback or P2P lockstep game goes through its mode's entry; else the
 * player takes the lowest free slot, and the game starts once every slot is filled.
 */
export function admitPeer(h: HostContext, peer: Peer): void {
  h.guard.authenticated(peer);
  peer.timer?.cancel();
  peer.timer = undefined;
  const nick = peer.nick ?? '';
  const { game } = h;
  if (peer.spectate) {
    syncSpectator(h, peer);
    return;
  }
  if (h.mode === 'lockstep-cs') {
    admitLockstepPlayer(h, peer);
    return;
  }
  if (h.mode === 'rollback' && game.session !== undefined) {
    h.entering.admit(peer);
    return;
  }
  if (game.p2p !== undefined && game.runner !== undefined && h.rejoins) {
    const { peers, bySlot, byNick, slots, players } = h;
    const { p2p, runner } = game;
    const frame = gameFrame(game);
    const replaced = (old: Peer) =>
      refusePeer(h, old, new SessionError('closed', `replaced: ${old.nick} reconnected from the same address`), false);
    const sync = (p: Peer, s: number) =>
      sendControl(p, syncMessage(h, s, gameFrame(game), hostRoster(h), h.initialState));
    const joined = (e: { nick: string; slot: number }) => h.emitter.emit('peer-joined', e);
    admitP2PMidGame({ p2p, runner, peers, bySlot, byNick, slots, players, frame, replaced, sync, joined }, peer);
    return;
  }
  // A player: the lowest free slot; the game starts once every slot is filled.
  let slot = 1;
  while (h.bySlot.has(slot)) slot++;
  peer.slot = slot;
  peer.stage = 'playing';
  h.bySlot.set(slot, peer);
  h.emitter.emit('peer-joined', { nick, slot });
  if (h.bySlot.size + 1 < h.players) {
    const wait = encodeWait({ joined: h.bySlot.size + 1, players: h.players });
    for (const p of h.bySlot.values()) sendControl(p, wait);
    return;
  }
  if (isP2PLockstep(h.mode)) {
    startP2PHost(h, h.mode);
    return;
  }
  // Spectators admitted before the start: their SPECTATE requests reach the scheduler with it.
  h.links.prepare(h.bySlot, () => startHostRollback(h));
}

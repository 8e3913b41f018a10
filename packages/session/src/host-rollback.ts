import type { P2PSession, SendFn } from '@netplay/rollback';
import { TransportError } from '@netplay/transport';
import { SessionError } from './errors.js';
import { endHostGame } from './host-close.js';
import type { HostContext } from './host-context.js';
import type { Peer } from './host-peer.js';
import { syncPlayers } from './host-sync.js';
import { type RelayFramer, rollbackChannelOf } from './relay.js';
import { startRollback } from './rollback-start.js';

/** Game messages a peer may send before the rollback game starts (a spectator's SPECTATE). */
export const MAX_EARLY_MESSAGES = 64;

/** The rollback scheduler's send at the host: to the admitted peer of that nick, if its connection is open. */
export function peerSender(byNick: ReadonlyMap<string, Peer>): SendFn {
  return (to, channel, data) => {
    const p = byNick.get(to);
    if (p === undefined || p.stage === 'closed' || p.conn.state === 'closed') return;
    try {
      p.conn.send(channel, data);
    } catch (e) {
      if (!(e instanceof TransportError)) throw e;
    }
  };
}

/** Relays a client's rollback message (`[destination slot][message]`) to the player in that slot. */
export function relayToSlot(
  bySlot: ReadonlyMap<number, Peer>,
  framer: RelayFramer,
  from: Peer,
  channel: string,
  data: Uint8Array,
): void {
  const to = data.length > 0 ? bySlot.get(data[0] ?? 0) : undefined;
  if (to === undefined || to === from || from.slot === undefined || to.conn.state === 'closed') return;
  try {
    to.conn.send(channel, framer.frame(from.slot, data.subarray(1)));
  } catch (e) {
    if (!(e instanceof TransportError)) throw e;
  }
}

/**
 * Rollback, at the host: a game message (not `np-session`) from `peer`. Relay channels are
 * forwarded between players; rollback's own channels go to the host's scheduler (or wait for the
 * start, at most {@link MAX_EARLY_MESSAGES}). Returns the refusal for a peer that may not send it.
 */
export function rollbackGameMessage(
  session: P2PSession | undefined,
  bySlot: ReadonlyMap<number, Peer>,
  framer: RelayFramer,
  peer: Peer,
  channel: string,
  data: Uint8Array,
): SessionError | undefined {
  if (rollbackChannelOf(channel) !== undefined) {
    if (peer.stage !== 'playing')
      return new SessionError('protocol', `relay message on ${channel} from a peer that is not a player`);
    if (session !== undefined) relayToSlot(bySlot, framer, peer, channel, data);
    return undefined;
  }
  if ((peer.stage !== 'playing' && peer.stage !== 'spectating') || peer.nick === undefined)
    return new SessionError('protocol', `game message on ${channel} before the handshake finished`);
  if (session !== undefined) session.receive(peer.nick, channel, data);
  else if (peer.early.length < MAX_EARLY_MESSAGES) peer.early.push({ channel, data });
  else return new SessionError('protocol', 'too many game messages before the start');
  return undefined;
}

/**
 * Rollback: every slot is filled (and the links set up, if any): starts the host's scheduler,
 * SYNCs every player with the host's state, emits `started`, and hands the scheduler the
 * SPECTATE requests of spectators admitted before the start.
 */
export function startHostRollback(h: HostContext): void {
  const state = new Uint8Array(h.core.stateBytes);
  const n = h.core.saveInto(state);
  const { game, options } = h;
  const { session, driver } = startRollback({
    core: h.control.schedulerCore(h.initialState),
    players: h.players,
    localPlayer: 0,
    remotes: [...h.bySlot].map(([player, p]) => ({ peer: p.nick ?? '', player })),
    isHost: true,
    hostPeer: h.nick,
    clock: h.clock,
    send: h.entering.sender(peerSender(h.byNick)),
    inputDelay: h.inputDelay,
    fps: options.fps,
    maxPrediction: options.maxPrediction,
    checksumInterval: options.checksumInterval,
    wait: (frames) => {
      game.wait = frames;
    },
    ended: (error, frame) => endHostGame(h, error, frame),
  });
  game.session = session;
  game.driver = driver;
  h.control.attachRollback(session);
  const roster = syncPlayers(h, state.subarray(0, n));
  h.emitter.emit('started', { frame: 0, roster });
  for (const p of h.peers) {
    const early = p.early.splice(0);
    if (p.stage === 'spectating' && p.nick !== undefined)
      for (const e of early) session.receive(p.nick, e.channel, e.data);
  }
}

import { ClientServerServer, type LockstepRunner } from '@netplay/lockstep';
import { END_TEXT, SessionError } from './errors.js';
import { endHostGame, refusePeer } from './host-close.js';
import type { HostContext } from './host-context.js';
import { hostRoute, startHostRunner } from './host-lockstep.js';
import { MeshBroadcastHistory } from './host-mesh-history.js';
import { BroadcastHistory } from './host-p2p-history.js';
import { type Peer, sendControl } from './host-peer.js';
import { hostRoster, syncMessage, syncPlayers } from './host-sync.js';
import type { FinalityScheduler } from './lockstep-finality.js';
import { createP2PScheduler, p2pShape } from './p2p-lockstep.js';
import type { RoutedConnection } from './routed-connection.js';

/**
 * lockstep-cs: admits a player into the lowest free port (its old one for a rejoin); the server
 * starts with the first player, later ones join late.
 */
export function admitLockstepPlayer(h: HostContext, peer: Peer): void {
  const old = peer.replaces;
  peer.replaces = undefined;
  // The same nick from the same address: its old connection is dead (the transport has not noticed yet).
  if (old !== undefined && old.stage === 'playing')
    refusePeer(h, old, new SessionError('closed', `replaced: ${old.nick} reconnected from the same address`), false);
  if (peer.nick !== undefined) h.byNick.set(peer.nick, peer);
  const taken = new Set<number>([0]);
  for (const p of h.peers) if (p.stage === 'playing' && p.slot !== undefined) taken.add(p.slot);
  const slot = h.slots.pick(peer.nick ?? '', taken, h.players) ?? h.players;
  peer.slot = slot;
  peer.stage = 'playing';
  const { game } = h;
  let first = false;
  if (game.server === undefined || game.runner === undefined) {
    first = true;
    game.server = new ClientServerServer({
      id: 0,
      port: 0,
      ports: h.players,
      inputBytes: h.control.slotBytes,
      frameMs: 1000 / (h.options.fps ?? 60),
      startMs: h.clock.now(),
      magic: h.randomU32() >>> 0,
    });
    game.runner = startLockstepRunner(h, game.server);
    h.watchers.attach(game.server, game.runner);
  }
  const roster = hostRoster(h);
  sendControl(peer, syncMessage(h, slot, game.server.nextFrame, roster, h.initialState));
  game.server.addClient(slot, slot);
  game.runner.addPeer(slot, peer.conn);
  if (first) h.emitter.emit('started', { frame: 0, roster });
  const rejoined = h.slots.slotOf(peer.nick ?? '') === slot;
  h.emitter.emit('peer-joined', { nick: peer.nick ?? '', slot, ...(rejoined ? { rejoined } : {}) });
}

/** lockstep-p2p and frame-advance: every slot is filled; SYNC everyone and start the host's scheduler. */
export function startP2PHost(h: HostContext, mode: 'lockstep-p2p' | 'frame-advance'): void {
  const state = new Uint8Array(h.core.stateBytes);
  const n = h.core.saveInto(state);
  const shape = p2pShape(mode);
  const scheduler = createP2PScheduler(mode, {
    slot: 0,
    slots: [0, ...h.bySlot.keys()],
    ports: h.players,
    inputBytes: h.control.slotBytes,
    frameMs: 1000 / (h.options.fps ?? 60),
    // Each client starts its schedule when SYNC reaches it: start ours that much later too (half
    // the largest round trip the transport measured), or the host trails its own schedule.
    startMs: h.clock.now() + maxRttMs(h.bySlot) / 2,
    seed: h.randomU32() >>> 0,
    extraDelayMs: (h.inputDelay * 1000) / (h.options.fps ?? 60),
  });
  const roster = syncPlayers(h, state.subarray(0, n));
  const routes = new Map<number, RoutedConnection>();
  for (const [slot, player] of h.bySlot) routes.set(slot, hostRoute(shape, slot, player.conn));
  const { game } = h;
  const history = mode === 'frame-advance' ? new BroadcastHistory() : new MeshBroadcastHistory(h.players);
  game.p2p = { scheduler, shape, routes, history };
  game.runner = startLockstepRunner(h, scheduler, routes);
  const core = game.lockstepCore;
  if (core !== undefined) h.watchers.attachStream(core, game.runner, h.initialState, h.players, h.control.slotBytes);
  h.emitter.emit('started', { frame: 0, roster });
}

/** The largest smoothed round-trip time of the players' connections (0 before any sample). */
function maxRttMs(bySlot: ReadonlyMap<number, Peer>): number {
  let rtt = 0;
  for (const p of bySlot.values()) rtt = Math.max(rtt, p.conn.stats.rttMs);
  return rtt;
}

/**
 * Lockstep: the host's runner, with the finality rule's events handled (`final` events; a peer
 * the scheduler removed is refused with `removed` and its messages no longer relayed; the end
 * ends the game).
 */
function startLockstepRunner(
  h: HostContext,
  scheduler: FinalityScheduler,
  peers?: Map<number, RoutedConnection>,
): LockstepRunner {
  const { game } = h;
  game.lockstepCore ??= h.control.schedulerCore(h.initialState);
  const { runner, finality } = startHostRunner(
    h.clock,
    game.lockstepCore,
    scheduler,
    {
      final: (frame) => h.emitter.emit('final', { frame }),
      frame: (frame, inputs) => {
        h.watchers.frameRan(frame, inputs);
        h.emitter.emit('frame', { frame, inputs: h.control.lockstepFrame(frame, inputs) });
      },
      removed: (slot, frame) => {
        const watcher = h.watchers.removed(slot, frame);
        if (watcher !== undefined) return refusePeer(h, watcher.peer, watcher.error, false);
        const p = [...h.peers].find((q) => q.slot === slot && q.stage === 'playing');
        const text = `removed at frame ${frame}: ${END_TEXT.removed}`;
        if (p !== undefined) refusePeer(h, p, new SessionError('removed', text), false);
      },
      ended: (error, frame) => endHostGame(h, error, frame),
    },
    peers,
  );
  game.finality = finality;
  return runner;
}

import type { HostContext } from './host-context.js';
import { gameFrame } from './host-context.js';
import { type Peer, sendControl } from './host-peer.js';
import { rosterOf } from './host-room.js';
import { encodeSync, type RosterEntry, SPECTATOR_SLOT } from './messages.js';
import { packSyncState } from './sync-state.js';

/** The host and every admitted peer, for SYNC and `started`. */
export function hostRoster(h: HostContext): RosterEntry[] {
  return rosterOf(h.nick, h.peers);
}

/** SYNC for `slot` (or {@link SPECTATOR_SLOT}) in this session. */
export function syncMessage(
  h: HostContext,
  slot: number,
  frame: number,
  roster: RosterEntry[],
  state: Uint8Array,
): Uint8Array {
  const { mode, players, inputDelay } = h;
  const layout = h.control.syncFields(roster, (s) => [...h.peers].find((p) => p.slot === s));
  return encodeSync({
    mode,
    frame,
    players,
    slot,
    inputDelay,
    inputBytes: h.core.inputBytes,
    roster,
    state: packSyncState(state),
    ...layout,
  });
}

/** Every slot is filled (rollback and the P2P lockstep modes): SYNC each player with frame 0 and `state`; returns the roster. */
export function syncPlayers(h: HostContext, state: Uint8Array): RosterEntry[] {
  const roster = hostRoster(h);
  for (const [slot, player] of h.bySlot) sendControl(player, syncMessage(h, slot, 0, roster, state));
  return roster;
}

/**
 * Admits a spectator: rollback, SYNC without a state (the rollback scheduler syncs it from the
 * host's savestate when its SPECTATE request arrives; before the start that request waits);
 * lockstep, SYNC with the power-on state, then the stream of the host's frames.
 */
export function syncSpectator(h: HostContext, peer: Peer): void {
  peer.stage = 'spectating';
  // lockstep-cs: the power-on state; the server then sends the state of its next frame against it.
  const state = h.mode !== 'rollback' ? h.initialState : new Uint8Array(0);
  sendControl(peer, syncMessage(h, SPECTATOR_SLOT, gameFrame(h.game), hostRoster(h), state));
  if (h.mode !== 'rollback') h.watchers.admit(peer);
  h.emitter.emit('peer-joined', { nick: peer.nick ?? '', slot: undefined });
}

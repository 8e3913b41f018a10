import { DecodeError } from '@netplay/protocol';
import type { P2PSession } from '@netplay/rollback';
import { applyDelta, DeltaError } from '@netplay/state';
import type { Unsubscribe } from '@netplay/transport';
import { SessionError } from './errors.js';
import { decodeSessionMessage, SessionMessageType, SPECTATOR_SLOT, type SyncMessage } from './messages.js';
import { decodeRollbackEntry, ROLLBACK_ENTRY_TYPE } from './rollback-entry.js';
import { unpackSyncState } from './sync-state.js';

/** Whether a message on `np-session` is ENTRY (a rollback player entering a running game). */
export function isRollbackEntry(data: Uint8Array): boolean {
  return data[0] === ROLLBACK_ENTRY_TYPE;
}

/** What a client entering a running rollback game starts from. */
export interface RollbackEntry {
  /** Its SYNC, the savestate unpacked: the power-on state (its reset base). */
  readonly sync: SyncMessage;
  /** For `P2PSession`'s `join` option: the WELCOME and the state of its frame. */
  readonly join: { readonly welcome: Uint8Array; readonly state: Uint8Array };
}

/**
 * Reads ENTRY: the SYNC inside (mode rollback, a player slot), the power-on state it carries, and the
 * state of the welcome's frame rebuilt from the page delta against it (at most `stateBytes`, the
 * core's size, checked before anything is allocated).
 * @throws SessionError `protocol` for anything malformed.
 */
export function readRollbackEntry(data: Uint8Array, stateBytes: number): RollbackEntry {
  try {
    const e = decodeRollbackEntry(data);
    const m = decodeSessionMessage(e.sync);
    if (m.type !== SessionMessageType.Sync || m.mode !== 'rollback' || m.slot === SPECTATOR_SLOT)
      throw new SessionError('protocol', 'ENTRY without a rollback player SYNC');
    const powerOn = unpackSyncState(m.state, stateBytes);
    const state = applyDelta(powerOn, e.delta, { layoutHash: 0n, maxTargetBytes: stateBytes });
    return { sync: { ...m, state: powerOn }, join: { welcome: e.welcome.slice(), state } };
  } catch (e) {
    if (e instanceof DecodeError || e instanceof DeltaError)
      throw new SessionError('protocol', `bad ENTRY from the host: ${e.message}`);
    throw e;
  }
}

/**
 * Keeps a client's slot ↔ nick maps (relayed messages name the slot) up to date as players enter
 * slots mid-game (rollback's `player-entered`), and drops a direct link to the nick's previous
 * incarnation (a killed process's link stays open until the transport times out).
 */
export function trackEntries(
  session: P2PSession,
  nickOf: Map<number, string>,
  slotOf: Map<string, number>,
  /** Drops a direct link (issue 17) to the previous incarnation of that nick, if any. */
  retire: (nick: string) => void,
): Unsubscribe {
  return session.on('player-entered', ({ player, peer }) => {
    nickOf.set(player, peer);
    slotOf.set(peer, player);
    retire(peer);
  });
}

import type { Peer } from './host-peer.js';
import type { SessionMode } from './mode.js';

/**
 * Whether players can enter a running game of `mode` (a new player in a free slot, or a player who
 * dropped coming back): lockstep-cs (its server takes clients at any frame and sends them the
 * state of their first frame as a page delta against the power-on state, deflated) and rollback
 * (the host's `P2PSession.admitPlayer` at an agreed frame: host-rollback-rejoin.ts) and
 * frame-advance (host-p2p-join.ts: the host's `FrameAdvancePeer` admits the joiner at a frame every
 * peer agrees on) and lockstep-p2p (host-p2p-join.ts: the host's `MeshPeer` admits the joiner,
 * a successor under the slot's id, at a frame every peer agrees on): every mode.
 */
export function joinsMidGame(mode: SessionMode): boolean {
  return mode === 'lockstep-cs' || mode === 'rollback' || mode === 'frame-advance' || mode === 'lockstep-p2p';
}

/**
 * Who held which player slot: the host's memory for rejoins. A player who drops leaves its nick on
 * its slot; the same nick coming back gets that slot again if it is free, and a newcomer takes the
 * lowest free slot nobody left (or, if every free slot was left by someone, the lowest).
 */
export class SlotMemory {
  private readonly lastSlot = new Map<string, number>();
  private readonly leftBy = new Map<number, string>();

  /** `nick` left player slot `slot`. */
  left(nick: string, slot: number): void {
    this.lastSlot.set(nick, slot);
    this.leftBy.set(slot, nick);
  }

  /** The slot `nick` last held, if it left one. */
  slotOf(nick: string): number | undefined {
    return this.lastSlot.get(nick);
  }

  /** The slot for `nick` among slots `1..players-1` not in `taken`; undefined if none is free. */
  pick(nick: string, taken: ReadonlySet<number>, players: number): number | undefined {
    const own = this.lastSlot.get(nick);
    if (own !== undefined && !taken.has(own) && own < players) return own;
    let fallback: number | undefined;
    for (let s = 1; s < players; s++) {
      if (taken.has(s)) continue;
      const by = this.leftBy.get(s);
      if (by === undefined || by === nick) return s;
      fallback ??= s;
    }
    return fallback;
  }
}

/**
 * How long an admitted player's connection must have been silent before a newcomer with its nick
 * from its address may replace it (400 ms: a lockstep-cs player sends its input every frame, so a
 * live one is never that quiet, while a killed process takes longer than that to restart).
 */
export const REPLACE_AFTER_SILENCE_MS = 400;

/**
 * The admitted player that a newcomer with `nick` from `address` (an `addressKey`) replaces: the
 * same nick from the same address, silent for {@link REPLACE_AFTER_SILENCE_MS}, is the same person
 * reconnecting (its old connection is dead but the transport has not noticed yet, e.g. a killed and
 * restarted process). A live player is never replaced (two players on one machine share an
 * address). Undefined if none.
 */
export function replacedBy(
  peers: Iterable<Peer>,
  nick: string,
  address: string,
  self: Peer,
  now: number,
): Peer | undefined {
  for (const p of peers)
    if (
      p !== self &&
      p.stage === 'playing' &&
      !p.spectate &&
      p.nick === nick &&
      p.address === address &&
      now - p.heardAt >= REPLACE_AFTER_SILENCE_MS
    )
      return p;
  return undefined;
}

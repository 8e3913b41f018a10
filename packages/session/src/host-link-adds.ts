import type { Timer } from '@netplay/transport';
import { type HostLinksDeps, resolveLinkAddress } from './host-links.js';
import type { Peer } from './host-peer.js';
import {
  encodeLinkSlots,
  encodeLinks,
  type LinkEntry,
  LinkMessageType,
  type LinkSlotsMessage,
} from './link-messages.js';

/** What a player announced in its LINK_ADDRESS. */
export interface Announced {
  readonly address: string;
  readonly dials: boolean;
}

/** The link setup of one player entering the running game. */
interface AddRound {
  readonly round: number;
  readonly peer: Peer;
  readonly slot: number;
  /** The players in the game it may link with, by slot (set when the addresses are known). */
  readonly others: ReadonlyMap<number, Peer>;
  stage: 'address' | 'links' | 'kept' | 'done';
  /** Slots paired with it (each dials it). */
  readonly pairs: Set<number>;
  /** Slots the entering player reported linked, and those that reported the link to it. */
  readonly mine: Set<number>;
  readonly theirs: Set<number>;
  /** Slots that still have to confirm they hold the link for its entry (LINK_ADD_KEPT). */
  readonly keeping: Set<number>;
  timer: Timer | undefined;
}

/**
 * Direct links for a player entering a running rollback game (issue 15; mid-game join or rejoin),
 * before the scheduler admits it, so that each of its pairs uses one path (its link, or the relay)
 * for its whole incarnation. The entering player is still in its handshake: it gets LINKS and
 * LINK_SET as at the start (it listens; every player in the game that dials is paired with it). The
 * players in the game get LINK_ADD (LINKS's body: the entering player's address and the pair's
 * token), dial it, authenticate with LINK_HELLO and report it (LINKS_READY of the round). Once every
 * pair reported from both ends (or after `timeoutMs`) the host sends the entering player LINK_SET
 * and each of the others LINK_ADD_SET (the pairs both ends reported); each of those answers
 * LINK_ADD_KEPT once it holds the link as the path to the entering player's next incarnation, and
 * only then (or after `timeoutMs` more) may the scheduler admit it: no pair learns of the entry
 * (rollback's ENTER) before it knows which path the pair takes.
 */
export class HostLinkAdds {
  private readonly rounds = new Map<Peer, AddRound>();

  constructor(
    private readonly deps: HostLinksDeps,
    private readonly timeoutMs: number,
    private readonly announced: (peer: Peer) => Announced | undefined,
    private readonly nextRound: () => number,
  ) {}

  /**
   * `peer` (slot `slot`) enters the running game; `others` are the players in the game (host
   * excluded). The setup waits for its LINK_ADDRESS up to `timeoutMs` (it follows INFO at once).
   */
  enter(peer: Peer, slot: number, others: ReadonlyMap<number, Peer>): void {
    this.drop(peer);
    const r: AddRound = {
      round: this.nextRound(),
      peer,
      slot,
      others: new Map(others),
      stage: 'address',
      pairs: new Set(),
      mine: new Set(),
      theirs: new Set(),
      keeping: new Set(),
      timer: undefined,
    };
    this.rounds.set(peer, r);
    if (this.announced(peer) !== undefined) this.sendAdds(r);
    else r.timer = this.deps.clock.setTimer(this.timeoutMs, () => this.sendAdds(r));
  }

  /** True unless `peer`'s link setup is under way (the scheduler may admit it). */
  settled(peer: Peer): boolean {
    return !this.rounds.has(peer);
  }

  /** `peer` sent its LINK_ADDRESS. */
  onAddress(peer: Peer): void {
    const r = this.rounds.get(peer);
    if (r?.stage === 'address') this.sendAdds(r);
  }

  /** LINKS_READY of a round that is not the start's: true if it belongs to an entry's setup. */
  onReady(peer: Peer, m: LinkSlotsMessage): boolean {
    for (const r of this.rounds.values()) {
      if ((r.round & 0xff) !== m.round) continue;
      if (r.stage !== 'links') return true;
      if (peer === r.peer) {
        r.mine.clear();
        for (const s of m.slots) if (r.pairs.has(s)) r.mine.add(s);
      } else if (peer.slot !== undefined && r.pairs.has(peer.slot) && r.others.get(peer.slot) === peer) {
        if (m.slots.includes(r.slot)) r.theirs.add(peer.slot);
      }
      if ([...r.pairs].every((s) => r.mine.has(s) && r.theirs.has(s))) this.finish(r);
      return true;
    }
    return false;
  }

  /** LINK_ADD_KEPT from a player in the game. */
  onKept(peer: Peer, m: LinkSlotsMessage): void {
    for (const r of this.rounds.values()) {
      if ((r.round & 0xff) !== m.round || r.stage !== 'kept' || peer.slot === undefined) continue;
      if (r.others.get(peer.slot) !== peer) continue;
      r.keeping.delete(peer.slot);
      if (r.keeping.size === 0) this.done(r);
    }
  }

  /** A peer closed: its own setup ends; a pair with it is simply never reported. */
  gone(peer: Peer): void {
    this.drop(peer);
    for (const r of this.rounds.values()) {
      if (peer.slot === undefined || r.others.get(peer.slot) !== peer) continue;
      r.keeping.delete(peer.slot);
      if (r.stage === 'kept' && r.keeping.size === 0) this.done(r);
    }
  }

  private drop(peer: Peer): void {
    const r = this.rounds.get(peer);
    if (r === undefined) return;
    r.timer?.cancel();
    this.rounds.delete(peer);
  }

  private live(r: AddRound): boolean {
    return this.rounds.get(r.peer) === r && r.peer.stage !== 'closed' && r.peer.conn.state !== 'closed';
  }

  /** The entering player's address is known (or never came): LINKS to it, LINK_ADD to each player that dials. */
  private sendAdds(r: AddRound): void {
    if (!this.live(r) || r.stage !== 'address') return;
    r.timer?.cancel();
    r.stage = 'links';
    const a = this.announced(r.peer);
    const mine: LinkEntry[] = [];
    if (a !== undefined && a.address !== '')
      for (const [slot, o] of [...r.others].sort(([x], [y]) => x - y)) {
        if (o === r.peer || o.stage !== 'playing' || o.conn.state === 'closed') continue;
        // Players in the game no longer listen (their listener closed at LINK_SET): they dial.
        if (this.announced(o)?.dials !== true) continue;
        const token = this.token();
        const address = resolveLinkAddress(a.address, r.peer.conn.remoteAddress);
        r.pairs.add(slot);
        // Where that player listens (it dials; the address is for coming back to it after a hand-over).
        const theirs = this.announced(o)?.address ?? '';
        const at = theirs === '' ? '' : resolveLinkAddress(theirs, o.conn.remoteAddress);
        mine.push({ slot, nick: o.nick ?? '', dial: false, address: at, token });
        this.deps.send(
          o,
          encodeLinks({
            type: LinkMessageType.LinkAdd,
            round: r.round,
            slot,
            entries: [{ slot: r.slot, nick: r.peer.nick ?? '', dial: true, address, token }],
          }),
        );
      }
    if (r.pairs.size === 0) {
      this.finish(r);
      return;
    }
    this.deps.send(r.peer, encodeLinks({ round: r.round, slot: r.slot, entries: mine }));
    r.timer = this.deps.clock.setTimer(this.timeoutMs, () => this.finish(r));
  }

  /** LINK_SET to the entering player, LINK_ADD_SET to its pairs; then wait for their LINK_ADD_KEPT. */
  private finish(r: AddRound): void {
    if (!this.live(r) || r.stage !== 'links') return;
    r.timer?.cancel();
    r.stage = 'kept';
    const direct = [...r.pairs].filter((s) => r.mine.has(s) && r.theirs.has(s)).sort((x, y) => x - y);
    // Only a player that announced links waits for a LINK_SET (it closes its listener on it).
    if (this.announced(r.peer) !== undefined)
      this.deps.send(r.peer, encodeLinkSlots({ type: LinkMessageType.LinkSet, round: r.round, slots: direct }));
    for (const s of r.pairs) {
      const o = r.others.get(s);
      if (o === undefined) continue;
      const keep = direct.includes(s);
      this.deps.send(
        o,
        encodeLinkSlots({ type: LinkMessageType.LinkAddSet, round: r.round, slots: keep ? [r.slot] : [] }),
      );
      if (keep && o.stage === 'playing' && o.conn.state !== 'closed') r.keeping.add(s);
    }
    if (r.keeping.size === 0) {
      this.done(r);
      return;
    }
    r.timer = this.deps.clock.setTimer(this.timeoutMs, () => this.done(r));
  }

  private done(r: AddRound): void {
    r.timer?.cancel();
    r.timer = undefined;
    r.stage = 'done';
    if (this.rounds.get(r.peer) === r) this.rounds.delete(r.peer);
  }

  private token(): Uint8Array {
    const t = new Uint8Array(8);
    const v = new DataView(t.buffer);
    v.setUint32(0, this.deps.randomU32() >>> 0);
    v.setUint32(4, this.deps.randomU32() >>> 0);
    return t;
  }
}

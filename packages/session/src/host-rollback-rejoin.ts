import { decodeWelcome, type P2PSession, RollbackError, type SendFn } from '@netplay/rollback';
import { DeltaBase } from '@netplay/state';
import { SessionError } from './errors.js';
import type { Peer } from './host-peer.js';
import type { SlotMemory } from './host-rejoin.js';
import { encodeWait, type RosterEntry } from './messages.js';
import { encodeRollbackEntry } from './rollback-entry.js';

/** What the rollback rejoin needs of the host (closures over its private state). */
export interface RollbackRejoinHost {
  /** The host's rollback scheduler (undefined before the start). */
  session(): P2PSession | undefined;
  /** The power-on state (the host's state when it was made): the base of every entry's page delta. */
  readonly initialState: Uint8Array;
  /** Milliseconds per frame. */
  readonly frameMs: number;
  readonly peers: Iterable<Peer>;
  readonly bySlot: Map<number, Peer>;
  readonly byNick: Map<string, Peer>;
  readonly slots: SlotMemory;
  readonly players: number;
  /** SYNC bytes for `slot` at `frame` with `roster` and `state` (packed by the host). */
  syncMessage(slot: number, frame: number, roster: RosterEntry[], state: Uint8Array): Uint8Array;
  roster(): RosterEntry[];
  send(peer: Peer, data: Uint8Array): void;
  /** Refuses `peer` without a `peer-refused` event (the replaced connection of a player reconnecting). */
  replaced(peer: Peer, error: SessionError): void;
  /** The player is in the game (`peer-joined`). */
  joined(nick: string, slot: number, rejoined: boolean): void;
  /**
   * Direct links (the host's `links`): an entering player is linked with the players in the game
   * (`enter`) before the scheduler may admit it (`settled`). Absent: no links.
   */
  links?(): {
    enter(peer: Peer, slot: number, others: ReadonlyMap<number, Peer>): void;
    settled(peer: Peer): boolean;
  };
}

/** Counts of the rollback entries the host shipped (for the rejoin bench). */
export interface RollbackEntryStats {
  /** Entries shipped. */
  entries: number;
  /** Bytes of the last ENTRY message, and of its page delta alone. */
  lastEntryBytes: number;
  lastDeltaBytes: number;
  /** The size of the last state shipped (what a full savestate would have cost). */
  lastStateBytes: number;
}

/**
 * Rollback rejoin and mid-game join at the host (issue 15). A player admitted once the game runs
 * (a same-nick rejoin, which gets its old slot back when it is free, or a newcomer in a free slot)
 * takes its slot at once in the session (so the room check counts it) but waits, receiving nothing
 * of the scheduler, until rollback's host admits it (`admitPlayer`: the slot's previous player is
 * removed at a final frame, the host has quorum even if this joiner never delivers…), which is tried
 * at every host tick. Then it gets ENTRY (type 11): its SYNC (the power-on state, packed), the
 * scheduler's WELCOME, and the state of the scheduler's final frame as a page delta against the
 * power-on state, deflated; every other peer learned the entry frame from rollback's ENTER.
 */
export class RollbackRejoins {
  private readonly waiting = new Map<Peer, { slot: number; rejoined: boolean }>();
  private base: DeltaBase | undefined;
  readonly stats: RollbackEntryStats = { entries: 0, lastEntryBytes: 0, lastDeltaBytes: 0, lastStateBytes: 0 };

  constructor(private readonly host: RollbackRejoinHost) {}

  /**
   * A player admitted into a running rollback game: the same nick from the same address replaces
   * its silent old connection, then it takes its old slot if free (else the lowest free one) and
   * waits for the scheduler.
   */
  admit(peer: Peer): void {
    const h = this.host;
    const old = peer.replaces;
    peer.replaces = undefined;
    if (old !== undefined && old.stage === 'playing')
      h.replaced(old, new SessionError('closed', `replaced: ${old.nick} reconnected from the same address`));
    const nick = peer.nick ?? '';
    h.byNick.set(nick, peer);
    const taken = new Set<number>([0, ...h.bySlot.keys()]);
    const slot = h.slots.pick(nick, taken, h.players) ?? h.players;
    peer.slot = slot;
    peer.stage = 'playing';
    h.bySlot.set(slot, peer);
    this.waiting.set(peer, { slot, rejoined: h.slots.slotOf(nick) === slot });
    // Admitted: its handshake timeout no longer applies while its entry is decided (event `waiting`).
    h.send(peer, encodeWait({ joined: h.bySlot.size + 1, players: h.players }));
    // Its direct links with the players in the game (not those still entering) come first.
    const others = new Map([...h.bySlot].filter(([, p]) => p !== peer && !this.waiting.has(p)));
    h.links?.().enter(peer, slot, others);
    this.tick();
  }

  /** True while `nick` waits for its entry: the scheduler's messages to that id are not for it. */
  isWaiting(nick: string): boolean {
    const p = this.host.byNick.get(nick);
    return p !== undefined && this.waiting.has(p);
  }

  /** The scheduler's send, holding back what is addressed to a player still waiting for its entry. */
  sender(inner: SendFn): SendFn {
    return (to, channel, data) => {
      if (this.waiting.size > 0 && this.isWaiting(to)) return;
      inner(to, channel, data);
    };
  }

  /** Every host tick: asks the scheduler to admit the waiting players; ships ENTRY to those it did. */
  tick(): void {
    if (this.waiting.size === 0) return;
    const s = this.host.session();
    if (s === undefined) return;
    for (const [peer, w] of [...this.waiting]) {
      if (peer.stage !== 'playing' || peer.nick === undefined) {
        this.waiting.delete(peer);
        continue;
      }
      if (this.host.links?.().settled(peer) === false) continue;
      let admission: ReturnType<P2PSession['admitPlayer']>;
      try {
        admission = s.admitPlayer(peer.nick, w.slot, this.leadFrames(peer));
      } catch (e) {
        // The old incarnation of this id is still connected to the scheduler (its leave not started yet).
        if (e instanceof RollbackError && e.code === 'bad-state') continue;
        throw e;
      }
      if (admission === undefined) continue;
      this.waiting.delete(peer);
      this.ship(peer, w.slot, admission);
      this.host.joined(peer.nick, w.slot, w.rejoined);
    }
  }

  /** Frames between the host's next frame and the joiner's entry: time for ENTRY to arrive and the state to load. */
  private leadFrames(peer: Peer): number {
    const rtt = peer.conn.stats.rttMs;
    return Math.min(600, Math.ceil((2 * rtt + 100) / this.host.frameMs));
  }

  private ship(peer: Peer, slot: number, a: NonNullable<ReturnType<P2PSession['admitPlayer']>>): void {
    const h = this.host;
    const welcome = decodeWelcome(a.welcome);
    // The joiner's remotes: the players of the slots that play or enter (not one still waiting).
    const roster = h.roster().filter((e) => e.slot === 0 || e.slot === slot || welcome.slots[e.slot]?.kind !== 'gone');
    const base = h.initialState;
    let delta: Uint8Array;
    if (a.state.length === base.length) {
      this.base ??= new DeltaBase(base, { layoutHash: 0n });
      delta = this.base.pageDelta(a.state);
    } else {
      // A core whose state size changed since power-on: a delta against zeros of the state's size.
      delta = new DeltaBase(new Uint8Array(a.state.length), { layoutHash: 0n }).pageDelta(a.state);
    }
    const msg = encodeRollbackEntry({
      sync: h.syncMessage(slot, a.frame, roster, base),
      welcome: a.welcome,
      delta,
    });
    this.stats.entries++;
    this.stats.lastEntryBytes = msg.length;
    this.stats.lastDeltaBytes = delta.length;
    this.stats.lastStateBytes = a.state.length;
    h.send(peer, msg);
  }
}

import { DecodeError } from '@netplay/protocol';
import type { Clock, Connection, Timer, Unsubscribe } from '@netplay/transport';
import { SESSION_CONTROL_CHANNEL } from './channels.js';
import { detachLink, sendOn, settle } from './client-links.js';
import {
  decodeLinkMessage,
  encodeLinkHello,
  encodeLinkSlots,
  type LinkEntry,
  LinkMessageType,
  type LinkSlotsMessage,
  type LinksMessage,
  tokensEqual,
} from './link-messages.js';

/** What {@link LinkAdds} needs of the client's links. */
export interface LinkAddsDeps {
  readonly clock: Clock;
  /** Dials an address (the client's `links.connect`). */
  connect(address: string): Promise<Connection> | Connection;
  /** Sends a session message to the host. */
  sendHost(data: Uint8Array): void;
  /** A dial must be answered within this. */
  readonly helloTimeoutMs: number;
}

/** A link to a player entering the running game. */
export interface AddedLink {
  readonly entry: LinkEntry;
  readonly round: number;
  readonly mySlot: number;
  conn: Connection | undefined;
  up: boolean;
  /** The host's LINK_ADD_SET kept it: it carries the entering player's incarnation once it entered. */
  kept: boolean;
  offs: Unsubscribe[];
  timer: Timer | undefined;
  /** Messages over it before the entry (the entering player may start before this client hears of it). */
  early: Array<{ channel: string; data: Uint8Array }>;
}

/** Messages of an entering player that arrive over its new link before this client learned of its entry. */
const MAX_EARLY = 1024;

/** Links to entering players held at once (a game has at most 15 other players): more LINK_ADD entries are ignored. */
const MAX_ADDED = 15;

/**
 * A playing client's links to players entering the running game (issue 15): LINK_ADD names one
 * (its address, the pair's token); this client dials it and authenticates as at the start
 * (LINK_HELLO both ways), reports it (LINKS_READY of that round), and on LINK_ADD_SET keeps it (or
 * drops it, the pair then keeps the relay) and confirms (LINK_ADD_KEPT). A kept link becomes the
 * path to that nick when the scheduler reports the player entered ({@link take}); what comes over
 * it before is held (the entering player may start first).
 */
export class LinkAdds {
  private readonly added = new Map<string, AddedLink>();
  private closed = false;

  constructor(private readonly deps: LinkAddsDeps) {}

  /** LINK_ADD from the host. */
  onAdd(m: LinksMessage): void {
    if (this.closed) return;
    for (const entry of m.entries) {
      if (!entry.dial) continue;
      const old = this.added.get(entry.nick);
      if (old !== undefined) this.drop(old, 'closed: a new link round');
      else if (this.added.size >= MAX_ADDED) continue;
      const a: AddedLink = {
        entry,
        round: m.round,
        mySlot: m.slot,
        conn: undefined,
        up: false,
        kept: false,
        offs: [],
        timer: undefined,
        early: [],
      };
      this.added.set(entry.nick, a);
      this.dial(a);
    }
  }

  /** LINK_ADD_SET from the host: keep the named links that are up, drop the round's others; confirm. */
  onAddSet(m: LinkSlotsMessage): void {
    const kept: number[] = [];
    for (const a of [...this.added.values()]) {
      if ((a.round & 0xff) !== m.round || a.kept) continue;
      if (m.slots.includes(a.entry.slot) && a.up && a.conn?.state === 'open') {
        a.kept = true;
        kept.push(a.entry.slot);
      } else this.drop(a, 'closed: the host chose the relay for this pair');
    }
    this.deps.sendHost(encodeLinkSlots({ type: LinkMessageType.LinkAddKept, round: m.round, slots: kept }));
  }

  /**
   * The scheduler reports `nick` entered: its kept link, if any (taken out of this set, its
   * handlers off, with what came over it before); undefined when the pair keeps the relay.
   */
  take(nick: string): AddedLink | undefined {
    const a = this.added.get(nick);
    if (a === undefined || !a.kept || a.conn?.state !== 'open') return undefined;
    this.added.delete(nick);
    for (const off of a.offs) off();
    a.offs = [];
    return a;
  }

  /** Closes every link not taken yet. */
  close(reason: string): void {
    this.closed = true;
    for (const a of [...this.added.values()]) this.drop(a, reason);
  }

  private dial(a: AddedLink): void {
    settle(
      () => this.deps.connect(a.entry.address),
      (conn) => {
        if (conn === undefined) return;
        if (this.closed || this.added.get(a.entry.nick) !== a) {
          conn.close('closed: link no longer wanted');
          return;
        }
        this.dialed(a, conn);
      },
    );
  }

  private dialed(a: AddedLink, conn: Connection): void {
    a.conn = conn;
    const hello = encodeLinkHello({ round: a.round, from: a.mySlot, to: a.entry.slot, token: a.entry.token });
    const sendHello = () => sendOn(conn, SESSION_CONTROL_CHANNEL, hello);
    a.timer = this.deps.clock.setTimer(this.deps.helloTimeoutMs, () => {
      a.timer = undefined;
      if (!a.up) this.drop(a, 'timeout: the link was not answered in time');
    });
    a.offs.push(
      conn.on('open', sendHello),
      conn.on('message', ({ channel, data }) => {
        if (a.up) {
          if (a.early.length < MAX_EARLY) a.early.push({ channel, data: data.slice() });
          return;
        }
        if (channel !== SESSION_CONTROL_CHANNEL || !answers(data, a)) {
          this.drop(a, 'protocol: bad link answer');
          return;
        }
        a.up = true;
        a.timer?.cancel();
        a.timer = undefined;
        this.deps.sendHost(
          encodeLinkSlots({ type: LinkMessageType.LinksReady, round: a.round, slots: [a.entry.slot] }),
        );
      }),
      conn.on('close', () => this.drop(a, 'closed')),
    );
    if (conn.state === 'open') sendHello();
    else if (conn.state === 'closed') this.drop(a, 'closed');
  }

  private drop(a: AddedLink, reason: string): void {
    if (this.added.get(a.entry.nick) === a) this.added.delete(a.entry.nick);
    detachLink(a)?.close(reason);
  }
}

/** The listener's answer: the same LINK_HELLO (round, slots, token). */
function answers(data: Uint8Array, a: AddedLink): boolean {
  try {
    const m = decodeLinkMessage(data);
    return (
      m.type === LinkMessageType.LinkHello &&
      m.round === (a.round & 0xff) &&
      m.from === a.mySlot &&
      m.to === a.entry.slot &&
      tokensEqual(m.token, a.entry.token)
    );
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    return false;
  }
}

import { DecodeError } from '@netplay/protocol';
import {
  addressKey,
  type Clock,
  type Connection,
  type Listener,
  type Timer,
  TransportError,
  type Unsubscribe,
} from '@netplay/transport';
import { SESSION_CONTROL_CHANNEL } from './channels.js';
import { type AddedLink, LinkAdds } from './client-link-adds.js';
import {
  decodeLinkMessage,
  encodeLinkAddress,
  encodeLinkHello,
  encodeLinkSlots,
  LINK_TOKEN_BYTES,
  type LinkEntry,
  LinkMessageType,
  type LinkSlotsMessage,
  type LinksMessage,
  tokensEqual,
} from './link-messages.js';

/**
 * Direct links to the other rollback players (issue 17): how this client is reached and how it
 * reaches the others. The host decides whether links are used (its `links` option); without this
 * option the client only takes the host's relay.
 */
export interface LinkOptions {
  /**
   * Opens this client's listener for the other players' dials and says where they reach it
   * (`":41000"`: the address the host sees this client from, port 41000; any other string is
   * passed on as it is, e.g. a WebRTC room name). Its connections must declare `SESSION_CHANNELS`.
   * Called once, when the client is admitted as a player. Absent: this client only dials.
   */
  readonly listen?: () => Promise<LinkListen> | LinkListen;
  /** Dials another player's address (as the host passed it on); the connection declares `SESSION_CHANNELS`. */
  readonly connect: (address: string) => Promise<Connection> | Connection;
  /** Unauthenticated connections the listener holds at once (default 16), and per source address (default 4). */
  readonly maxPending?: number;
  /** Unauthenticated connections the listener holds from one source address at once (default 4); one more from that address is closed at once with `server-full`. */
  readonly maxPendingPerAddress?: number;
  /** A dialer must authenticate within this (default 5 000 ms); a dial must be answered within it too. */
  readonly helloTimeoutMs?: number;
}

/** What {@link LinkOptions.listen} gives. */
export interface LinkListen {
  /** The open listener the other players dial (its connections declare `SESSION_CHANNELS`); the client closes it when the session ends. */
  readonly listener: Listener;
  /** The address to announce (see {@link LinkOptions.listen}). */
  readonly address: string;
}

/** What {@link ClientLinks} needs of the client. */
export interface ClientLinksDeps {
  readonly clock: Clock;
  /** Sends a session message to the host. */
  sendHost(data: Uint8Array): void;
  /** A game or session message from another player over its link (after LINK_SET). */
  message(nick: string, channel: string, data: Uint8Array): void;
  /** The link to `nick` closed after LINK_SET (`left`: the peer closed it). */
  lost(nick: string, how: 'left' | 'lost'): void;
  /**
   * A connection on the listener after LINK_SET (issue 15: a player coming back to the host
   * elected after a hand-over): true if taken. Absent: the listener closes at LINK_SET.
   */
  door?(conn: Connection): boolean;
  /** The links closed (the session ended): whatever the door holds closes too. */
  doorClosed?(reason: string): void;
}

interface Pending {
  readonly conn: Connection;
  readonly address: string;
  readonly offs: Unsubscribe[];
  timer: Timer | undefined;
  hello: Uint8Array | undefined;
}

/** A link: authenticated or not yet. */
interface Link {
  readonly entry: LinkEntry;
  conn: Connection | undefined;
  up: boolean;
  offs: Unsubscribe[];
  timer: Timer | undefined;
  /** Messages that came over it before LINK_SET (the peer got its LINK_SET and SYNC first). */
  early: Array<{ channel: string; data: Uint8Array }>;
}

/** Bytes of a LINK_HELLO: type, round, two slots, the token. */
const LINK_HELLO_BYTES = 4 + LINK_TOKEN_BYTES;

/** Messages of a player that arrive over its link before this client started its game. */
const MAX_EARLY_LINK_MESSAGES = 1024;

/**
 * One client's direct links to the other rollback players. Sans-I/O apart from the listener and
 * dial factories it is given: announces this client's address to the host (LINK_ADDRESS), dials
 * or accepts each pair the host's LINKS names, authenticates every link with the host's per-pair
 * token (LINK_HELLO both ways; a dialer that does not present a valid token within
 * `helloTimeoutMs` is closed, and at most `maxPending` unauthenticated connections are held, per
 * address too), reports the links up (LINKS_READY) and keeps only those LINK_SET names. Then
 * {@link connectionTo} is the path to that player for the whole game.
 */
export class ClientLinks {
  private listenerInfo: LinkListen | undefined;
  private listenerOff: Unsubscribe | undefined;
  private readonly pending = new Set<Pending>();
  private links = new Map<number, Link>();
  private round = -1;
  private mySlot = -1;
  /** After LINK_SET: the links used in the game, by nick. */
  private readonly direct = new Map<string, Connection>();
  private readonly early: Array<{ nick: string; channel: string; data: Uint8Array }> = [];
  private fixed = false;
  /** Adopted links whose earlier messages are not handed on yet (what follows waits behind them). */
  private readonly held = new Set<Link>();
  private delivering = false;
  private closed = false;
  private readonly maxPending: number;
  private readonly maxPendingPerAddress: number;
  private readonly helloTimeoutMs: number;
  /** Links to players entering the running game (LINK_ADD). */
  private readonly adds: LinkAdds;

  constructor(
    private readonly options: LinkOptions,
    private readonly deps: ClientLinksDeps,
  ) {
    this.maxPending = options.maxPending ?? 16;
    this.maxPendingPerAddress = options.maxPendingPerAddress ?? 4;
    this.helloTimeoutMs = options.helloTimeoutMs ?? 5000;
    this.adds = new LinkAdds({
      clock: deps.clock,
      connect: (a) => options.connect(a),
      sendHost: (d) => deps.sendHost(d),
      helloTimeoutMs: this.helloTimeoutMs,
    });
  }

  /** Admitted as a player (after INFO): open the listener and announce it (LINK_ADDRESS). */
  announce(): void {
    const listening = (l: LinkListen | undefined): void => {
      if (this.closed) {
        l?.listener.close('closed: the client left');
        return;
      }
      if (l !== undefined) {
        this.listenerInfo = l;
        this.listenerOff = l.listener.on('connection', (c) => this.accept(c));
      }
      this.deps.sendHost(encodeLinkAddress({ address: l?.address ?? '', dials: true }));
    };
    if (this.options.listen === undefined) {
      listening(undefined);
      return;
    }
    // Synchronous factories (the simulated network) answer at once; others when their promise settles.
    settle(this.options.listen, listening);
  }

  /** The address this client listens on (undefined: none). */
  get listening(): string | undefined {
    return this.listenerInfo?.listener.localAddress;
  }

  /** The game's direct link to `nick`, if LINK_SET kept one and it is open. */
  connectionTo(nick: string): Connection | undefined {
    const c = this.direct.get(nick);
    return c !== undefined && c.state === 'open' ? c : undefined;
  }

  /**
   * A new incarnation of `nick` entered its slot mid-game (rollback's ENTER): the old direct link is
   * closed and forgotten without being reported lost, since its late close would otherwise drop the
   * new incarnation; the link the host set up for its entry (LINK_ADD, LINK_ADD_SET), if any, is its
   * path from now on, else the host's relay.
   */
  retire(nick: string): void {
    const c = this.direct.get(nick);
    if (c !== undefined) {
      this.direct.delete(nick);
      c.close('closed: the player entered again');
    }
    const a = this.adds.take(nick);
    if (a !== undefined) this.adopt(a);
  }

  /**
   * A link to an entering player becomes its path: what came over it before is handed on at the
   * next clock turn (not inside the scheduler's `player-entered`), in order with what follows.
   */
  private adopt(a: AddedLink): void {
    const conn = a.conn;
    if (conn === undefined) return;
    const link: Link = { entry: a.entry, conn, up: true, offs: [], timer: undefined, early: a.early };
    this.links.set(a.entry.slot, link);
    this.direct.set(a.entry.nick, conn);
    const held = this.held;
    held.add(link);
    link.offs.push(
      conn.on('message', ({ channel, data }) => this.onLinkMessage(link, channel, data)),
      conn.on('close', ({ code }) => this.onLinkClose(link, code === 'remote')),
    );
    link.timer = this.deps.clock.setTimer(0, () => {
      link.timer = undefined;
      held.delete(link);
      for (const e of link.early.splice(0)) this.onLinkMessage(link, e.channel, e.data);
    });
  }

  /** What this client holds of its pair with `slot` (LINKS, or an entry's LINK_ADD): nick, address, token. */
  entryOf(slot: number): LinkEntry | undefined {
    return this.links.get(slot)?.entry;
  }

  /** After a hand-over, on the new host: `conn` (a returning player's) is the game's path to `nick`. */
  attach(nick: string, conn: Connection): void {
    this.direct.set(nick, conn);
  }

  /** Nicks with an open direct link in the game. */
  linkedNicks(): string[] {
    return [...this.direct].filter(([, c]) => c.state === 'open').map(([n]) => n);
  }

  /** LINKS or LINK_SET from the host (other link types from the host are a protocol error: returns false). */
  onHostMessage(data: Uint8Array): boolean {
    let m: ReturnType<typeof decodeLinkMessage>;
    try {
      m = decodeLinkMessage(data);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      return false;
    }
    if (m.type === LinkMessageType.Links) {
      this.startRound(m);
      return true;
    }
    if (m.type === LinkMessageType.LinkSet) {
      this.keep(m);
      return true;
    }
    if (m.type === LinkMessageType.LinkAdd) {
      this.adds.onAdd(m);
      return true;
    }
    if (m.type === LinkMessageType.LinkAddSet) {
      this.adds.onAddSet(m);
      return true;
    }
    return false;
  }

  /** The game started: messages that came over links before are handed on now. */
  startDelivery(): void {
    this.delivering = true;
    for (const e of this.early.splice(0)) this.deps.message(e.nick, e.channel, e.data);
  }

  /** Closes every link, pending connection and the listener. */
  close(reason = 'closed: the client left'): void {
    if (this.closed) return;
    this.closed = true;
    this.deps.doorClosed?.(reason);
    this.closeListener(reason);
    for (const p of [...this.pending]) this.dropPending(p, reason);
    for (const l of this.links.values()) this.dropLink(l, reason);
    for (const c of this.direct.values()) c.close(reason);
    this.direct.clear();
    this.adds.close(reason);
  }

  private closeListener(reason: string): void {
    this.listenerOff?.();
    this.listenerOff = undefined;
    // Authenticated links were accepted by it: keep them open while closing the listener itself.
    const l = this.listenerInfo?.listener;
    this.listenerInfo = undefined;
    if (l === undefined) return;
    const keep = new Set(this.direct.values());
    for (const link of this.links.values()) if (link.conn !== undefined && link.up) keep.add(link.conn);
    if (keep.size === 0 || this.closed) l.close(reason);
    else closeListenerKeeping(l, keep);
  }

  private startRound(m: LinksMessage): void {
    if (this.fixed) return;
    for (const l of this.links.values()) this.dropLink(l, 'closed: new link round');
    this.links = new Map();
    this.round = m.round;
    this.mySlot = m.slot;
    for (const e of m.entries) {
      const link: Link = { entry: e, conn: undefined, up: false, offs: [], timer: undefined, early: [] };
      this.links.set(e.slot, link);
      if (e.dial) this.dial(link);
    }
    for (const p of [...this.pending]) if (p.hello !== undefined) this.checkHello(p, p.hello);
    this.report();
  }

  private dial(link: Link): void {
    settle(
      () => this.options.connect(link.entry.address),
      (conn) => {
        if (conn !== undefined) this.dialed(link, conn);
      },
    );
  }

  private dialed(link: Link, conn: Connection): void {
    if (this.closed || this.links.get(link.entry.slot) !== link || this.fixed) {
      conn.close('closed: link no longer wanted');
      return;
    }
    link.conn = conn;
    const hello = encodeLinkHello({
      round: this.round,
      from: this.mySlot,
      to: link.entry.slot,
      token: link.entry.token,
    });
    const sendHello = () => sendOn(conn, SESSION_CONTROL_CHANNEL, hello);
    link.timer = this.deps.clock.setTimer(this.helloTimeoutMs, () => {
      link.timer = undefined;
      if (!link.up) this.dropLink(link, 'timeout: the link was not answered in time');
    });
    link.offs.push(
      conn.on('open', sendHello),
      conn.on('message', ({ channel, data }) => {
        if (!link.up) {
          const ok =
            channel === SESSION_CONTROL_CHANNEL &&
            data[0] === LinkMessageType.LinkHello &&
            this.helloMatches(data, this.mySlot, link.entry.slot, link.entry);
          if (!ok) {
            this.dropLink(link, 'protocol: bad link answer');
            return;
          }
          this.up(link);
          return;
        }
        this.onLinkMessage(link, channel, data);
      }),
      conn.on('close', ({ code }) => this.onLinkClose(link, code === 'remote')),
    );
    if (conn.state === 'open') sendHello();
    else if (conn.state === 'closed') this.onLinkClose(link, false);
  }

  private accept(conn: Connection): void {
    if (!this.closed && this.fixed && this.deps.door?.(conn) === true) return;
    if (this.closed || this.fixed) {
      conn.close('closed: not taking links');
      return;
    }
    const address = addressKey(conn.remoteAddress);
    let fromAddress = 0;
    for (const p of this.pending) if (p.address === address) fromAddress++;
    if (this.pending.size >= this.maxPending || fromAddress >= this.maxPendingPerAddress) {
      conn.close('server-full: too many unauthenticated links');
      return;
    }
    const p: Pending = { conn, address, offs: [], timer: undefined, hello: undefined };
    this.pending.add(p);
    p.timer = this.deps.clock.setTimer(this.helloTimeoutMs, () => {
      p.timer = undefined;
      this.dropPending(p, 'timeout: no link hello in time');
    });
    p.offs.push(
      conn.on('message', ({ channel, data }) => {
        if (!this.pending.has(p)) return;
        // Exactly one LINK_HELLO (12 bytes) first: an unauthenticated dialer gets nothing else held.
        if (
          channel !== SESSION_CONTROL_CHANNEL ||
          data[0] !== LinkMessageType.LinkHello ||
          data.length !== LINK_HELLO_BYTES ||
          p.hello !== undefined
        ) {
          this.dropPending(p, 'protocol: a link must start with a valid LINK_HELLO');
          return;
        }
        p.hello = data.slice();
        if (this.round >= 0) this.checkHello(p, p.hello);
      }),
      conn.on('close', () => this.dropPending(p, 'closed')),
    );
  }

  /** A dialer's hello, once this round's LINKS is known: a valid token for a pair not linked yet makes the link. */
  private checkHello(p: Pending, hello: Uint8Array): void {
    let from = -1;
    try {
      const m = decodeLinkMessage(hello);
      if (m.type === LinkMessageType.LinkHello) from = m.from;
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
    }
    const link = this.links.get(from);
    if (link === undefined || link.entry.dial || link.up || !this.helloMatches(hello, from, this.mySlot, link.entry)) {
      this.dropPending(p, 'protocol: bad link hello');
      return;
    }
    this.pending.delete(p);
    p.timer?.cancel();
    for (const off of p.offs) off();
    link.conn = p.conn;
    sendOn(p.conn, SESSION_CONTROL_CHANNEL, hello);
    link.offs.push(
      p.conn.on('message', ({ channel, data }) => this.onLinkMessage(link, channel, data)),
      p.conn.on('close', ({ code }) => this.onLinkClose(link, code === 'remote')),
    );
    this.up(link);
  }

  private helloMatches(data: Uint8Array, from: number, to: number, entry: LinkEntry): boolean {
    try {
      const m = decodeLinkMessage(data);
      return (
        m.type === LinkMessageType.LinkHello &&
        m.round === (this.round & 0xff) &&
        m.from === from &&
        m.to === to &&
        tokensEqual(m.token, entry.token)
      );
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      return false;
    }
  }

  private up(link: Link): void {
    link.up = true;
    link.timer?.cancel();
    link.timer = undefined;
    this.report();
  }

  private report(): void {
    if (this.fixed || this.round < 0) return;
    const slots = [...this.links.values()].filter((l) => l.up).map((l) => l.entry.slot);
    this.deps.sendHost(encodeLinkSlots({ type: LinkMessageType.LinksReady, round: this.round, slots }));
  }

  /** LINK_SET: these links carry the game; the others close, and so does the listener. */
  private keep(m: LinkSlotsMessage): void {
    if (this.fixed) return;
    this.fixed = true;
    const keep = new Set(m.round === (this.round & 0xff) ? m.slots : []);
    for (const [slot, l] of this.links) {
      if (keep.has(slot) && l.up && l.conn !== undefined && l.conn.state === 'open') {
        this.direct.set(l.entry.nick, l.conn);
        for (const e of l.early.splice(0)) this.onLinkMessage(l, e.channel, e.data);
      } else this.dropLink(l, 'closed: the host chose the relay for this pair');
    }
    for (const p of [...this.pending]) this.dropPending(p, 'closed: links are set');
    // With a door (issue 15) the listener stays open for players coming back after a hand-over.
    if (this.deps.door === undefined) this.closeListener('closed: links are set');
  }

  private onLinkMessage(link: Link, channel: string, data: Uint8Array): void {
    if (!this.fixed) {
      // The peer may have its LINK_SET and SYNC before this client: keep its game messages in order.
      if (link.early.length < MAX_EARLY_LINK_MESSAGES) link.early.push({ channel, data: data.slice() });
      return;
    }
    if (this.direct.get(link.entry.nick) !== link.conn) return;
    if (this.held.has(link)) {
      if (link.early.length < MAX_EARLY_LINK_MESSAGES) link.early.push({ channel, data: data.slice() });
      return;
    }
    if (this.delivering) this.deps.message(link.entry.nick, channel, data);
    else if (this.early.length < MAX_EARLY_LINK_MESSAGES)
      this.early.push({ nick: link.entry.nick, channel, data: data.slice() });
  }

  private onLinkClose(link: Link, remote: boolean): void {
    for (const off of link.offs) off();
    link.offs = [];
    link.timer?.cancel();
    link.timer = undefined;
    const wasDirect = link.conn !== undefined && this.direct.get(link.entry.nick) === link.conn;
    link.up = false;
    if (wasDirect) {
      this.direct.delete(link.entry.nick);
      if (!this.closed) this.deps.lost(link.entry.nick, remote ? 'left' : 'lost');
    } else if (!this.fixed && !this.closed) this.report();
  }

  private dropLink(link: Link, reason: string): void {
    const c = detachLink(link);
    if (c !== undefined && this.direct.get(link.entry.nick) !== c) c.close(reason);
  }

  private dropPending(p: Pending, reason: string): void {
    if (!this.pending.delete(p)) return;
    p.timer?.cancel();
    for (const off of p.offs) off();
    p.conn.close(reason);
  }
}

/** Sends on `conn` if it is open; a transport error (closing, over budget) drops the message. */
export function sendOn(conn: Connection, channel: string, data: Uint8Array): void {
  if (conn.state !== 'open') return;
  try {
    conn.send(channel, data);
  } catch (e) {
    if (!(e instanceof TransportError)) throw e;
  }
}

/**
 * Stops a listener taking connections while the links it accepted stay open: the contract's
 * `close` would close those too, so the listener is only closed once none of them is left.
 */
function closeListenerKeeping(listener: Listener, keep: ReadonlySet<Connection>): void {
  let left = keep.size;
  const offs: Unsubscribe[] = [];
  const off = listener.on('connection', (c) => c.close('closed: links are set'));
  for (const c of keep)
    offs.push(
      c.on('close', () => {
        if (--left === 0) {
          off();
          for (const o of offs) o();
          listener.close('closed: links are set');
        }
      }),
    );
}

/**
 * Detaches a link attempt (the start's or an entering player's): its listeners off, its timer
 * cancelled, its early messages dropped, not up; returns its connection (the caller decides
 * whether to close it).
 */
export function detachLink(link: {
  conn: Connection | undefined;
  up: boolean;
  offs: Unsubscribe[];
  timer: Timer | undefined;
  early: unknown[];
}): Connection | undefined {
  for (const off of link.offs) off();
  link.offs = [];
  link.timer?.cancel();
  link.timer = undefined;
  link.up = false;
  link.early = [];
  const c = link.conn;
  link.conn = undefined;
  return c;
}

/** Runs `make`; `then` gets its value at once when it is not a promise, else when the promise settles (undefined if it fails). */
export function settle<T>(make: () => Promise<T> | T, then: (value: T | undefined) => void): void {
  let v: Promise<T> | T;
  try {
    v = make();
  } catch {
    then(undefined);
    return;
  }
  if (v instanceof Promise)
    v.then(
      (x) => then(x),
      () => then(undefined),
    );
  else then(v);
}

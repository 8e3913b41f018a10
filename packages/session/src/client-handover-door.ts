import { DecodeError } from '@netplay/protocol';
import { decodeWelcome, type P2PSession, RollbackError } from '@netplay/rollback';
import { DeltaBase } from '@netplay/state';
import { addressKey, type Clock, type Connection, type Timer, type Unsubscribe } from '@netplay/transport';
import { HostGuard } from './admission.js';
import { SESSION_CONTROL_CHANNEL } from './channels.js';
import type { DoorOptions } from './client-mesh.js';
import type { ContentInfo } from './content.js';
import { SessionError } from './errors.js';
import { contentError, helloError, passwordMismatch } from './handshake-checks.js';
import { type Announced, HostLinkAdds } from './host-link-adds.js';
import { newPeer, type Peer, sendControl } from './host-peer.js';
import { decodeLinkMessage, type LinkEntry, LinkMessageType, tokensEqual } from './link-messages.js';
import {
  decodeSessionMessage,
  encodeChallenge,
  encodeRefuse,
  encodeSync,
  encodeWait,
  type RosterEntry,
  SessionMessageType,
  type SyncMessage,
} from './messages.js';
import { decodeRejoin, REJOIN_TYPE } from './rejoin-message.js';
import { encodeRollbackEntry } from './rollback-entry.js';
import { packSyncState } from './sync-state.js';

/** What {@link HandOverDoor} needs of the client that may become the host. */
export interface HandOverDoorDeps {
  readonly clock: Clock;
  /** This client's nick and slot. */
  readonly nick: string;
  readonly slot: number;
  /** The session's password as this client knows it ('' or undefined: none). */
  readonly password: string | undefined;
  readonly content: ContentInfo;
  readonly frameMs: number;
  randomU32(): number;
  session(): P2PSession | undefined;
  /** True once this client is the host elected after the hand-over. */
  isHost(): boolean;
  /** The SYNC this client started from (ENTRY's for a player that entered mid-game), its state unpacked: the power-on state. */
  sync(): SyncMessage | undefined;
  /** What this client holds of its pair with `slot` (the original host's LINKS, or an entry's). */
  entry(slot: number): LinkEntry | undefined;
  /** Players with an open direct link, and that link. */
  linked(): readonly string[];
  linkTo(nick: string): Connection | undefined;
  /** The nick playing `slot` as this client knows it (its own included). */
  nickOf(slot: number): string | undefined;
  slotOf(nick: string): number | undefined;
  /** The returning player's connection is its path from now on (the scheduler's messages to `nick`). */
  attach(nick: string, conn: Connection): void;
  /** A session message from a player in the game over its path (chat, pause requests). */
  sessionMessage(nick: string, data: Uint8Array): void;
}

/** A connection to the door, from arrival to its entry (or refusal). */
interface Guest {
  readonly peer: Peer;
  stage: 'hello' | 'info' | 'rejoin' | 'address' | 'links' | 'admit' | 'in' | 'closed';
  localPlayers: number;
  announced: Announced | undefined;
  readonly offs: Unsubscribe[];
}

/** Connections in the handshake the door holds, in total and from one address. */
const MAX_PENDING = 16;
const MAX_PENDING_PER_ADDRESS = 4;
/** Each must finish HELLO … REJOIN within this. */
const HANDSHAKE_MS = 5000;
/** Each wait of the link setup (as the original host's default). */
const LINKS_TIMEOUT_MS = 3000;
/** How often a returning player's admission is asked of the scheduler. */
const ADMIT_EVERY_MS = 50;

/**
 * The host elected after a rollback hand-over takes back a player who left (issue 15). Every
 * player's link listener stays open after LINK_SET; until this client is the host, a connection
 * there that is not a link is refused. Once it is, a connection may be a returning player: the
 * session's handshake (HELLO, CHALLENGE with a fresh salt, INFO with the password proof, core and
 * content), then REJOIN (type 28) with its old slot and the token of its pair with this client,
 * which only the original host and the two players of that pair ever held (a stranger cannot take
 * a slot). Unauthenticated connections are capped (16, 4 per address, 5 s each) and password
 * failures limited per address, and each connection's messages by the default rate budget (`flood`), with the original host's
 * `HostGuard`. The player is then linked
 * with the other players as at a mid-game entry (`HostLinkAdds`: LINK_ADD over this client's links),
 * the scheduler admits it (`admitPlayer`) and it gets ENTRY (its SYNC, the WELCOME, the state as a
 * page delta against the power-on state); its connection is its path to this client.
 */
export class HandOverDoor {
  private readonly guests = new Set<Guest>();
  private readonly guard = new HostGuard<Peer>(
    { admission: { maxPending: MAX_PENDING, maxPendingPerAddress: MAX_PENDING_PER_ADDRESS } },
    HANDSHAKE_MS,
  );
  /** Other players as `Peer`s of their direct links (for `HostLinkAdds`), by nick. */
  private readonly members = new Map<string, Peer>();
  private readonly adds: HostLinkAdds;
  private round = 127;
  private admitTimer: Timer | undefined;
  private base: DeltaBase | undefined;
  private closed = false;

  constructor(private readonly deps: HandOverDoorDeps) {
    this.adds = new HostLinkAdds(
      { clock: deps.clock, randomU32: () => deps.randomU32(), send: (p, d) => sendControl(p, d) },
      LINKS_TIMEOUT_MS,
      (p) => this.announcedOf(p),
      () => ++this.round,
    );
  }

  /** A connection on this client's link listener after LINK_SET: true if the door takes it (this client is the host). */
  accept(conn: Connection): boolean {
    if (this.closed || !this.deps.isHost()) return false;
    const now = this.deps.clock.now();
    const peer = newPeer(conn, addressKey(conn.remoteAddress), this.guard.budget(now), now);
    const arrival = this.guard.arrive(peer, peer.address, now);
    if (!arrival.ok) {
      refuse(peer, arrival.error);
      return true;
    }
    if (arrival.evicted !== undefined) {
      const old = [...this.guests].find((g) => g.peer === arrival.evicted);
      if (old !== undefined) this.refuse(old, this.guard.evictedError());
    }
    const g: Guest = { peer, stage: 'hello', localPlayers: 1, announced: undefined, offs: [] };
    this.guests.add(g);
    peer.timer = this.deps.clock.setTimer(HANDSHAKE_MS, () => {
      peer.timer = undefined;
      if (g.stage === 'hello' || g.stage === 'info' || g.stage === 'rejoin')
        this.refuse(g, new SessionError('timeout', `handshake not done within ${HANDSHAKE_MS} ms`));
    });
    g.offs.push(
      conn.on('message', ({ channel, data }) => this.onMessage(g, channel, data)),
      conn.on('close', ({ code }) => this.onClose(g, code === 'remote')),
    );
    return true;
  }

  /** LINKS_READY or LINK_ADD_KEPT from a player in the game (over its link to this host). */
  onLinkMessage(from: string, data: Uint8Array): void {
    const p = this.members.get(from);
    if (p === undefined) return;
    let m: ReturnType<typeof decodeLinkMessage>;
    try {
      m = decodeLinkMessage(data);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      return;
    }
    if (m.type === LinkMessageType.LinksReady) this.adds.onReady(p, m);
    else if (m.type === LinkMessageType.LinkAddKept) this.adds.onKept(p, m);
  }

  /** The session ended: every guest is closed. */
  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.admitTimer?.cancel();
    for (const g of [...this.guests]) {
      this.drop(g);
      g.peer.conn.close(reason);
    }
  }

  private announcedOf(p: Peer): Announced | undefined {
    for (const g of this.guests) if (g.peer === p) return g.announced;
    // A player in the game dials (its listener only takes returning players now).
    return { address: '', dials: true };
  }

  private onMessage(g: Guest, channel: string, data: Uint8Array): void {
    if (g.stage === 'closed') return;
    // The original host's per-client budget (default 4,000 messages/s, 4 MiB/s), before anything is decoded.
    const budget = g.peer.budget;
    if (budget !== undefined && !budget.take(data.length, this.deps.clock.now())) {
      const wasIn = g.stage === 'in';
      this.refuse(g, this.guard.floodError(budget));
      if (wasIn && g.peer.nick !== undefined) this.deps.session()?.disconnectPeer(g.peer.nick, 'lost');
      return;
    }
    const nick = g.peer.nick ?? '';
    if (g.stage === 'in') {
      if (channel === SESSION_CONTROL_CHANNEL) this.deps.sessionMessage(nick, data);
      else this.deps.session()?.receive(nick, channel, data);
      return;
    }
    if (channel !== SESSION_CONTROL_CHANNEL) {
      // Before its entry a returning player sends nothing of the game (this host relays nothing).
      if (g.stage === 'hello' || g.stage === 'info' || g.stage === 'rejoin')
        this.refuse(g, new SessionError('protocol', `game message on ${channel} before the handshake finished`));
      return;
    }
    if (g.stage === 'rejoin') {
      this.onRejoin(g, data);
      return;
    }
    if (data[0] === LinkMessageType.LinkAddress || data[0] === LinkMessageType.LinksReady) {
      this.onGuestLink(g, data);
      return;
    }
    let m: ReturnType<typeof decodeSessionMessage>;
    try {
      m = decodeSessionMessage(data);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      this.refuse(g, new SessionError('protocol', `bad session message: ${e.message}`));
      return;
    }
    if (g.stage === 'hello' && m.type === SessionMessageType.Hello) {
      const error =
        helloError(m) ??
        (m.spectate
          ? new SessionError(
              'unsupported-mode',
              `${this.deps.nick} took over as the host and takes back only players who left: no spectators after a hand-over`,
            )
          : undefined) ??
        (this.hasPassword() ? this.guard.blocked(g.peer.address, this.deps.clock.now()) : undefined);
      if (error !== undefined) {
        this.refuse(g, error);
        return;
      }
      g.peer.nick = m.nick;
      g.localPlayers = m.localPlayers ?? 1;
      g.peer.salt = this.deps.randomU32() >>> 0;
      g.stage = 'info';
      sendControl(
        g.peer,
        encodeChallenge({
          passwordRequired: this.hasPassword(),
          salt: g.peer.salt,
          nick: m.nick,
          hostNick: this.deps.nick,
        }),
      );
      return;
    }
    if (g.stage === 'info' && m.type === SessionMessageType.Info) {
      if (this.hasPassword()) {
        const now = this.deps.clock.now();
        const blocked = this.guard.blocked(g.peer.address, now);
        const wrong = blocked ? undefined : passwordMismatch(m, g.peer.salt, this.deps.password ?? '');
        if (blocked || wrong !== undefined) {
          this.refuse(g, blocked ?? this.guard.failed(g.peer.address, now, wrong ?? ''));
          return;
        }
        this.guard.succeeded(g.peer.address);
      }
      const mismatch = contentError(m, this.deps.content);
      if (mismatch) {
        this.refuse(g, mismatch);
        return;
      }
      g.stage = 'rejoin';
      return;
    }
    if (m.type === SessionMessageType.ChatSend || m.type === SessionMessageType.CommandRequest) return;
    this.refuse(g, new SessionError('protocol', `unexpected session message ${m.type}`));
  }

  /** REJOIN: the slot it held and the token of its pair with this host. */
  private onRejoin(g: Guest, data: Uint8Array): void {
    const nick = g.peer.nick ?? '';
    if (data[0] !== REJOIN_TYPE) {
      this.refuse(
        g,
        new SessionError(
          'server-full',
          `${this.deps.nick} took over as the host and takes back only players who left the game (${nick} sent no rejoin token)`,
        ),
      );
      return;
    }
    let slot: number;
    let token: Uint8Array;
    try {
      ({ slot, token } = decodeRejoin(data));
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      this.refuse(g, new SessionError('protocol', `bad REJOIN: ${e.message}`));
      return;
    }
    const entry = this.deps.entry(slot);
    if (entry === undefined || entry.nick !== nick || !tokensEqual(entry.token, token)) {
      this.refuse(
        g,
        new SessionError('bad-password', `wrong rejoin token: ${nick} did not hold slot ${slot} with this host`),
      );
      return;
    }
    const s = this.deps.session();
    const sync = this.deps.sync();
    if (s === undefined || sync === undefined) {
      this.refuse(g, new SessionError('closed', 'the game is over'));
      return;
    }
    if (s.activePlayers().includes(slot) && this.deps.nickOf(slot) !== nick) {
      this.refuse(g, new SessionError('server-full', `slot ${slot} is taken`));
      return;
    }
    for (const o of this.guests)
      if (o !== g && o.peer.slot === slot && o.stage !== 'closed')
        this.refuse(o, new SessionError('closed', `replaced: ${nick} reconnected`));
    g.peer.slot = slot;
    g.peer.stage = 'playing';
    g.stage = 'address';
    g.peer.timer?.cancel();
    g.peer.timer = undefined;
    this.guard.authenticated(g.peer);
    sendControl(g.peer, encodeWait({ joined: s.activePlayers().length, players: sync.players }));
  }

  /** LINK_ADDRESS (then the links to every other player are set up) or LINKS_READY of its round. */
  private onGuestLink(g: Guest, data: Uint8Array): void {
    let m: ReturnType<typeof decodeLinkMessage>;
    try {
      m = decodeLinkMessage(data);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      this.refuse(g, new SessionError('protocol', `bad link message: ${e.message}`));
      return;
    }
    if (m.type === LinkMessageType.LinksReady) {
      if (g.stage === 'links' || g.stage === 'admit') this.adds.onReady(g.peer, m);
      return;
    }
    if (m.type !== LinkMessageType.LinkAddress || g.stage !== 'address') {
      this.refuse(g, new SessionError('protocol', `unexpected link message ${m.type}`));
      return;
    }
    if (m.address === '') {
      this.refuse(
        g,
        new SessionError(
          'unsupported-mode',
          'after a host hand-over a returning player needs direct links (its listener): the new host relays nothing',
        ),
      );
      return;
    }
    g.announced = { address: m.address, dials: m.dials };
    g.stage = 'links';
    const others = new Map<number, Peer>();
    this.members.clear();
    for (const nick of this.deps.linked()) {
      const conn = this.deps.linkTo(nick);
      const slot = this.deps.slotOf(nick);
      if (conn === undefined || slot === undefined || nick === g.peer.nick) continue;
      const p = newPeer(conn, addressKey(conn.remoteAddress), undefined, this.deps.clock.now());
      p.stage = 'playing';
      p.nick = nick;
      p.slot = slot;
      others.set(slot, p);
      this.members.set(nick, p);
    }
    this.adds.enter(g.peer, g.peer.slot ?? 0, others);
    this.scheduleAdmit();
  }

  private scheduleAdmit(): void {
    if (this.admitTimer !== undefined || this.closed) return;
    this.admitTimer = this.deps.clock.setTimer(ADMIT_EVERY_MS, () => {
      this.admitTimer = undefined;
      if (this.tryAdmit()) this.scheduleAdmit();
    });
  }

  /** Asks the scheduler to admit every guest whose links are settled; true while some still wait. */
  private tryAdmit(): boolean {
    const s = this.deps.session();
    let waiting = false;
    for (const g of this.guests) {
      if (g.stage !== 'links' && g.stage !== 'admit') continue;
      if (!this.adds.settled(g.peer)) {
        waiting = true;
        continue;
      }
      g.stage = 'admit';
      if (s === undefined || !this.deps.isHost()) {
        waiting = true;
        continue;
      }
      const nick = g.peer.nick ?? '';
      const slot = g.peer.slot ?? 0;
      let a: ReturnType<P2PSession['admitPlayer']>;
      try {
        const rtt = g.peer.conn.stats.rttMs;
        a = s.admitPlayer(nick, slot, Math.min(600, Math.ceil((2 * rtt + 100) / this.deps.frameMs)));
      } catch (e) {
        // Its previous incarnation is still connected to the scheduler (a killed player not noticed yet).
        if (e instanceof RollbackError && e.code === 'bad-state') {
          waiting = true;
          continue;
        }
        throw e;
      }
      if (a === undefined) {
        waiting = true;
        continue;
      }
      g.stage = 'in';
      this.deps.attach(nick, g.peer.conn);
      this.ship(g, s, a);
    }
    return waiting;
  }

  private ship(g: Guest, s: P2PSession, a: NonNullable<ReturnType<P2PSession['admitPlayer']>>): void {
    const sync = this.deps.sync()!;
    const slot = g.peer.slot ?? 0;
    const welcome = decodeWelcome(a.welcome);
    const localOf = new Map<number, number>();
    for (const [i, e] of sync.roster.entries()) localOf.set(e.slot, sync.localPlayers?.[i] ?? 1);
    localOf.set(slot, g.localPlayers);
    const roster: RosterEntry[] = [];
    for (let p = 0; p < sync.players; p++) {
      if (p !== slot && welcome.slots[p]?.kind === 'gone') continue;
      const nick = p === slot ? g.peer.nick : p === this.deps.slot ? this.deps.nick : this.deps.nickOf(p);
      if (nick !== undefined) roster.push({ slot: p, nick });
    }
    const base = sync.state;
    if (a.state.length === base.length) this.base ??= new DeltaBase(base, { layoutHash: 0n });
    // A core whose state size changed since power-on: a delta against zeros of the state's size.
    const deltaBase =
      a.state.length === base.length && this.base !== undefined
        ? this.base
        : new DeltaBase(new Uint8Array(a.state.length), { layoutHash: 0n });
    const delta = deltaBase.pageDelta(a.state);
    const syncBytes = encodeSync({
      mode: 'rollback',
      frame: a.frame,
      players: sync.players,
      slot,
      inputDelay: s.inputDelay,
      inputBytes: sync.inputBytes,
      roster,
      state: packSyncState(base),
      ...(sync.portsPerSlot !== undefined ? { portsPerSlot: sync.portsPerSlot } : {}),
      ...(sync.commandByte !== undefined ? { commandByte: sync.commandByte } : {}),
      ...(sync.localPlayers !== undefined ? { localPlayers: roster.map((e) => localOf.get(e.slot) ?? 1) } : {}),
    });
    sendControl(g.peer, encodeRollbackEntry({ sync: syncBytes, welcome: a.welcome, delta }));
  }

  private onClose(g: Guest, remote: boolean): void {
    const wasIn = g.stage === 'in';
    this.drop(g);
    if (wasIn && g.peer.nick !== undefined) this.deps.session()?.disconnectPeer(g.peer.nick, remote ? 'left' : 'lost');
  }

  private drop(g: Guest): void {
    if (g.stage === 'closed') return;
    g.stage = 'closed';
    g.peer.stage = 'closed';
    g.peer.timer?.cancel();
    g.peer.timer = undefined;
    for (const off of g.offs) off();
    this.guests.delete(g);
    this.guard.gone(g.peer);
    this.adds.gone(g.peer);
  }

  private refuse(g: Guest, error: SessionError): void {
    this.drop(g);
    refuse(g.peer, error);
  }

  private hasPassword(): boolean {
    return this.deps.password !== undefined && this.deps.password !== '';
  }
}

function refuse(peer: Peer, error: SessionError): void {
  sendControl(peer, encodeRefuse({ code: error.code, message: error.message }));
  peer.conn.close(error.closeReason);
}

/** The door's options from the client's (`password`, `content`, `fps`, `randomU32`) and its relay map. */
export function doorOptions(
  o: {
    readonly password?: string | undefined;
    readonly content: ContentInfo;
    readonly fps?: number | undefined;
    readonly randomU32?: (() => number) | undefined;
  },
  nickOf: ReadonlyMap<number, string>,
): DoorOptions {
  const random =
    o.randomU32 ??
    (() => {
      const a = new Uint32Array(1);
      globalThis.crypto.getRandomValues(a);
      return a[0] ?? 0;
    });
  return { password: o.password, content: o.content, frameMs: 1000 / (o.fps ?? 60), randomU32: random, nickOf };
}

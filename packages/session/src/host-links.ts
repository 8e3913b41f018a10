import { DecodeError } from '@netplay/protocol';
import { addressKey, type Clock, type Timer } from '@netplay/transport';
import { SessionError } from './errors.js';
import { type Announced, HostLinkAdds } from './host-link-adds.js';
import type { Peer } from './host-peer.js';
import {
  decodeLinkMessage,
  encodeLinkSlots,
  encodeLinks,
  isLinkMessage,
  type LinkEntry,
  LinkMessageType,
} from './link-messages.js';

/** Default time the host gives the players to announce their addresses, and again to link up. */
export const DEFAULT_LINK_TIMEOUT_MS = 3000;

/** What {@link HostLinks} needs of the host. */
export interface HostLinksDeps {
  readonly clock: Clock;
  readonly randomU32: () => number;
  /** Sends a session message to a player. */
  send(peer: Peer, data: Uint8Array): void;
}

interface Round {
  readonly round: number;
  stage: 'addresses' | 'ready';
  readonly players: ReadonlyMap<number, Peer>;
  readonly count: number;
  /** Slots each player should be linked with (a pair one of them can dial). */
  readonly expected: Map<number, Set<number>>;
  readonly ready: Map<number, Set<number>>;
  timer: Timer | undefined;
  readonly start: () => void;
}

/**
 * Where another player dials `peer`: its announced address, with the host part the host sees it
 * from when the announcement starts with `":"` (`":41000"` from `10.0.0.7:5123` → `10.0.0.7:41000`).
 */
export function resolveLinkAddress(announced: string, remoteAddress: string): string {
  if (!announced.startsWith(':')) return announced;
  const host = addressKey(remoteAddress);
  return host.includes(':') ? `[${host}]${announced}` : `${host}${announced}`;
}

/**
 * The host's side of the direct links between rollback players (issue 17): when every slot is
 * filled it collects each player's LINK_ADDRESS (sent right after INFO), sends every player LINKS
 * (the others' addresses, who dials whom, a fresh 8-byte token per pair from `randomU32`), waits
 * for the players' LINKS_READY, and sends LINK_SET (the pairs both ends reported linked) just
 * before SYNC. Each wait is bounded by `timeoutMs`: a pair not linked in time keeps the host's
 * relay for the whole game. The game starts (`start`) only after LINK_SET.
 */
export class HostLinks {
  private readonly announced = new Map<Peer, Announced>();
  private current: Round | undefined;
  private rounds = 0;
  /** Links for players entering the running game. */
  private readonly adds: HostLinkAdds;

  constructor(
    private readonly deps: HostLinksDeps,
    /** Each of the two waits (addresses, links). */
    readonly timeoutMs: number,
    /** False: {@link prepare} starts the game at once (the host relays everything). */
    readonly enabled = true,
  ) {
    this.adds = new HostLinkAdds(
      deps,
      timeoutMs,
      (p) => this.announced.get(p),
      () => ++this.rounds,
    );
  }

  /**
   * A player enters the running game (`slot`; mid-game join or rejoin): links it with the players
   * in the game (`others`, by slot) before the scheduler admits it ({@link settled}).
   */
  enter(peer: Peer, slot: number, others: ReadonlyMap<number, Peer>): void {
    if (this.enabled) this.adds.enter(peer, slot, others);
  }

  /** False while an entering player's links are being set up: the scheduler must not admit it yet. */
  settled(peer: Peer): boolean {
    return this.adds.settled(peer);
  }

  /** The host's links as its options say (on only in rollback with `links`). */
  static of(
    mode: string,
    options: { readonly links?: boolean | { readonly timeoutMs?: number } },
    clock: Clock,
    randomU32: () => number,
    send: (peer: Peer, data: Uint8Array) => void,
  ): HostLinks {
    const o = options.links;
    const timeoutMs = typeof o === 'object' ? (o.timeoutMs ?? DEFAULT_LINK_TIMEOUT_MS) : DEFAULT_LINK_TIMEOUT_MS;
    return new HostLinks({ clock, randomU32, send }, timeoutMs, mode === 'rollback' && o !== undefined && o !== false);
  }

  /**
   * A session message from an admitted player: LINK_ADDRESS or LINKS_READY are taken and true is
   * returned; false for any other message. @returns a `SessionError` for a malformed link message
   * or one the host never receives (LINKS, LINK_HELLO, LINK_SET).
   */
  onMessage(peer: Peer, data: Uint8Array): boolean | SessionError {
    const t = data[0] ?? 0;
    if (t !== LinkMessageType.LinkAddress && t !== LinkMessageType.LinksReady && t !== LinkMessageType.LinkAddKept) {
      if (isLinkMessage(data)) return new SessionError('protocol', `link message ${t} is not sent to the host`);
      return false;
    }
    // A player's LINK_ADDRESS follows its INFO at once: kept whatever the admission's stage (a
    // player entering a running game may still be on its way in); used only by a round's players.
    if (peer.stage === 'closed' || peer.spectate) return true;
    let m: ReturnType<typeof decodeLinkMessage>;
    try {
      m = decodeLinkMessage(data);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      return new SessionError('protocol', `bad link message: ${e.message}`);
    }
    if (m.type === LinkMessageType.LinkAddress) {
      this.announced.set(peer, { address: m.address, dials: m.dials });
      const r = this.current;
      if (r?.stage === 'addresses' && [...r.players.values()].every((p) => this.announced.has(p))) this.sendLinks(r);
      this.adds.onAddress(peer);
      return true;
    }
    if (m.type === LinkMessageType.LinkAddKept) {
      this.adds.onKept(peer, m);
      return true;
    }
    if (m.type === LinkMessageType.LinksReady) {
      const r = this.current;
      if (r === undefined || m.round !== (r.round & 0xff)) {
        this.adds.onReady(peer, m);
        return true;
      }
      if (r.stage !== 'ready' || peer.slot === undefined) return true;
      const expected = r.expected.get(peer.slot);
      r.ready.set(peer.slot, new Set(m.slots.filter((s) => expected?.has(s) === true)));
      if ([...r.expected].every(([slot, want]) => (r.ready.get(slot)?.size ?? 0) >= want.size)) this.finish(r);
    }
    return true;
  }

  /** Forgets a peer that closed. */
  gone(peer: Peer): void {
    this.announced.delete(peer);
    this.adds.gone(peer);
  }

  /** True while links are being set up (the game has not started). */
  get preparing(): boolean {
    return this.current !== undefined;
  }

  /**
   * Every slot is filled (`players`, the host's slot 0 excluded): sets up the links, then calls
   * `start` (after LINK_SET). A player leaving before then voids the round (the next admission
   * starts a new one).
   */
  prepare(players: ReadonlyMap<number, Peer>, start: () => void): void {
    this.current?.timer?.cancel();
    this.current = undefined;
    if (!this.enabled || players.size < 2) {
      start();
      return;
    }
    const r: Round = {
      round: ++this.rounds,
      stage: 'addresses',
      players: new Map(players),
      count: players.size,
      expected: new Map(),
      ready: new Map(),
      timer: undefined,
      start,
    };
    this.current = r;
    if ([...r.players.values()].every((p) => this.announced.has(p))) this.sendLinks(r);
    else r.timer = this.deps.clock.setTimer(this.timeoutMs, () => this.sendLinks(r));
  }

  /** Drops the round if one of its players left (the host then waits for a new player as before). */
  private valid(r: Round): boolean {
    if (this.current !== r) return false;
    for (const p of r.players.values())
      if (p.stage !== 'playing' || p.conn.state === 'closed') {
        r.timer?.cancel();
        this.current = undefined;
        return false;
      }
    return true;
  }

  private sendLinks(r: Round): void {
    if (!this.valid(r) || r.stage !== 'addresses') return;
    r.timer?.cancel();
    r.stage = 'ready';
    const slots = [...r.players.keys()].sort((a, b) => a - b);
    const entries = new Map<number, LinkEntry[]>(slots.map((s) => [s, []]));
    for (let i = 0; i < slots.length; i++)
      for (let j = i + 1; j < slots.length; j++) {
        const a = slots[i]!;
        const b = slots[j]!;
        const pa = r.players.get(a)!;
        const pb = r.players.get(b)!;
        const na = this.announced.get(pa);
        const nb = this.announced.get(pb);
        // The lower slot dials the higher one when it can; else the other way round; else no link.
        let dialer: 'a' | 'b' | undefined;
        if (nb !== undefined && nb.address !== '' && na?.dials === true) dialer = 'a';
        else if (na !== undefined && na.address !== '' && nb?.dials === true) dialer = 'b';
        if (dialer === undefined) continue;
        const token = this.token();
        // The listener's address goes to both ends (issue 15: after a hand-over a player who left
        // comes back to the new host there); only the dialer dials it.
        const addrA =
          na !== undefined && na.address !== '' ? resolveLinkAddress(na.address, pa.conn.remoteAddress) : '';
        const addrB =
          nb !== undefined && nb.address !== '' ? resolveLinkAddress(nb.address, pb.conn.remoteAddress) : '';
        entries.get(a)!.push({ slot: b, nick: pb.nick ?? '', dial: dialer === 'a', address: addrB, token });
        entries.get(b)!.push({ slot: a, nick: pa.nick ?? '', dial: dialer === 'b', address: addrA, token });
        this.expect(r, a, b);
        this.expect(r, b, a);
      }
    if (r.expected.size === 0) {
      this.finish(r);
      return;
    }
    for (const [slot, list] of entries)
      if (list.length > 0) this.deps.send(r.players.get(slot)!, encodeLinks({ round: r.round, slot, entries: list }));
    r.timer = this.deps.clock.setTimer(this.timeoutMs, () => this.finish(r));
  }

  private expect(r: Round, a: number, b: number): void {
    const s = r.expected.get(a) ?? new Set<number>();
    r.expected.set(a, s);
    s.add(b);
  }

  /** LINK_SET to every player (pairs both ends reported), then the game starts. */
  private finish(r: Round): void {
    if (!this.valid(r)) return;
    r.timer?.cancel();
    this.current = undefined;
    for (const [slot, p] of r.players) {
      const mine = r.ready.get(slot) ?? new Set<number>();
      const direct = [...mine].filter((s) => r.ready.get(s)?.has(slot) === true).sort((x, y) => x - y);
      this.deps.send(p, encodeLinkSlots({ type: LinkMessageType.LinkSet, round: r.round, slots: direct }));
    }
    r.start();
  }

  private token(): Uint8Array {
    const t = new Uint8Array(8);
    const v = new DataView(t.buffer);
    v.setUint32(0, this.deps.randomU32() >>> 0);
    v.setUint32(4, this.deps.randomU32() >>> 0);
    return t;
  }
}

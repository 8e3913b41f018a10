import { ByteReader, DecodeError } from '@netplay/protocol';

/**
 * Session messages of the direct links between rollback players (issue 17) and the host hand-over
 * (issue 15): types 15–19 on `np-session`, and 25–27 (protocol 5) for a player entering the running game. They are decoded here, apart from the handshake's
 * codec, by whoever reads a message whose first byte is one of these types ({@link isLinkMessage}).
 */
export const LinkMessageType = {
  /** Player → host, right after INFO: how other players can reach this one (empty: they cannot) and whether it dials. */
  LinkAddress: 15,
  /** Host → player, once every slot is filled: the other players' addresses and a token per pair. */
  Links: 16,
  /** Player → player on a direct link (the dialer first; the listener answers the same bytes): who and the pair's token. */
  LinkHello: 17,
  /** Player → host: the players this one has an authenticated direct link with. */
  LinksReady: 18,
  /** Host → player, just before SYNC: the players to reach over the direct link for the whole game. */
  LinkSet: 19,
  /** Host → a player in the running game (protocol 5): a player entering mid-game to dial (LINKS's body). */
  LinkAdd: 25,
  /** Host → a player in the running game (protocol 5): the entering players whose new link it keeps (LINK_SET's body). */
  LinkAddSet: 26,
  /** Player → host (protocol 5): the entering players whose new link it now holds for their entry (LINK_SET's body). */
  LinkAddKept: 27,
} as const;
/** A link message type. */
export type LinkMessageType = (typeof LinkMessageType)[keyof typeof LinkMessageType];

/** Bytes of a per-pair token. */
export const LINK_TOKEN_BYTES = 8;
/** Longest link address in UTF-8 bytes. */
export const MAX_LINK_ADDRESS_BYTES = 255;

/** Player → host. */
export interface LinkAddressMessage {
  /** Byte 0 on the wire: 15 (LINK_ADDRESS). */
  readonly type: typeof LinkMessageType.LinkAddress;
  /** Where others dial this player (`":port"`: the address the host sees it from, with this port); empty: it takes no dials. */
  readonly address: string;
  /** It can dial the others' addresses. */
  readonly dials: boolean;
}

/** One other player in LINKS. */
export interface LinkEntry {
  /** That player's slot (u8, 1 .. players − 1; the host's 0 is never linked). */
  readonly slot: number;
  /** That player's nick as the host assigned it (at most 255 UTF-8 bytes). */
  readonly nick: string;
  /** True: the receiver dials `address`; false: that player dials the receiver (address empty). */
  readonly dial: boolean;
  /** Where to dial that player (from its LINK_ADDRESS, a `":port"` resolved against the address the host sees it from; at most 255 UTF-8 bytes); empty when `dial` is false. */
  readonly address: string;
  /** The pair's token, issued by the host: both ends of the pair get the same bytes. */
  readonly token: Uint8Array;
}

/** Host → player. */
export interface LinksMessage {
  /** Byte 0 on the wire: 16 (LINKS), or 25 (LINK_ADD: to a player in the running game, naming players entering it). */
  readonly type: typeof LinkMessageType.Links | typeof LinkMessageType.LinkAdd;
  /** Round of link setup (a new round restarts it, e.g. after a player left before the start). */
  readonly round: number;
  /** The receiver's player slot (it learns it in SYNC only later). */
  readonly slot: number;
  /** The round's other players (the host is never linked), one entry per pair (at most 255). */
  readonly entries: readonly LinkEntry[];
}

/** Player ↔ player. */
export interface LinkHelloMessage {
  /** Byte 0 on the wire: 17 (LINK_HELLO). */
  readonly type: typeof LinkMessageType.LinkHello;
  /** The round of the LINKS it answers (u8, wraps at 256); a hello from another round is not accepted. */
  readonly round: number;
  /** The dialer's slot. */
  readonly from: number;
  /** The listener's slot. */
  readonly to: number;
  /** The pair's token from LINKS ({@link LINK_TOKEN_BYTES} bytes): proves the dialer is the player the host paired with the listener. */
  readonly token: Uint8Array;
}

/** LINKS_READY, LINK_SET, LINK_ADD_SET or LINK_ADD_KEPT: a list of player slots. */
export interface LinkSlotsMessage {
  /** Byte 0 on the wire: 18 (LINKS_READY, player → host), 19 (LINK_SET, host → player), 26 (LINK_ADD_SET, host → player) or 27 (LINK_ADD_KEPT, player → host). */
  readonly type:
    | typeof LinkMessageType.LinksReady
    | typeof LinkMessageType.LinkSet
    | typeof LinkMessageType.LinkAddSet
    | typeof LinkMessageType.LinkAddKept;
  /** The round of link setup it belongs to (u8, wraps at 256); the host ignores a LINKS_READY of another round, a client a LINK_SET of another round (it then keeps only the relay). */
  readonly round: number;
  /** Player slots (u8 each, at most 255): LINKS_READY, those this player has an authenticated link with; LINK_SET, those to reach over the link for the whole game (the rest go through the host). */
  readonly slots: readonly number[];
}

/** Any link message. */
export type LinkMessage = LinkAddressMessage | LinksMessage | LinkHelloMessage | LinkSlotsMessage;

/** True if `data` starts with a link message type (15–19, 25–27). */
export function isLinkMessage(data: Uint8Array): boolean {
  const t = data[0] ?? 0;
  return (
    (t >= LinkMessageType.LinkAddress && t <= LinkMessageType.LinkSet) ||
    (t >= LinkMessageType.LinkAdd && t <= LinkMessageType.LinkAddKept)
  );
}

const utf8 = new TextEncoder();
const utf8d = new TextDecoder('utf-8', { fatal: true });

function str8Bytes(s: string, field: string): Uint8Array {
  const b = utf8.encode(s);
  if (b.length > 255) throw new RangeError(`${field} over 255 bytes`);
  return b;
}

function concat(parts: ReadonlyArray<Uint8Array | readonly number[]>): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function checkToken(token: Uint8Array): Uint8Array {
  if (token.length !== LINK_TOKEN_BYTES) throw new RangeError(`a link token is ${LINK_TOKEN_BYTES} bytes`);
  return token;
}

/** Encodes LINK_ADDRESS: u8 type, u8 flags (bit 0 dials), str8 address. */
export function encodeLinkAddress(m: Omit<LinkAddressMessage, 'type'>): Uint8Array {
  const a = str8Bytes(m.address, 'address');
  return concat([[LinkMessageType.LinkAddress, m.dials ? 1 : 0, a.length], a]);
}

/** Encodes LINKS (or, with `type` 25, LINK_ADD): u8 type, u8 round, u8 receiver's slot, u8 n, n × (u8 slot, str8 nick, u8 flags (bit 0 dial), str8 address, 8 bytes token). */
export function encodeLinks(m: Omit<LinksMessage, 'type'> & { readonly type?: LinksMessage['type'] }): Uint8Array {
  const parts: Array<Uint8Array | number[]> = [
    [m.type ?? LinkMessageType.Links, m.round & 0xff, m.slot, m.entries.length],
  ];
  for (const e of m.entries) {
    const nick = str8Bytes(e.nick, 'nick');
    const address = str8Bytes(e.address, 'address');
    parts.push([e.slot, nick.length], nick, [e.dial ? 1 : 0, address.length], address, checkToken(e.token));
  }
  return concat(parts);
}

/** Encodes LINK_HELLO: u8 type, u8 round, u8 from slot, u8 to slot, 8 bytes token. */
export function encodeLinkHello(m: Omit<LinkHelloMessage, 'type'>): Uint8Array {
  return concat([[LinkMessageType.LinkHello, m.round & 0xff, m.from, m.to], checkToken(m.token)]);
}

/** Encodes LINKS_READY, LINK_SET, LINK_ADD_SET or LINK_ADD_KEPT: u8 type, u8 round, u8 n, n × u8 slot. */
export function encodeLinkSlots(m: LinkSlotsMessage | Omit<LinkSlotsMessage, never>): Uint8Array {
  return concat([[m.type, m.round & 0xff, m.slots.length], m.slots]);
}

function readStr8(r: ByteReader, field: string): string {
  const n = r.u8(`${field} length`);
  const at = r.offset;
  try {
    return utf8d.decode(r.bytesView(n, field));
  } catch (e) {
    if (e instanceof DecodeError) throw e;
    throw new DecodeError('bad-value', at, `${field} is not valid UTF-8`);
  }
}

/** Decodes a link message (types 15–19, 25–27). @throws DecodeError for anything else or malformed bytes. */
export function decodeLinkMessage(data: Uint8Array): LinkMessage {
  const r = new ByteReader(data);
  const type = r.u8('type');
  switch (type) {
    case LinkMessageType.LinkAddress: {
      const flags = r.u8('flags');
      const address = readStr8(r, 'address');
      r.expectEnd('LINK_ADDRESS');
      return { type, dials: (flags & 1) !== 0, address };
    }
    case LinkMessageType.Links:
    case LinkMessageType.LinkAdd: {
      const round = r.u8('round');
      const slot = r.u8('slot');
      const n = r.u8('entries');
      const entries: LinkEntry[] = [];
      for (let i = 0; i < n; i++) {
        const slot = r.u8('slot');
        const nick = readStr8(r, 'nick');
        const dial = (r.u8('flags') & 1) !== 0;
        const address = readStr8(r, 'address');
        entries.push({ slot, nick, dial, address, token: r.bytesCopy(LINK_TOKEN_BYTES, 'token') });
      }
      r.expectEnd(type === LinkMessageType.Links ? 'LINKS' : 'LINK_ADD');
      return { type, round, slot, entries };
    }
    case LinkMessageType.LinkHello: {
      const round = r.u8('round');
      const from = r.u8('from');
      const to = r.u8('to');
      const token = r.bytesCopy(LINK_TOKEN_BYTES, 'token');
      r.expectEnd('LINK_HELLO');
      return { type, round, from, to, token };
    }
    case LinkMessageType.LinksReady:
    case LinkMessageType.LinkSet:
    case LinkMessageType.LinkAddSet:
    case LinkMessageType.LinkAddKept: {
      const round = r.u8('round');
      const n = r.u8('slots');
      const slots: number[] = [];
      for (let i = 0; i < n; i++) slots.push(r.u8('slot'));
      r.expectEnd(SLOTS_NAMES[type]);
      return { type, round, slots };
    }
    default:
      throw new DecodeError('bad-value', 0, `not a link message type: ${type}`);
  }
}

const SLOTS_NAMES = { 18: 'LINKS_READY', 19: 'LINK_SET', 26: 'LINK_ADD_SET', 27: 'LINK_ADD_KEPT' } as const;

/** Constant-time comparison of two tokens. */
export function tokensEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return d === 0;
}

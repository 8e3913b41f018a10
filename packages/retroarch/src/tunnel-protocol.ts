/**
 * RetroArch 1.14's tunnel ("MITM relay") protocol, sans-I/O: the messages a host, a client and a
 * relay exchange before the relay starts copying netplay bytes. Every message is a 4-byte magic and,
 * except the ping, a 12-byte id (`RATS` session, `RATL` link, `RATA` address, `RATP` ping). A relay
 * answers `RATA` + id with `RATA` + id + a 16-byte IPv6 address (IPv4 as `::ffff:a.b.c.d`).
 */
import { RetroArchTunnelError } from './tunnel-errors.js';

/** `RATS`: a host asks for a session (id all zero) and gets its id; a client joins one (its id). */
export const TUNNEL_SESSION_MAGIC = 0x52415453;
/** `RATL`: relay → host "a client wants in" (client id); host → relay on a new connection "link me to it". */
export const TUNNEL_LINK_MAGIC = 0x5241544c;
/** `RATA`: host → relay "whose address is this client id"; relay → host the id and the address. */
export const TUNNEL_ADDRESS_MAGIC = 0x52415441;
/** `RATP`: relay → host ping, host → relay pong (the magic alone, no id). */
export const TUNNEL_PING_MAGIC = 0x52415450;
/** `RANP`: the netplay connection header's magic, sent first by a client that knows no tunnel. */
export const NETPLAY_HEADER_MAGIC = 0x52414e50;
/** Bytes in a tunnel id. */
export const TUNNEL_ID_BYTES = 12;
/** Bytes in a tunnel message with an id. */
export const TUNNEL_MESSAGE_BYTES = 16;
/** Bytes in the relay's `RATA` reply (magic, id, 16-byte address). */
export const TUNNEL_ADDRESS_REPLY_BYTES = 32;
/**
 * The relay's answer to a client that opens with `RANP` (a netplay header instead of a tunnel
 * message): `RANP` and 20 zero bytes, a header RetroArch reads as "outdated". Read it, do not modify it
 * (the relay sends a copy).
 */
export const TUNNEL_OUTDATED_REPLY: Uint8Array = Uint8Array.of(
  0x52,
  0x41,
  0x4e,
  0x50,
  ...new Array<number>(20).fill(0),
);

/** A decoded tunnel message. `id` is a 12-byte copy. */
export type TunnelMessage =
  | {
      /** `'session'` (`RATS`): a host asks for a session (id all zero), the relay answers its id, a client joins one. */
      readonly type: 'session';
      /** The session id (12 bytes), all zero in a host's request. */
      readonly id: Uint8Array;
    }
  | {
      /** `'link'` (`RATL`): relay → host "a client wants in"; host → relay, on a new connection, "link me to it". */
      readonly type: 'link';
      /** The client's id (12 bytes). */
      readonly id: Uint8Array;
    }
  /** `RATA` + id; from the relay it carries `address` (16 bytes). */
  | {
      /** `'address'` (`RATA`): the host asks a client's address; the relay answers it. */
      readonly type: 'address';
      /** The client's id (12 bytes; all zero in the relay's reply for an unknown client). */
      readonly id: Uint8Array;
      /** In the relay's reply only: the client's IPv6 address, 16 bytes (IPv4 as `::ffff:a.b.c.d`). */
      readonly address?: Uint8Array;
    }
  | {
      /** `'ping'` (`RATP`): relay → host ping, host → relay pong; no id. */
      readonly type: 'ping';
    }
  /** `RANP`: a netplay header, from a client that does not speak the tunnel protocol. */
  | {
      /** `'netplay'`: the sender opened with a netplay header; a relay answers {@link TUNNEL_OUTDATED_REPLY} and closes. */
      readonly type: 'netplay';
    };

/** What {@link decodeTunnelMessage} found. */
export type TunnelDecodeResult =
  | {
      /** `'message'`: a whole message was decoded. */
      readonly kind: 'message';
      /** The message. */
      readonly message: TunnelMessage;
      /** Bytes it took from `offset` (4, 16 or 32): skip them before decoding the next message. */
      readonly size: number;
    }
  /** Not enough bytes yet: at least `need` in total from `offset`. */
  | {
      /** `'incomplete'`: wait for more bytes. */
      readonly kind: 'incomplete';
      /** Bytes needed in total from `offset` before decoding can go on. */
      readonly need: number;
    }
  | {
      /** `'error'`: the first 4 bytes are no tunnel magic; nothing more will decode from this stream. */
      readonly kind: 'error';
      /** What was wrong (`unknown-magic`...). */
      readonly error: RetroArchTunnelError;
    };

function magicAt(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

function magicName(m: number): string {
  const s = String.fromCharCode(m >>> 24, (m >>> 16) & 255, (m >>> 8) & 255, m & 255);
  return /^[\x20-\x7e]{4}$/.test(s) ? `"${s}"` : `0x${m.toString(16).padStart(8, '0')}`;
}

/**
 * Decodes one tunnel message at `offset`. `from` is who sent it: a `'peer'` (host or client, whose
 * `RATA` is 16 bytes) or the `'relay'` (whose `RATA` reply is 32). Never throws: an unknown magic
 * is an `error` with code `unknown-magic` as soon as its 4 bytes are in.
 */
export function decodeTunnelMessage(
  bytes: Uint8Array,
  offset = 0,
  from: 'peer' | 'relay' = 'peer',
): TunnelDecodeResult {
  const left = bytes.length - offset;
  if (left < 4) return { kind: 'incomplete', need: 4 };
  const magic = magicAt(bytes, offset);
  let size: number;
  switch (magic) {
    case TUNNEL_PING_MAGIC:
      return { kind: 'message', message: { type: 'ping' }, size: 4 };
    case NETPLAY_HEADER_MAGIC:
      return { kind: 'message', message: { type: 'netplay' }, size: 4 };
    case TUNNEL_SESSION_MAGIC:
    case TUNNEL_LINK_MAGIC:
      size = TUNNEL_MESSAGE_BYTES;
      break;
    case TUNNEL_ADDRESS_MAGIC:
      size = from === 'relay' ? TUNNEL_ADDRESS_REPLY_BYTES : TUNNEL_MESSAGE_BYTES;
      break;
    default:
      return {
        kind: 'error',
        error: new RetroArchTunnelError('unknown-magic', `unknown tunnel magic ${magicName(magic)}`),
      };
  }
  if (left < size) return { kind: 'incomplete', need: size };
  const id = bytes.slice(offset + 4, offset + TUNNEL_MESSAGE_BYTES);
  const message: TunnelMessage =
    magic === TUNNEL_SESSION_MAGIC
      ? { type: 'session', id }
      : magic === TUNNEL_LINK_MAGIC
        ? { type: 'link', id }
        : size === TUNNEL_ADDRESS_REPLY_BYTES
          ? { type: 'address', id, address: bytes.slice(offset + TUNNEL_MESSAGE_BYTES, offset + size) }
          : { type: 'address', id };
  return { kind: 'message', message, size };
}

function isIPv4(s: string): boolean {
  return /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(s) && s.split('.').every((p) => Number(p) <= 255);
}

function isIPv6(s: string): boolean {
  const t = s.split('%')[0]!;
  if (!/^[0-9a-fA-F:.]+$/.test(t) || !t.includes(':') || t.split('::').length > 2) return false;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(t);
  if (tail !== null && !isIPv4(tail[1]!)) return false;
  const body = tail === null ? t : t.slice(0, -tail[1]!.length);
  const words = body.split(':').filter((w) => w !== '');
  const n = words.length + (tail === null ? 0 : 2);
  return words.every((w) => /^[0-9a-fA-F]{1,4}$/.test(w)) && (t.includes('::') ? n < 8 : n === 8);
}

function checkId(id: Uint8Array): void {
  if (id.length !== TUNNEL_ID_BYTES)
    throw new RetroArchTunnelError('bad-id', `a tunnel id has ${TUNNEL_ID_BYTES} bytes, got ${id.length}`);
}

/**
 * Encodes a tunnel message (`netplay` is the 4-byte `RANP` magic; an `address` with `address` is
 * the relay's 32-byte reply).
 * @throws RetroArchTunnelError `bad-id` for an id or address of the wrong length.
 */
export function encodeTunnelMessage(message: TunnelMessage): Uint8Array {
  const magic =
    message.type === 'session'
      ? TUNNEL_SESSION_MAGIC
      : message.type === 'link'
        ? TUNNEL_LINK_MAGIC
        : message.type === 'address'
          ? TUNNEL_ADDRESS_MAGIC
          : message.type === 'ping'
            ? TUNNEL_PING_MAGIC
            : NETPLAY_HEADER_MAGIC;
  if (message.type === 'ping' || message.type === 'netplay') {
    return Uint8Array.of(magic >>> 24, (magic >>> 16) & 255, (magic >>> 8) & 255, magic & 255);
  }
  checkId(message.id);
  const withAddress = message.type === 'address' && message.address !== undefined;
  if (withAddress && message.address.length !== 16)
    throw new RetroArchTunnelError('bad-id', `a tunnel address has 16 bytes, got ${message.address.length}`);
  const out = new Uint8Array(withAddress ? TUNNEL_ADDRESS_REPLY_BYTES : TUNNEL_MESSAGE_BYTES);
  new DataView(out.buffer).setUint32(0, magic);
  out.set(message.id, 4);
  if (withAddress) out.set(message.address, TUNNEL_MESSAGE_BYTES);
  return out;
}

/** True when every byte of the id is zero (a host asking for a new session). */
export function isZeroTunnelId(id: Uint8Array): boolean {
  for (const b of id) if (b !== 0) return false;
  return true;
}

/** The id as 24 lowercase hex digits (how sessions are named in the API and events). */
export function tunnelIdHex(id: Uint8Array): string {
  let s = '';
  for (const b of id) s += b.toString(16).padStart(2, '0');
  return s;
}

/**
 * Parses a session id given as 24 hex digits.
 * @throws RetroArchTunnelError `bad-id` for anything else, or an all-zero id.
 */
export function parseTunnelId(hex: string): Uint8Array {
  if (!/^[0-9a-fA-F]{24}$/.test(hex))
    throw new RetroArchTunnelError('bad-id', `a tunnel session id is 24 hex digits, got ${JSON.stringify(hex)}`);
  const id = new Uint8Array(TUNNEL_ID_BYTES);
  for (let i = 0; i < TUNNEL_ID_BYTES; i++) id[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  if (isZeroTunnelId(id)) throw new RetroArchTunnelError('bad-id', 'the all-zero tunnel id asks for a new session');
  return id;
}

/**
 * The 16 bytes of `address` as the relay's `RATA` reply carries it: IPv6 as is, IPv4 as
 * `::ffff:a.b.c.d`; anything else (unknown) as `::`.
 */
export function tunnelAddressBytes(address: string): Uint8Array {
  const out = new Uint8Array(16);
  const v4 = (s: string, at: number): void => {
    const parts = s.split('.');
    for (let i = 0; i < 4; i++) out[at + i] = Number(parts[i]);
  };
  if (isIPv4(address)) {
    out[10] = 0xff;
    out[11] = 0xff;
    v4(address, 12);
    return out;
  }
  if (!isIPv6(address)) return out;
  let text = address.split('%')[0]!;
  const words: number[] = [];
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail !== null) {
    const p = tail[1]!.split('.').map(Number);
    text = `${text.slice(0, -tail[1]!.length)}${((p[0]! << 8) | p[1]!).toString(16)}:${((p[2]! << 8) | p[3]!).toString(16)}`;
  }
  const [head, rest] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const hw = head === '' ? [] : head.split(':').map((w) => Number.parseInt(w, 16));
  const rw = rest === undefined || rest === '' ? [] : rest.split(':').map((w) => Number.parseInt(w, 16));
  words.push(...hw, ...new Array<number>(rest === undefined ? 0 : 8 - hw.length - rw.length).fill(0), ...rw);
  for (let i = 0; i < 8; i++) {
    out[2 * i] = (words[i]! >>> 8) & 255;
    out[2 * i + 1] = words[i]! & 255;
  }
  return out;
}

/** Reads a `RATA` reply's 16 address bytes back: `a.b.c.d` for `::ffff:a.b.c.d`, else IPv6 hex words. */
export function tunnelAddressText(bytes: Uint8Array): string {
  let mapped = bytes.length === 16 && bytes[10] === 0xff && bytes[11] === 0xff;
  for (let i = 0; i < 10 && mapped; i++) if (bytes[i] !== 0) mapped = false;
  if (mapped) return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  const w: string[] = [];
  for (let i = 0; i < 16; i += 2) w.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return w.join(':');
}

/**
 * Parses a relay address `host:port` (`[v6]:port` for IPv6).
 * @throws RetroArchTunnelError `bad-address`.
 */
export function parseTunnelRelayAddress(relay: string): {
  /** The host name or IP address (an IPv6 address without its brackets). */
  readonly host: string;
  /** The TCP port, 1..65535. */
  readonly port: number;
} {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(relay) ?? /^([^:]+):(\d+)$/.exec(relay);
  const port = m === null ? Number.NaN : Number(m[2]);
  if (m === null || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new RetroArchTunnelError('bad-address', `a relay address is host:port, got ${JSON.stringify(relay)}`);
  return { host: m[1]!, port };
}

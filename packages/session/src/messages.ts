import { ByteReader, DecodeError } from '@netplay/protocol';
import { MAX_CHAT_BYTES, SESSION_COMMAND_KINDS, type SessionCommandKind } from './commands.js';
import { SESSION_ERROR_CODES, type SessionErrorCode } from './errors.js';
import { decodeLinkMessage, isLinkMessage, type LinkMessage } from './link-messages.js';
import type { SessionMode } from './mode.js';
import { SESSION_MODES } from './mode.js';

/** `"NPSN"`: the first four bytes of HELLO and CHALLENGE. */
export const SESSION_MAGIC = 0x4e50534e;
/**
 * The session protocol version this package speaks. 3 (issue 15): local players (HELLO and SYNC),
 * chat and host commands, and the lockstep modes' command byte in every slot's input. 4: direct
 * links between rollback players and the host hand-over (types 15–19, `link-messages.ts`). 5: direct
 * links for a rollback player entering the running game (types 25–27, LINK_ADD, LINK_ADD_SET,
 * LINK_ADD_KEPT).
 */
export const SESSION_PROTOCOL_VERSION = 5;
/** Longest nick in UTF-8 bytes. */
export const MAX_NICK_BYTES = 32;
/** Slot value of a spectator in SYNC. */
export const SPECTATOR_SLOT = 0xff;

/** Message types of the session control channel (first byte). */
export const SessionMessageType = {
  /** Client → host, the first message on a connection: magic, version, spectate flag, nick, local players ({@link HelloMessage}). */
  Hello: 1,
  /** Host → client, the answer to HELLO: the host's magic and version, the salt and the assigned nick ({@link ChallengeMessage}). */
  Challenge: 2,
  /** Client → host, the answer to CHALLENGE: the password proof and the core and content it runs ({@link InfoMessage}). */
  Info: 3,
  /** Host → client once it is admitted and the game starts (or it joins mid-game): mode, frame, roster and savestate ({@link SyncMessage}). */
  Sync: 4,
  /** Either way: a refusal with a {@link SessionErrorCode} and a message, after which the sender closes ({@link RefuseMessage}). */
  Refuse: 5,
  /** Host → an admitted player before the start: players in so far, of how many ({@link WaitMessage}). */
  Wait: 6,
  /** Client → host: a chat line to relay. */
  ChatSend: 7,
  /** Host → every client: a chat line, numbered in the host's order. */
  Chat: 8,
  /** Client → host: please pause or resume. */
  CommandRequest: 9,
  /** Host → every client: a command the host made (rollback's reset, with its frame). */
  Command: 10,
} as const;
/** A session message type. */
export type SessionMessageType = (typeof SessionMessageType)[keyof typeof SessionMessageType];

/** Client → host, first message. */
export interface HelloMessage {
  /** {@link SESSION_MAGIC} (`"NPSN"`, u32) from a session client; any other value is refused as `version-mismatch`. Set by `encodeHello` unless the caller overrides it. */
  readonly magic: number;
  /** The client's session protocol version (u16); the host refuses any other than its {@link SESSION_PROTOCOL_VERSION} (5), naming both. */
  readonly version: number;
  /** The rest is only decoded when magic and version match ours. */
  readonly spectate: boolean;
  /** The nick the client asks for (UTF-8, cut to 255 bytes on the wire; the host refuses an empty one and renames a taken one `nick (2)`, …). Empty when magic or version differ. */
  readonly nick: string;
  /** Ports (local players) the client asks for, 1..255 (absent: 1). */
  readonly localPlayers?: number;
}

/** Host → client: the host's header, the salt and the nick the host assigned. */
export interface ChallengeMessage {
  /** {@link SESSION_MAGIC} (`"NPSN"`, u32) from a session host; the client refuses any other value. */
  readonly magic: number;
  /** The host's session protocol version (u16); the client refuses one other than its own, naming both. When magic or version differ, the fields below are left empty. */
  readonly version: number;
  /** True when the host has a password: the client then sends its proof in INFO (else INFO's hash is empty). */
  readonly passwordRequired: boolean;
  /** A fresh u32 the host draws per connection (its `randomU32`), hashed with the password in the proof so a recorded proof does not replay. 0 when not decoded. */
  readonly salt: number;
  /** The nick the host assigned the client: its HELLO nick, or `nick (2)`, `nick (3)`, … when taken. */
  readonly nick: string;
  /** The host's own nick (its `nick` option, default `"host"`). */
  readonly hostNick: string;
}

/** Client → host: password hash (empty if none) and what the client runs. */
export interface InfoMessage {
  /** The password proof: 32 bytes of SHA-256 over CHALLENGE's salt and the password (`passwordProof`), or 0 bytes when the client has no password. The password itself never travels. */
  readonly passwordHash: Uint8Array;
  /** The client's `ContentInfo.coreId` (e.g. `"chip8"`); the host refuses a different one with `core-mismatch`. */
  readonly coreId: string;
  /** The client's `ContentInfo.coreVersion`; the host refuses a different one with `core-mismatch`. */
  readonly coreVersion: string;
  /** The client's `ContentInfo.contentHash` (as `hashContent` makes it); the host refuses a different one with `content-mismatch`. */
  readonly contentHash: string;
}

/** One entry of the roster in SYNC. */
export interface RosterEntry {
  /** Player slot (0-based) or {@link SPECTATOR_SLOT}. */
  readonly slot: number;
  /** The peer's nick as the host assigned it (unique in the session). */
  readonly nick: string;
}

/** Host → client: start. */
export interface SyncMessage {
  /** The scheduler the host chose (its `mode` option): the client runs the same one or refuses with `unsupported-mode`. */
  readonly mode: SessionMode;
  /** The frame the client starts at (u32): the host's frame whose savestate `state` is; 0 at a fresh start, later for a mid-game join. */
  readonly frame: number;
  /** Player slots of the session, the host's included (the host's `players` option: 2–16, lockstep-cs up to 255). */
  readonly players: number;
  /** The client's slot, or {@link SPECTATOR_SLOT}. */
  readonly slot: number;
  /** Frames of input delay every peer uses (the host's `inputDelay` option, default 0; rollback 0–30, lockstep modes 0–255). */
  readonly inputDelay: number;
  /** Bytes of one scheduler input per slot (u16): the core's input size times the ports per slot, plus the command byte when `commandByte` is set. */
  readonly inputBytes: number;
  /** The players of the game: the host first (slot 0), then every playing client with its slot and nick (at most 255 entries). */
  readonly roster: readonly RosterEntry[];
  /** Host's savestate of `frame` (may be empty when the scheduler syncs it itself). */
  readonly state: Uint8Array;
  /** Ports in each slot's block (absent: 1); see `SlotLayout`. */
  readonly portsPerSlot?: number;
  /** Whether every slot's scheduler input ends with the command byte (lockstep modes; absent: false). */
  readonly commandByte?: boolean;
  /** Local players of each roster entry, in roster order (absent: 1 each). */
  readonly localPlayers?: readonly number[];
}

/** Client → host: a chat line (at most `MAX_CHAT_BYTES` UTF-8 bytes). */
export interface ChatSendMessage {
  /** The line the client typed (UTF-8, at most `MAX_CHAT_BYTES`; longer is cut when encoded and refused with `protocol` when decoded). The host strips control characters before relaying it. */
  readonly text: string;
}

/** Host → every client: a chat line, in the host's order. */
export interface ChatMessage {
  /** The host's count of chat lines (0, 1, 2, …): every peer sees the lines in this order. */
  readonly seq: number;
  /** The host's frame when it relayed the line. */
  readonly frame: number;
  /** The author's player slot, or {@link SPECTATOR_SLOT}. */
  readonly slot: number;
  /** The author's nick (as the host assigned it, never as the author claims). */
  readonly nick: string;
  /** The line, sanitized by the host. */
  readonly text: string;
}

/** Client → host: pause or resume the game (players only). */
export interface CommandRequestMessage {
  /** What the player asks for: `pause` or `resume` (a reset only the host can make). The host decides; a spectator's request is refused. */
  readonly kind: Extract<SessionCommandKind, 'pause' | 'resume'>;
}

/** Host → every client: the host made `kind` at `frame`. */
export interface CommandMessage {
  /** The command the host made: `pause`, `resume` or `reset`. */
  readonly kind: SessionCommandKind;
  /** The frame (u32) the command takes effect at, the same on every peer. */
  readonly frame: number;
}

/** Host → admitted player before the start: how many players are in, of how many. */
export interface WaitMessage {
  /** Players in (the host included). */
  readonly joined: number;
  /** Player slots of the session. */
  readonly players: number;
}

/** Either way: a refusal, then the sender closes. */
export interface RefuseMessage {
  /** Why (one of `SESSION_ERROR_CODES`, sent as its index): the receiver's `SessionError` gets this code. */
  readonly code: SessionErrorCode;
  /** A human-readable reason naming what was wrong (UTF-8, at most 65,535 bytes), e.g. `server full: all 2 player slots are taken`. */
  readonly message: string;
}

const utf8 = new TextEncoder();
const utf8d = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 length of a string. */
export function utf8Length(s: string): number {
  return utf8.encode(s).length;
}

class Writer {
  private buf = new Uint8Array(64);
  private view = new DataView(this.buf.buffer);
  length = 0;
  private grow(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.length));
    this.buf = b;
    this.view = new DataView(b.buffer);
  }
  u8(v: number): this {
    this.grow(1);
    this.view.setUint8(this.length, v);
    this.length += 1;
    return this;
  }
  u16(v: number): this {
    this.grow(2);
    this.view.setUint16(this.length, v);
    this.length += 2;
    return this;
  }
  u32(v: number): this {
    this.grow(4);
    this.view.setUint32(this.length, v >>> 0);
    this.length += 4;
    return this;
  }
  bytes(b: Uint8Array): this {
    this.grow(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
    return this;
  }
  /** u8 length + UTF-8 (cut to 255 bytes at a character boundary). */
  str8(s: string): this {
    return this.strN(s, 255, 1);
  }
  /** u16 length + UTF-8. */
  str16(s: string): this {
    return this.strN(s, 0xffff, 2);
  }
  /** A u8 or u16 length + UTF-8, cut to `max` bytes at a character boundary. */
  strN(s: string, max: number, lenBytes: 1 | 2): this {
    let b = utf8.encode(s);
    if (b.length > max) {
      let cut = max;
      while (cut > 0 && ((b[cut] ?? 0) & 0xc0) === 0x80) cut--;
      b = b.subarray(0, cut);
    }
    if (lenBytes === 1) this.u8(b.length);
    else this.u16(b.length);
    return this.bytes(b);
  }
  done(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

function str(r: ByteReader, lenBytes: 1 | 2, field: string, max = Infinity): string {
  const n = lenBytes === 1 ? r.u8(`${field} length`) : r.u16(`${field} length`);
  if (n > max) throw new DecodeError('too-large', r.offset - lenBytes, `${field} of ${n} bytes (at most ${max})`);
  const at = r.offset;
  const b = r.bytesView(n, field);
  try {
    return utf8d.decode(b);
  } catch {
    throw new DecodeError('bad-value', at, `${field} is not valid UTF-8`);
  }
}

/** Encodes HELLO. */
export function encodeHello(
  m: Omit<HelloMessage, 'magic' | 'version'> & { magic?: number; version?: number },
): Uint8Array {
  const w = new Writer()
    .u8(SessionMessageType.Hello)
    .u32(m.magic ?? SESSION_MAGIC)
    .u16(m.version ?? SESSION_PROTOCOL_VERSION)
    .u8(m.spectate ? 1 : 0)
    .str8(m.nick);
  // Absent when 1, so a single player's HELLO is the same bytes as before local players existed.
  if (m.localPlayers !== undefined && m.localPlayers !== 1) w.u8(m.localPlayers);
  return w.done();
}

/** Encodes CHALLENGE. */
export function encodeChallenge(
  m: Omit<ChallengeMessage, 'magic' | 'version'> & { magic?: number; version?: number },
): Uint8Array {
  return new Writer()
    .u8(SessionMessageType.Challenge)
    .u32(m.magic ?? SESSION_MAGIC)
    .u16(m.version ?? SESSION_PROTOCOL_VERSION)
    .u8(m.passwordRequired ? 1 : 0)
    .u32(m.salt)
    .str8(m.nick)
    .str8(m.hostNick)
    .done();
}

/** Encodes INFO. */
export function encodeInfo(m: InfoMessage): Uint8Array {
  return new Writer()
    .u8(SessionMessageType.Info)
    .u8(m.passwordHash.length)
    .bytes(m.passwordHash)
    .str8(m.coreId)
    .str8(m.coreVersion)
    .str8(m.contentHash)
    .done();
}

/** Encodes SYNC. */
export function encodeSync(m: SyncMessage): Uint8Array {
  const w = new Writer()
    .u8(SessionMessageType.Sync)
    .u8(SESSION_MODES.indexOf(m.mode))
    .u32(m.frame)
    .u8(m.players)
    .u8(m.slot)
    .u8(m.inputDelay)
    .u16(m.inputBytes)
    .u8(m.roster.length);
  for (const e of m.roster) w.u8(e.slot).str8(e.nick);
  w.u32(m.state.length).bytes(m.state);
  // Optional tail: u8 ports per slot, u8 flags (bit 0 command byte), u8 n, n × u8 local players.
  if (m.portsPerSlot !== undefined || m.commandByte !== undefined || m.localPlayers !== undefined) {
    const local = m.localPlayers ?? [];
    w.u8(m.portsPerSlot ?? 1)
      .u8(m.commandByte === true ? 1 : 0)
      .u8(local.length);
    for (const n of local) w.u8(n);
  }
  return w.done();
}

/** Encodes CHAT_SEND (the text is cut to `MAX_CHAT_BYTES` at a character boundary). */
export function encodeChatSend(m: ChatSendMessage): Uint8Array {
  return new Writer().u8(SessionMessageType.ChatSend).strN(m.text, MAX_CHAT_BYTES, 2).done();
}

/** Encodes CHAT (the text is cut to `MAX_CHAT_BYTES` at a character boundary). */
export function encodeChat(m: ChatMessage): Uint8Array {
  return new Writer()
    .u8(SessionMessageType.Chat)
    .u32(m.seq)
    .u32(m.frame)
    .u8(m.slot)
    .str8(m.nick)
    .strN(m.text, MAX_CHAT_BYTES, 2)
    .done();
}

/** Encodes COMMAND_REQUEST. */
export function encodeCommandRequest(m: CommandRequestMessage): Uint8Array {
  return new Writer()
    .u8(SessionMessageType.CommandRequest)
    .u8(SESSION_COMMAND_KINDS.indexOf(m.kind) + 1)
    .done();
}

/** Encodes COMMAND. */
export function encodeCommand(m: CommandMessage): Uint8Array {
  return new Writer()
    .u8(SessionMessageType.Command)
    .u8(SESSION_COMMAND_KINDS.indexOf(m.kind) + 1)
    .u32(m.frame)
    .done();
}

/** Encodes REFUSE. */
export function encodeRefuse(m: RefuseMessage): Uint8Array {
  return new Writer().u8(SessionMessageType.Refuse).u8(SESSION_ERROR_CODES.indexOf(m.code)).str16(m.message).done();
}

/** Encodes WAIT. */
export function encodeWait(m: WaitMessage): Uint8Array {
  return new Writer().u8(SessionMessageType.Wait).u8(m.joined).u8(m.players).done();
}

/** Any decoded session message. */
export type SessionMessage =
  | ({
      /** The discriminant, sent as byte 0: HELLO (1). */
      readonly type: typeof SessionMessageType.Hello;
    } & HelloMessage)
  | ({
      /** The discriminant, sent as byte 0: CHALLENGE (2). */
      readonly type: typeof SessionMessageType.Challenge;
    } & ChallengeMessage)
  | ({
      /** The discriminant, sent as byte 0: INFO (3). */
      readonly type: typeof SessionMessageType.Info;
    } & InfoMessage)
  | ({
      /** The discriminant, sent as byte 0: SYNC (4). */
      readonly type: typeof SessionMessageType.Sync;
    } & SyncMessage)
  | ({
      /** The discriminant, sent as byte 0: REFUSE (5). */
      readonly type: typeof SessionMessageType.Refuse;
    } & RefuseMessage)
  | ({
      /** The discriminant, sent as byte 0: WAIT (6). */
      readonly type: typeof SessionMessageType.Wait;
    } & WaitMessage)
  | ({
      /** The discriminant, sent as byte 0: CHAT_SEND (7). */
      readonly type: typeof SessionMessageType.ChatSend;
    } & ChatSendMessage)
  | ({
      /** The discriminant, sent as byte 0: CHAT (8). */
      readonly type: typeof SessionMessageType.Chat;
    } & ChatMessage)
  | ({
      /** The discriminant, sent as byte 0: COMMAND_REQUEST (9). */
      readonly type: typeof SessionMessageType.CommandRequest;
    } & CommandRequestMessage)
  | ({
      /** The discriminant, sent as byte 0: COMMAND (10). */
      readonly type: typeof SessionMessageType.Command;
    } & CommandMessage)
  | LinkMessage;

/**
 * Decodes one session control message. Throws only `DecodeError` (from @netplay/protocol), on any
 * bytes. HELLO and CHALLENGE with another magic or version decode only their header (the rest is
 * left empty) so the receiver can refuse with both versions named.
 */
export function decodeSessionMessage(data: Uint8Array): SessionMessage {
  const r = new ByteReader(data);
  const type = r.u8('type');
  switch (type) {
    case SessionMessageType.Hello: {
      const magic = r.u32('magic');
      const version = r.u16('version');
      if (magic !== SESSION_MAGIC || version !== SESSION_PROTOCOL_VERSION)
        return { type, magic, version, spectate: false, nick: '' };
      const flags = r.u8('flags');
      const nick = str(r, 1, 'nick');
      if (r.remaining === 0) return { type, magic, version, spectate: (flags & 1) !== 0, nick };
      const at = r.offset;
      const localPlayers = r.u8('local players');
      if (localPlayers === 0) throw new DecodeError('bad-value', at, 'HELLO asks for 0 local players');
      r.expectEnd('HELLO');
      return { type, magic, version, spectate: (flags & 1) !== 0, nick, localPlayers };
    }
    case SessionMessageType.Challenge: {
      const magic = r.u32('magic');
      const version = r.u16('version');
      if (magic !== SESSION_MAGIC || version !== SESSION_PROTOCOL_VERSION)
        return { type, magic, version, passwordRequired: false, salt: 0, nick: '', hostNick: '' };
      const flags = r.u8('flags');
      const salt = r.u32('salt');
      const nick = str(r, 1, 'nick');
      const hostNick = str(r, 1, 'host nick');
      r.expectEnd('CHALLENGE');
      return { type, magic, version, passwordRequired: (flags & 1) !== 0, salt, nick, hostNick };
    }
    case SessionMessageType.Info: {
      const n = r.u8('password hash length');
      if (n !== 0 && n !== 32) throw new DecodeError('bad-value', r.offset - 1, `password hash of ${n} bytes`);
      const passwordHash = r.bytesCopy(n, 'password hash');
      const coreId = str(r, 1, 'core id');
      const coreVersion = str(r, 1, 'core version');
      const contentHash = str(r, 1, 'content hash');
      r.expectEnd('INFO');
      return { type, passwordHash, coreId, coreVersion, contentHash };
    }
    case SessionMessageType.Sync: {
      const modeAt = r.offset;
      const mode = SESSION_MODES[r.u8('mode')];
      if (mode === undefined) throw new DecodeError('bad-value', modeAt, 'unknown mode');
      const frame = r.u32('frame');
      const players = r.u8('players');
      const slot = r.u8('slot');
      const inputDelay = r.u8('input delay');
      const inputBytes = r.u16('input bytes');
      const count = r.u8('roster count');
      const roster: RosterEntry[] = [];
      for (let i = 0; i < count; i++) roster.push({ slot: r.u8('roster slot'), nick: str(r, 1, 'roster nick') });
      const len = r.u32('state length');
      const state = r.bytesCopy(len, 'state');
      if (r.remaining === 0) return { type, mode, frame, players, slot, inputDelay, inputBytes, roster, state };
      const at = r.offset;
      const portsPerSlot = r.u8('ports per slot');
      if (portsPerSlot === 0) throw new DecodeError('bad-value', at, 'SYNC with 0 ports per slot');
      const flags = r.u8('flags');
      const n = r.u8('local players count');
      const localPlayers: number[] = [];
      for (let i = 0; i < n; i++) localPlayers.push(r.u8('local players'));
      r.expectEnd('SYNC');
      const commandByte = (flags & 1) !== 0;
      return {
        type,
        mode,
        frame,
        players,
        slot,
        inputDelay,
        inputBytes,
        roster,
        state,
        portsPerSlot,
        commandByte,
        localPlayers,
      };
    }
    case SessionMessageType.Refuse: {
      const at = r.offset;
      const code = SESSION_ERROR_CODES[r.u8('code')];
      if (code === undefined) throw new DecodeError('bad-value', at, 'unknown refusal code');
      const message = str(r, 2, 'message');
      r.expectEnd('REFUSE');
      return { type, code, message };
    }
    case SessionMessageType.Wait: {
      const joined = r.u8('joined');
      const players = r.u8('players');
      r.expectEnd('WAIT');
      return { type, joined, players };
    }
    case SessionMessageType.ChatSend: {
      const text = str(r, 2, 'chat text', MAX_CHAT_BYTES);
      r.expectEnd('CHAT_SEND');
      return { type, text };
    }
    case SessionMessageType.Chat: {
      const seq = r.u32('seq');
      const frame = r.u32('frame');
      const slot = r.u8('slot');
      const nick = str(r, 1, 'nick');
      const text = str(r, 2, 'chat text', MAX_CHAT_BYTES);
      r.expectEnd('CHAT');
      return { type, seq, frame, slot, nick, text };
    }
    case SessionMessageType.CommandRequest: {
      const at = r.offset;
      const kind = SESSION_COMMAND_KINDS[r.u8('kind') - 1];
      if (kind !== 'pause' && kind !== 'resume')
        throw new DecodeError('bad-value', at, 'COMMAND_REQUEST kind is not pause or resume');
      r.expectEnd('COMMAND_REQUEST');
      return { type, kind };
    }
    case SessionMessageType.Command: {
      const at = r.offset;
      const kind = SESSION_COMMAND_KINDS[r.u8('kind') - 1];
      if (kind === undefined) throw new DecodeError('bad-value', at, 'unknown command kind');
      const frame = r.u32('frame');
      r.expectEnd('COMMAND');
      return { type, kind, frame };
    }
    default:
      if (isLinkMessage(data)) return decodeLinkMessage(data);
      throw new DecodeError('unknown-type', 0, `unknown session message type ${type}`);
  }
}

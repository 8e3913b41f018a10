import { checkRange } from '../byte-range.js';
import { checkU32 as u32 } from '../byte-writer.js';
import { DecodeError, EncodeError } from '../errors.js';
import { FRAME_HEADER_SIZE, writeFrameHeader } from '../framing.js';
import {
  RETROARCH_CHAT_MAX_TEXT,
  RETROARCH_MAX_DEVICES,
  RETROARCH_NICK_SIZE,
  RETROARCH_PASSWORD_HASH_SIZE,
  RetroArchCommand,
  type RetroArchSender,
} from './commands.js';
import {
  decodeRetroArchCrcInto,
  decodeRetroArchInputInto,
  decodeRetroArchNoInput,
  encodeRetroArchCrc,
  encodeRetroArchInput,
  encodeRetroArchNoInput,
  RetroArchInputFrame,
} from './input.js';
import {
  infoLayout,
  latencyLayout,
  loadSavestateLayout,
  modeLayout,
  nickLayout,
  passwordLayout,
  syncLayout,
  wordLayout,
} from './layouts.js';
import { decodeFixedText, encodeFixedText, utf8Bytes, utf8Text } from './text.js';

/** ACK, NAK, DISCONNECT, SPECTATE, REQUEST_SAVESTATE, RESUME, PING_REQUEST, PING_RESPONSE: no payload. */
export interface RetroArchEmptyMessage {
  readonly type:
    | 'ack'
    | 'nak'
    | 'disconnect'
    | 'spectate'
    | 'requestSavestate'
    | 'resume'
    | 'pingRequest'
    | 'pingResponse';
}

/** INPUT: one frame of a client's input. */
export interface RetroArchInputMessage {
  readonly type: 'input';
  readonly frame: number;
  /** The client number word (RetroArch uses its low 16 bits; a host ignores the claimed value). */
  readonly client: number;
  /** Input words per device, in device order (joypad 1, mouse/lightgun 2, analog 3, keyboard 5). */
  readonly input: Uint32Array;
}

/** NOINPUT: the host passed `frame` without input of its own. */
export interface RetroArchNoInputMessage {
  readonly type: 'noInput';
  readonly frame: number;
}

/** NICK (char[32]). */
export interface RetroArchNickMessage {
  readonly type: 'nick';
  readonly nick: string;
}

/** PASSWORD: 64 lowercase hex digits, see `retroArchPasswordHash`. */
export interface RetroArchPasswordMessage {
  readonly type: 'password';
  readonly hash: string;
}

/** INFO: content CRC, core name, core version. */
export interface RetroArchInfoMessage {
  readonly type: 'info';
  readonly contentCrc: number;
  readonly coreName: string;
  readonly coreVersion: string;
}

/** SYNC: the host's initial synchronisation of a new client. */
export interface RetroArchSyncMessage {
  readonly type: 'sync';
  readonly frame: number;
  /** Bit 31 of the second word. */
  readonly paused: boolean;
  /** The client number the host assigned (bits 0–30 of the second word). */
  readonly client: number;
  /** The device type plugged into each of the 16 ports. */
  readonly devices: readonly number[];
  /** Share mode of each of the 16 devices (u8). */
  readonly shareModes: readonly number[];
  /** For each of the 16 devices, the bitmap of clients using it. */
  readonly deviceClients: readonly number[];
  /** The nick the host assigned (possibly changed to be unique). */
  readonly nick: string;
  /** SRAM contents (a view into the decoded bytes). */
  readonly sram: Uint8Array;
}

/** PLAY: request to play. */
export interface RetroArchPlayMessage {
  readonly type: 'play';
  /** Bit 31: play as a slave. */
  readonly slave: boolean;
  /** Bits 16–23. */
  readonly shareMode: number;
  /** Bits 0–15: wanted devices; 0 = any. */
  readonly devices: number;
}

/** MODE: a connection's mode changed. */
export interface RetroArchModeMessage {
  readonly type: 'mode';
  readonly frame: number;
  /** Bit 31: the change is about the receiver. */
  readonly you: boolean;
  /** Bit 30. */
  readonly playing: boolean;
  /** Bit 29. */
  readonly slave: boolean;
  /** Bits 0–15. */
  readonly client: number;
  /** Device bitmap. */
  readonly devices: number;
  /** Share mode of each of the 16 devices (u8). */
  readonly shareModes: readonly number[];
  readonly nick: string;
}

/** MODE_REFUSED; `reason` is a `RetroArchModeRefusedReason` (other values are kept as sent). */
export interface RetroArchModeRefusedMessage {
  readonly type: 'modeRefused';
  readonly reason: number;
}

/** CRC of the serialized state at `frame`. */
export interface RetroArchCrcMessage {
  readonly type: 'crc';
  readonly frame: number;
  readonly crc: number;
}

/** LOAD_SAVESTATE. */
export interface RetroArchLoadSavestateMessage {
  readonly type: 'loadSavestate';
  readonly frame: number;
  readonly uncompressedSize: number;
  /** The (zlib-compressed when both ends advertised zlib) state, a view into the decoded bytes. */
  readonly data: Uint8Array;
}

/** PAUSE with the pausing player's nick. */
export interface RetroArchPauseMessage {
  readonly type: 'pause';
  readonly nick: string;
}

/** STALL for `frames` frames (RetroArch clamps to 60). */
export interface RetroArchStallMessage {
  readonly type: 'stall';
  readonly frames: number;
}

/** RESET at `frame`. */
export interface RetroArchResetMessage {
  readonly type: 'reset';
  readonly frame: number;
}

/**
 * PLAYER_CHAT. From a client: only `text`. From the host: `nick` (char[32]) and `text`. The text
 * is 1..95 UTF-8 bytes with no NUL terminator on the wire.
 */
export interface RetroArchPlayerChatMessage {
  readonly type: 'playerChat';
  /** Present exactly when the host sent (or will send) the message. */
  readonly nick?: string;
  readonly text: string;
}

/** SETTING_ALLOW_PAUSING. */
export interface RetroArchAllowPausingMessage {
  readonly type: 'settingAllowPausing';
  readonly allowPausing: boolean;
}

/** SETTING_INPUT_LATENCY_FRAMES. */
export interface RetroArchInputLatencyMessage {
  readonly type: 'settingInputLatencyFrames';
  readonly min: number;
  readonly max: number;
}

/**
 * A command this package does not know. It decodes to this value instead of failing so that a
 * session layer sees it and chooses: RetroArch 1.14 skips an unknown command's payload with a
 * warning and stays connected (observed against a live host), while a stricter peer may NAK.
 */
export interface RetroArchUnknownMessage {
  readonly type: 'unknown';
  readonly command: number;
  /** The payload, a view into the decoded bytes. */
  readonly payload: Uint8Array;
}

/** Every RetroArch protocol 6 message, discriminated by `type`. */
export type RetroArchMessage =
  | RetroArchEmptyMessage
  | RetroArchInputMessage
  | RetroArchNoInputMessage
  | RetroArchNickMessage
  | RetroArchPasswordMessage
  | RetroArchInfoMessage
  | RetroArchSyncMessage
  | RetroArchPlayMessage
  | RetroArchModeMessage
  | RetroArchModeRefusedMessage
  | RetroArchCrcMessage
  | RetroArchLoadSavestateMessage
  | RetroArchPauseMessage
  | RetroArchStallMessage
  | RetroArchResetMessage
  | RetroArchPlayerChatMessage
  | RetroArchAllowPausingMessage
  | RetroArchInputLatencyMessage
  | RetroArchUnknownMessage;

/** The `type` of a known message. */
export type RetroArchMessageType = Exclude<RetroArchMessage['type'], 'unknown'>;

/** The command id of each message type. */
export const RETROARCH_COMMAND_OF: { readonly [T in RetroArchMessageType]: RetroArchCommand } = {
  ack: RetroArchCommand.Ack,
  nak: RetroArchCommand.Nak,
  disconnect: RetroArchCommand.Disconnect,
  input: RetroArchCommand.Input,
  noInput: RetroArchCommand.NoInput,
  nick: RetroArchCommand.Nick,
  password: RetroArchCommand.Password,
  info: RetroArchCommand.Info,
  sync: RetroArchCommand.Sync,
  spectate: RetroArchCommand.Spectate,
  play: RetroArchCommand.Play,
  mode: RetroArchCommand.Mode,
  modeRefused: RetroArchCommand.ModeRefused,
  crc: RetroArchCommand.Crc,
  requestSavestate: RetroArchCommand.RequestSavestate,
  loadSavestate: RetroArchCommand.LoadSavestate,
  pause: RetroArchCommand.Pause,
  resume: RetroArchCommand.Resume,
  stall: RetroArchCommand.Stall,
  reset: RetroArchCommand.Reset,
  playerChat: RetroArchCommand.PlayerChat,
  pingRequest: RetroArchCommand.PingRequest,
  pingResponse: RetroArchCommand.PingResponse,
  settingAllowPausing: RetroArchCommand.SettingAllowPausing,
  settingInputLatencyFrames: RetroArchCommand.SettingInputLatencyFrames,
};

const TYPE_OF = new Map<number, RetroArchMessageType>(
  (Object.entries(RETROARCH_COMMAND_OF) as [RetroArchMessageType, RetroArchCommand][]).map(([t, c]) => [c, t]),
);

/** The message type of a command id, or `undefined` for an unknown one. */
export function retroArchMessageTypeOf(command: number): RetroArchMessageType | undefined {
  return TYPE_OF.get(command);
}

/** The command id a message is sent with. */
export function retroArchCommandOf(message: RetroArchMessage): number {
  return message.type === 'unknown' ? message.command : RETROARCH_COMMAND_OF[message.type];
}

// ---------------------------------------------------------------- validation helpers (encode)

function bounded(v: number, max: number, field: string): number {
  if (!Number.isInteger(v) || v < 0 || v > max)
    throw new EncodeError('out-of-range', `${field} ${v} is not in [0, ${max}]`);
  return v;
}

function i32(v: number, field: string): number {
  if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) {
    throw new EncodeError('out-of-range', `${field} ${v} is not an i32`);
  }
  return v;
}

function array16(a: readonly number[], max: number, field: string): number[] {
  if (a.length !== RETROARCH_MAX_DEVICES) {
    throw new EncodeError('out-of-range', `${field} has ${a.length} entries, not ${RETROARCH_MAX_DEVICES}`);
  }
  return a.map((v, i) => bounded(v, max, `${field}[${i}]`));
}

function chatText(text: string): Uint8Array {
  const bytes = utf8Bytes(text);
  if (bytes.length === 0 || bytes.length > RETROARCH_CHAT_MAX_TEXT) {
    throw new EncodeError(
      bytes.length === 0 ? 'out-of-range' : 'too-long',
      `chat text of ${bytes.length} UTF-8 bytes is not 1..${RETROARCH_CHAT_MAX_TEXT}`,
    );
  }
  return bytes;
}

function passwordBytes(hash: string): Uint8Array {
  if (hash.includes('\0')) throw new EncodeError('out-of-range', 'password hash must not contain NUL');
  const bytes = utf8Bytes(hash);
  if (bytes.length > RETROARCH_PASSWORD_HASH_SIZE) {
    throw new EncodeError('too-long', `password hash of ${bytes.length} bytes exceeds ${RETROARCH_PASSWORD_HASH_SIZE}`);
  }
  const out = new Uint8Array(RETROARCH_PASSWORD_HASH_SIZE);
  out.set(bytes);
  return out;
}

/**
 * Payload size of a message in bytes (without the 8-byte frame prefix).
 * @throws EncodeError when a chat text has a bad length.
 */
export function retroArchPayloadSize(message: RetroArchMessage): number {
  switch (message.type) {
    case 'ack':
    case 'nak':
    case 'disconnect':
    case 'spectate':
    case 'requestSavestate':
    case 'resume':
    case 'pingRequest':
    case 'pingResponse':
      return 0;
    case 'input':
      return 8 + 4 * message.input.length;
    case 'noInput':
    case 'play':
    case 'modeRefused':
    case 'stall':
    case 'reset':
    case 'settingAllowPausing':
      return 4;
    case 'crc':
    case 'settingInputLatencyFrames':
      return 8;
    case 'nick':
    case 'pause':
      return nickLayout.span;
    case 'password':
      return passwordLayout.span;
    case 'info':
      return infoLayout.span;
    case 'sync':
      return syncLayout.span + message.sram.length;
    case 'mode':
      return modeLayout.span;
    case 'loadSavestate':
      return loadSavestateLayout.span + message.data.length;
    case 'playerChat':
      return (message.nick === undefined ? 0 : RETROARCH_NICK_SIZE) + chatText(message.text).length;
    case 'unknown':
      return message.payload.length;
  }
}

/** Size of the whole frame (prefix and payload) of a message. */
export function retroArchMessageSize(message: RetroArchMessage): number {
  return FRAME_HEADER_SIZE + retroArchPayloadSize(message);
}

/**
 * Writes a message as a whole frame (`[command][length][payload]`) into `target` at `offset`.
 * INPUT, NOINPUT and CRC go through the hand-written codecs and allocate nothing; the other
 * messages are encoded through their buffer-layout declarations.
 * @returns bytes written.
 * @throws EncodeError `buffer-too-small`, `out-of-range` or `too-long`; nothing is promised about
 *   the bytes of `target` after an error.
 */
export function encodeRetroArchMessage(message: RetroArchMessage, target: Uint8Array, offset = 0): number {
  switch (message.type) {
    case 'input':
      return encodeRetroArchInput(target, offset, message.frame, message.client, message.input);
    case 'noInput':
      return encodeRetroArchNoInput(target, offset, message.frame);
    case 'crc':
      return encodeRetroArchCrc(target, offset, message.frame, message.crc);
    default:
      break;
  }
  const size = retroArchMessageSize(message);
  if (offset < 0 || offset + size > target.length) {
    throw new EncodeError('buffer-too-small', `a ${size}-byte frame at ${offset} does not fit ${target.length} bytes`);
  }
  const command = retroArchCommandOf(message);
  if (message.type === 'unknown' && TYPE_OF.has(command)) {
    throw new EncodeError('out-of-range', `command 0x${command.toString(16)} is known; encode it as its type`);
  }
  const p = writeFrameHeader(target, offset, command, size - FRAME_HEADER_SIZE);
  switch (message.type) {
    case 'ack':
    case 'nak':
    case 'disconnect':
    case 'spectate':
    case 'requestSavestate':
    case 'resume':
    case 'pingRequest':
    case 'pingResponse':
      break;
    case 'nick':
    case 'pause':
      nickLayout.encode({ nick: encodeFixedText(message.nick, RETROARCH_NICK_SIZE, 'nick') }, target, p);
      break;
    case 'password':
      passwordLayout.encode({ hash: passwordBytes(message.hash) }, target, p);
      break;
    case 'info':
      infoLayout.encode(
        {
          contentCrc: u32(message.contentCrc, 'content CRC'),
          coreName: encodeFixedText(message.coreName, 32, 'core name'),
          coreVersion: encodeFixedText(message.coreVersion, 32, 'core version'),
        },
        target,
        p,
      );
      break;
    case 'sync': {
      const clientWord = ((message.paused ? 0x80000000 : 0) | bounded(message.client, 0x7fffffff, 'client')) >>> 0;
      syncLayout.encode(
        {
          frame: u32(message.frame, 'frame'),
          clientWord,
          devices: array16(message.devices, 0xffffffff, 'devices'),
          shareModes: array16(message.shareModes, 0xff, 'share modes'),
          deviceClients: array16(message.deviceClients, 0xffffffff, 'device clients'),
          nick: encodeFixedText(message.nick, RETROARCH_NICK_SIZE, 'nick'),
        },
        target,
        p,
      );
      target.set(message.sram, p + syncLayout.span);
      break;
    }
    case 'play': {
      const word =
        ((message.slave ? 0x80000000 : 0) |
          (bounded(message.shareMode, 0xff, 'share mode') << 16) |
          bounded(message.devices, 0xffff, 'devices')) >>>
        0;
      wordLayout.encode({ value: word }, target, p);
      break;
    }
    case 'mode': {
      const modeWord =
        ((message.you ? 0x80000000 : 0) |
          (message.playing ? 0x40000000 : 0) |
          (message.slave ? 0x20000000 : 0) |
          bounded(message.client, 0xffff, 'client')) >>>
        0;
      modeLayout.encode(
        {
          frame: u32(message.frame, 'frame'),
          modeWord,
          devices: u32(message.devices, 'devices'),
          shareModes: array16(message.shareModes, 0xff, 'share modes'),
          nick: encodeFixedText(message.nick, RETROARCH_NICK_SIZE, 'nick'),
        },
        target,
        p,
      );
      break;
    }
    case 'modeRefused':
      wordLayout.encode({ value: u32(message.reason, 'reason') }, target, p);
      break;
    case 'loadSavestate':
      loadSavestateLayout.encode(
        { frame: u32(message.frame, 'frame'), uncompressedSize: u32(message.uncompressedSize, 'uncompressed size') },
        target,
        p,
      );
      target.set(message.data, p + loadSavestateLayout.span);
      break;
    case 'stall':
      wordLayout.encode({ value: u32(message.frames, 'frames') }, target, p);
      break;
    case 'reset':
      wordLayout.encode({ value: u32(message.frame, 'frame') }, target, p);
      break;
    case 'playerChat': {
      let q = p;
      if (message.nick !== undefined) {
        nickLayout.encode({ nick: encodeFixedText(message.nick, RETROARCH_NICK_SIZE, 'nick') }, target, q);
        q += RETROARCH_NICK_SIZE;
      }
      target.set(chatText(message.text), q);
      break;
    }
    case 'settingAllowPausing':
      wordLayout.encode({ value: message.allowPausing ? 1 : 0 }, target, p);
      break;
    case 'settingInputLatencyFrames':
      latencyLayout.encode({ min: i32(message.min, 'min'), max: i32(message.max, 'max') }, target, p);
      break;
    case 'unknown':
      target.set(message.payload, p);
      break;
  }
  return size;
}

/** Encodes a message into a fresh array of exactly its frame size (allocates; cold path). */
export function encodeRetroArchMessageToBytes(message: RetroArchMessage): Uint8Array {
  const out = new Uint8Array(retroArchMessageSize(message));
  encodeRetroArchMessage(message, out, 0);
  return out;
}

// ---------------------------------------------------------------- decoding

function expectLength(type: string, length: number, want: number, at: number): void {
  if (length !== want) throw new DecodeError('bad-length', at, `${type} payload is ${length} bytes, not ${want}`);
}

/**
 * Decodes the payload `bytes[start..end)` of a frame with command `command` sent by `sender`.
 * Error offsets are absolute in `bytes`. Byte fields (SRAM, savestate data, unknown payloads) are
 * views into `bytes`.
 */
function decodePayload(
  command: number,
  bytes: Uint8Array,
  start: number,
  end: number,
  sender: RetroArchSender,
): RetroArchMessage {
  const length = end - start;
  const type = TYPE_OF.get(command);
  switch (type) {
    case undefined:
      return { type: 'unknown', command, payload: bytes.subarray(start, end) };
    case 'ack':
    case 'nak':
    case 'disconnect':
    case 'spectate':
    case 'requestSavestate':
    case 'resume':
    case 'pingRequest':
    case 'pingResponse':
      expectLength(type, length, 0, start);
      return { type };
    case 'input': {
      // Check the size before sizing the word array from it.
      if (length < 8 || (length & 3) !== 0) {
        throw new DecodeError('bad-length', start, `INPUT payload of ${length} bytes is not 8 + 4n`);
      }
      const frame = decodeRetroArchInputInto(new RetroArchInputFrame((length - 8) / 4), bytes, start, length);
      return { type, frame: frame.frame, client: frame.client, input: frame.words };
    }
    case 'noInput':
      return { type, frame: decodeRetroArchNoInput(bytes, start, length) };
    case 'crc': {
      const v = decodeRetroArchCrcInto({ frame: 0, crc: 0 }, bytes, start, length);
      return { type, frame: v.frame, crc: v.crc };
    }
    case 'nick':
    case 'pause':
      expectLength(type, length, nickLayout.span, start);
      return { type, nick: decodeFixedText(nickLayout.decode(bytes, start).nick) };
    case 'password':
      expectLength(type, length, passwordLayout.span, start);
      return { type, hash: decodeFixedText(passwordLayout.decode(bytes, start).hash) };
    case 'info': {
      expectLength(type, length, infoLayout.span, start);
      const f = infoLayout.decode(bytes, start);
      return {
        type,
        contentCrc: f.contentCrc,
        coreName: decodeFixedText(f.coreName),
        coreVersion: decodeFixedText(f.coreVersion),
      };
    }
    case 'sync': {
      if (length < syncLayout.span) {
        throw new DecodeError('bad-length', start, `SYNC payload is ${length} bytes, less than ${syncLayout.span}`);
      }
      const f = syncLayout.decode(bytes, start);
      return {
        type,
        frame: f.frame,
        paused: f.clientWord >= 0x80000000,
        client: f.clientWord & 0x7fffffff,
        devices: f.devices,
        shareModes: f.shareModes,
        deviceClients: f.deviceClients,
        nick: decodeFixedText(f.nick),
        sram: bytes.subarray(start + syncLayout.span, end),
      };
    }
    case 'play': {
      expectLength(type, length, 4, start);
      const w = wordLayout.decode(bytes, start).value;
      return { type, slave: w >= 0x80000000, shareMode: (w >>> 16) & 0xff, devices: w & 0xffff };
    }
    case 'mode': {
      expectLength(type, length, modeLayout.span, start);
      const f = modeLayout.decode(bytes, start);
      return {
        type,
        frame: f.frame,
        you: (f.modeWord & 0x80000000) !== 0,
        playing: (f.modeWord & 0x40000000) !== 0,
        slave: (f.modeWord & 0x20000000) !== 0,
        client: f.modeWord & 0xffff,
        devices: f.devices,
        shareModes: f.shareModes,
        nick: decodeFixedText(f.nick),
      };
    }
    case 'modeRefused':
      expectLength(type, length, 4, start);
      return { type, reason: wordLayout.decode(bytes, start).value };
    case 'loadSavestate': {
      if (length < loadSavestateLayout.span) {
        throw new DecodeError('bad-length', start, `LOAD_SAVESTATE payload is ${length} bytes, less than 8`);
      }
      const f = loadSavestateLayout.decode(bytes, start);
      return {
        type,
        frame: f.frame,
        uncompressedSize: f.uncompressedSize,
        data: bytes.subarray(start + loadSavestateLayout.span, end),
      };
    }
    case 'stall':
      expectLength(type, length, 4, start);
      return { type, frames: wordLayout.decode(bytes, start).value };
    case 'reset':
      expectLength(type, length, 4, start);
      return { type, frame: wordLayout.decode(bytes, start).value };
    case 'playerChat': {
      const nickSize = sender === 'host' ? RETROARCH_NICK_SIZE : 0;
      const textLength = length - nickSize;
      if (textLength < 1 || textLength > RETROARCH_CHAT_MAX_TEXT) {
        throw new DecodeError(
          'bad-length',
          start,
          `PLAYER_CHAT from the ${sender} is ${length} bytes; its text must be 1..${RETROARCH_CHAT_MAX_TEXT} bytes`,
        );
      }
      const text = utf8Text(bytes.subarray(start + nickSize, end));
      return sender === 'host'
        ? { type, nick: decodeFixedText(nickLayout.decode(bytes, start).nick), text }
        : { type, text };
    }
    case 'settingAllowPausing':
      expectLength(type, length, 4, start);
      return { type, allowPausing: wordLayout.decode(bytes, start).value !== 0 };
    case 'settingInputLatencyFrames': {
      expectLength(type, length, latencyLayout.span, start);
      const f = latencyLayout.decode(bytes, start);
      return { type, min: f.min, max: f.max };
    }
  }
}

/**
 * Decodes the payload of a frame with command `command` that `sender` sent. Commands this package
 * does not know decode to a {@link RetroArchUnknownMessage}. Byte fields are views into `payload`.
 * @throws DecodeError `bad-length` (offset relative to `payload`) when the payload size does not
 *   fit the command. The payload is complete by construction, so nothing is ever `truncated`.
 */
export function decodeRetroArchMessage(
  command: number,
  payload: Uint8Array,
  sender: RetroArchSender,
): RetroArchMessage {
  return decodePayload(command, payload, 0, payload.length, sender);
}

/**
 * Decodes the payload `bytes[offset..offset+length)` in place, e.g. as reported by
 * `FrameDecoder.readFrame()` (`decoder.bytes`, `decoder.payloadOffset`, `decoder.payloadLength`).
 * Error offsets are absolute in `bytes`. A range past the end of `bytes` is `truncated` at
 * `bytes.length`; an offset or length that is not an integer 0..2^32−1 is `bad-range`.
 */
export function decodeRetroArchPayload(
  command: number,
  bytes: Uint8Array,
  offset: number,
  length: number,
  sender: RetroArchSender,
): RetroArchMessage {
  return decodePayload(command, bytes, offset, checkRange(bytes, offset, length, 'payload'), sender);
}

/**
 * Decodes exactly one whole frame (`[command][length][payload]`) occupying all of `bytes`.
 * @throws DecodeError `truncated` (the frame is incomplete), `trailing-bytes` (bytes follow it), or
 *   any error of {@link decodeRetroArchMessage} with offsets relative to `bytes`.
 */
export function decodeRetroArchFrame(bytes: Uint8Array, sender: RetroArchSender): RetroArchMessage {
  if (bytes.length < FRAME_HEADER_SIZE) {
    throw new DecodeError('truncated', bytes.length, `a frame needs 8 bytes, ${bytes.length} given`);
  }
  const command = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  const length = ((bytes[4]! << 24) | (bytes[5]! << 16) | (bytes[6]! << 8) | bytes[7]!) >>> 0;
  const end = FRAME_HEADER_SIZE + length;
  if (end > bytes.length) {
    throw new DecodeError(
      'truncated',
      bytes.length,
      `frame announces ${length} payload bytes, ${bytes.length - 8} given`,
    );
  }
  if (end < bytes.length) {
    throw new DecodeError('trailing-bytes', end, `${bytes.length - end} bytes after the frame`);
  }
  return decodePayload(command, bytes, FRAME_HEADER_SIZE, end, sender);
}

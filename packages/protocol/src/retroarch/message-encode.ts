/**
 * Encoding of every RetroArch message into a whole frame: the per-frame INPUT, NOINPUT and CRC
 * through the hand-written codecs of `input.ts`, the others through their buffer-layout
 * declarations (cold path).
 */
import { checkU32 as u32 } from '../byte-writer.js';
import { EncodeError } from '../errors.js';
import { FRAME_HEADER_SIZE, writeFrameHeader } from '../framing.js';
import {
  RETROARCH_CHAT_MAX_TEXT,
  RETROARCH_MAX_DEVICES,
  RETROARCH_NICK_SIZE,
  RETROARCH_PASSWORD_HASH_SIZE,
} from './commands.js';
import { encodeRetroArchCrc, encodeRetroArchInput, encodeRetroArchNoInput } from './input.js';
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
import { retroArchCommandOf, TYPE_OF } from './message-commands.js';
import type { RetroArchMessage } from './message-types.js';
import { encodeFixedText, utf8Bytes } from './text.js';

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

/**
 * Decoding of every RetroArch message from a frame's payload. Throws only `DecodeError`; unknown
 * commands decode to a `RetroArchUnknownMessage`.
 */
import { checkRange } from '../byte-range.js';
import { DecodeError } from '../errors.js';
import { FRAME_HEADER_SIZE } from '../framing.js';
import { RETROARCH_CHAT_MAX_TEXT, RETROARCH_NICK_SIZE, type RetroArchSender } from './commands.js';
import {
  decodeRetroArchCrcInto,
  decodeRetroArchInputInto,
  decodeRetroArchNoInput,
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
import { TYPE_OF } from './message-commands.js';
import type { RetroArchMessage } from './message-types.js';
import { decodeFixedText, utf8Text } from './text.js';

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

import { ByteReader } from '../byte-reader.js';
import { checkU32 } from '../byte-writer.js';
import { DecodeError, EncodeError } from '../errors.js';

/**
 * FCE Ultra 0.91 sends every uint32 little-endian (its `en32`/`de32` helpers write the least
 * significant byte first); the seed names no order, FCE Ultra's netplay source does.
 */
const LE = true;

/** Size in bytes of {@link FceuServerInit} on the wire. */
export const FCEU_SERVER_INIT_SIZE = 12;
/** Size in bytes of {@link FceuClientInit} on the wire. */
export const FCEU_CLIENT_INIT_SIZE = 4;
/** Players FCE Ultra numbers 0–3. */
export const FCEU_MAX_PLAYERS = 4;

/** The initialization message the server sends over TCP after accepting a client. */
export interface FceuServerInit {
  /** UDP port the server listens on (0–65535, sent as uint32). */
  udpPort: number;
  /** Player number of this client, 0–3. */
  player: number;
  /** The magic number every UDP packet must carry (uint32, chosen by the server). */
  magic: number;
}

/** The initialization message the client sends over TCP. */
export interface FceuClientInit {
  /** UDP port the client listens on (0–65535, sent as uint32). */
  udpPort: number;
}

function checkPort(port: number, field: string): number {
  if (!Number.isInteger(port) || port < 0 || port > 0xffff) throw new EncodeError('out-of-range', `${field} ${port}`);
  return port;
}

function ensureRoom(target: Uint8Array, offset: number, n: number, what: string): void {
  if (!Number.isInteger(offset) || offset < 0 || offset + n > target.length) {
    throw new EncodeError('buffer-too-small', `${what} needs ${n} bytes at offset ${offset} of ${target.length}`);
  }
}

/** Writes a {@link FceuServerInit} at `offset`; returns the bytes written (12). */
export function encodeFceuServerInit(msg: FceuServerInit, target: Uint8Array, offset = 0): number {
  ensureRoom(target, offset, FCEU_SERVER_INIT_SIZE, 'FCEU server init');
  checkPort(msg.udpPort, 'udpPort');
  if (!Number.isInteger(msg.player) || msg.player < 0 || msg.player >= FCEU_MAX_PLAYERS) {
    throw new EncodeError('out-of-range', `player ${msg.player} is not 0..3`);
  }
  checkU32(msg.magic, 'magic');
  const v = new DataView(target.buffer, target.byteOffset + offset, FCEU_SERVER_INIT_SIZE);
  v.setUint32(0, msg.udpPort, LE);
  v.setUint32(4, msg.player, LE);
  v.setUint32(8, msg.magic, LE);
  return FCEU_SERVER_INIT_SIZE;
}

/** Decodes exactly one {@link FceuServerInit} (12 bytes). */
export function decodeFceuServerInit(bytes: Uint8Array): FceuServerInit {
  const r = new ByteReader(bytes);
  const udpPort = r.u32('udpPort', LE);
  if (udpPort > 0xffff) throw new DecodeError('bad-value', 0, `udpPort ${udpPort} is not a port`);
  const player = r.u32('player', LE);
  if (player >= FCEU_MAX_PLAYERS) throw new DecodeError('bad-value', 4, `player ${player} is not 0..3`);
  const magic = r.u32('magic', LE);
  r.expectEnd('FCEU server init');
  return { udpPort, player, magic };
}

/** Writes a {@link FceuClientInit} at `offset`; returns the bytes written (4). */
export function encodeFceuClientInit(msg: FceuClientInit, target: Uint8Array, offset = 0): number {
  ensureRoom(target, offset, FCEU_CLIENT_INIT_SIZE, 'FCEU client init');
  checkPort(msg.udpPort, 'udpPort');
  new DataView(target.buffer, target.byteOffset + offset, 4).setUint32(0, msg.udpPort, LE);
  return FCEU_CLIENT_INIT_SIZE;
}

/** Decodes exactly one {@link FceuClientInit} (4 bytes). */
export function decodeFceuClientInit(bytes: Uint8Array): FceuClientInit {
  const r = new ByteReader(bytes);
  const udpPort = r.u32('udpPort', LE);
  if (udpPort > 0xffff) throw new DecodeError('bad-value', 0, `udpPort ${udpPort} is not a port`);
  r.expectEnd('FCEU client init');
  return { udpPort };
}

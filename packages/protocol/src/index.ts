/**
 * @netplay/protocol: bytes to messages and back. Framing, CRC32, and the wire formats of
 * RetroArch (protocol 6), FCE Ultra, MAMEHub and FS-UAE, plus our input-stream codec. No I/O.
 * @packageDocumentation
 */
export { ByteReader } from './byte-reader.js';
export { checkU32, writeFixedString } from './byte-writer.js';
export { crc32, crc32Update } from './crc32.js';
export { DecodeError, type DecodeErrorCode, EncodeError, type EncodeErrorCode } from './errors.js';
export * from './fceu/index.js';
export * from './framing.js';
export * from './fsuae/index.js';
export * from './input-stream/index.js';
export * from './mamehub/index.js';
export * from './retroarch/index.js';

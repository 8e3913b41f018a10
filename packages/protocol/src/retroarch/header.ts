import { checkOffset } from '../byte-range.js';
import { checkU32 as u32 } from '../byte-writer.js';
import { DecodeError, EncodeError } from '../errors.js';
import {
  RETROARCH_COMPRESSION_ZLIB,
  RETROARCH_PROTOCOL_HIGH,
  RETROARCH_PROTOCOL_LOW,
  type RetroArchSender,
} from './commands.js';
import { headerLayout } from './layouts.js';

/** Size of the connection header. */
export const RETROARCH_HEADER_SIZE = 24;

/** First word of a connection header. */
export enum RetroArchHeaderMagic {
  /** `RANP`: a normal header. */
  Ranp = 0x52414e50,
  /** `FULL`: the host has no free connection slot. */
  Full = 0x46554c4c,
  /** `DENY`: the client's address is banned. */
  Deny = 0x44454e59,
  /** `POKE`: a client that only wants the host's header, then hangs up. */
  Poke = 0x504f4b45,
}

const MAGICS = new Set<number>([
  RetroArchHeaderMagic.Ranp,
  RetroArchHeaderMagic.Full,
  RetroArchHeaderMagic.Deny,
  RetroArchHeaderMagic.Poke,
]);

/** Fields both ends send. */
interface HeaderCommon {
  /**
   * Word 0: `Ranp` for a normal header; a host may answer `Full` or `Deny` instead, and a client sending `Poke` gets
   * the host's header and is dropped.
   */
  readonly magic: RetroArchHeaderMagic;
  /** See {@link retroArchPlatformMagic}. */
  readonly platformMagic: number;
  /** Compression bits; bit 0 = zlib ({@link RETROARCH_COMPRESSION_ZLIB}). */
  readonly compression: number;
  /** See {@link retroArchImplementationMagic}. */
  readonly implementationMagic: number;
}

/** The header a client sends first. */
export interface RetroArchClientHeader extends HeaderCommon {
  /** The connection's client wrote it: words 3 and 4 are its protocol range. */
  readonly sender: 'client';
  /** The client's highest protocol version (6). */
  readonly highProtocol: number;
  /** The client's lowest protocol version (5). */
  readonly lowProtocol: number;
}

/** The host's answer (or a FULL / DENY refusal, whose other words are 0 and protocol 6). */
export interface RetroArchHostHeader extends HeaderCommon {
  /** The host wrote it: words 3 and 4 are the password salt and the chosen protocol. */
  readonly sender: 'host';
  /** The password salt; 0 = no password. */
  readonly salt: number;
  /** The protocol version the host chose. */
  readonly protocol: number;
}

/** A connection header, typed by who sent it. */
export type RetroArchHeader = RetroArchClientHeader | RetroArchHostHeader;

/**
 * RetroArch's platform magic: bit 30 = big-endian, bits 29–15 = sizeof(size_t), bits 14–0 =
 * sizeof(long). `{ bigEndian: false, sizeofSizeT: 8, sizeofLong: 8 }` (x86-64 Linux) → 0x00040008.
 */
export function retroArchPlatformMagic(platform: {
  bigEndian: boolean;
  sizeofSizeT: number;
  sizeofLong: number;
}): number {
  const { bigEndian, sizeofSizeT, sizeofLong } = platform;
  if (!Number.isInteger(sizeofSizeT) || sizeofSizeT < 0 || sizeofSizeT > 0x7fff) {
    throw new EncodeError('out-of-range', `sizeof(size_t) ${sizeofSizeT} does not fit 15 bits`);
  }
  if (!Number.isInteger(sizeofLong) || sizeofLong < 0 || sizeofLong > 0x7fff) {
    throw new EncodeError('out-of-range', `sizeof(long) ${sizeofLong} does not fit 15 bits`);
  }
  return ((bigEndian ? 1 << 30 : 0) | (sizeofSizeT << 15) | sizeofLong) >>> 0;
}

/** Splits a platform magic into its fields (bit 31 is ignored, as RetroArch does). */
export function parseRetroArchPlatformMagic(magic: number): {
  /** Bit 30: the sender's machine is big-endian. */
  bigEndian: boolean;
  /** Bits 29–15: the sender's `sizeof(size_t)` in bytes (8 on 64-bit machines). */
  sizeofSizeT: number;
  /** Bits 14–0: the sender's `sizeof(long)` in bytes (8 on LP64 Unix, 4 on Windows). */
  sizeofLong: number;
} {
  return { bigEndian: (magic & (1 << 30)) !== 0, sizeofSizeT: (magic >>> 15) & 0x7fff, sizeofLong: magic & 0x7fff };
}

/** The platform magic of a little-endian 64-bit Unix (x86-64, arm64): 0x00040008. */
export const RETROARCH_PLATFORM_LP64 = 0x00040008;

const utf8 = new TextEncoder();

/**
 * RetroArch's implementation magic of a version string: `x = 0; for each byte i: x ^= byte <<
 * (i & 15); x ^= protocol << (len & 15)`. Bytes are the UTF-8 encoding read as signed `char`
 * (as on x86), which only matters for non-ASCII versions. `"1.14.0"` → 0x469.
 */
export function retroArchImplementationMagic(version: string, protocol: number = RETROARCH_PROTOCOL_HIGH): number {
  const bytes = utf8.encode(version);
  let x = 0;
  for (let i = 0; i < bytes.length; i++) x ^= ((bytes[i]! << 24) >> 24) << (i & 15);
  x ^= protocol << (bytes.length & 15);
  return x >>> 0;
}

/** The implementation magic of RetroArch 1.14.0 (0x469). */
export const RETROARCH_1_14_IMPLEMENTATION_MAGIC: number = retroArchImplementationMagic('1.14.0');

/**
 * The protocol a host picks for a client range: min(high, 6), if that is at least max(low, 5);
 * otherwise `undefined` (the host refuses the client).
 */
export function chooseRetroArchProtocol(high: number, low: number): number | undefined {
  const chosen = Math.min(high, RETROARCH_PROTOCOL_HIGH);
  return chosen >= Math.max(low, RETROARCH_PROTOCOL_LOW) ? chosen : undefined;
}

/** Options of {@link retroArchClientHeader}; every field has RetroArch 1.14's x86-64 default. */
export interface ClientHeaderOptions {
  /** Word 0; default `Ranp` (`Poke` asks only for the host's header). */
  magic?: RetroArchHeaderMagic;
  /** Word 1; default {@link RETROARCH_PLATFORM_LP64} (0x00040008, x86-64). */
  platformMagic?: number;
  /**
   * Word 2, the compression bits offered; default {@link RETROARCH_COMPRESSION_ZLIB} (1). Keep zlib: RetroArch 1.14
   * crashes sending a savestate to a client that offered 0.
   */
  compression?: number;
  /** Word 3, the highest protocol the client speaks; default 6. */
  highProtocol?: number;
  /** Word 4, the lowest protocol the client speaks; default 5. */
  lowProtocol?: number;
  /** Word 5; default 0x469, RetroArch 1.14.0's (see {@link retroArchImplementationMagic}). */
  implementationMagic?: number;
}

/** A client header as RetroArch 1.14 on x86-64 sends it (zlib always advertised). */
export function retroArchClientHeader(options: ClientHeaderOptions = {}): RetroArchClientHeader {
  return {
    sender: 'client',
    magic: options.magic ?? RetroArchHeaderMagic.Ranp,
    platformMagic: options.platformMagic ?? RETROARCH_PLATFORM_LP64,
    compression: options.compression ?? RETROARCH_COMPRESSION_ZLIB,
    highProtocol: options.highProtocol ?? RETROARCH_PROTOCOL_HIGH,
    lowProtocol: options.lowProtocol ?? RETROARCH_PROTOCOL_LOW,
    implementationMagic: options.implementationMagic ?? RETROARCH_1_14_IMPLEMENTATION_MAGIC,
  };
}

/** Options of {@link retroArchHostHeader}. */
export interface HostHeaderOptions {
  /** Word 0; default `Ranp` (a refusal is built with {@link retroArchRefusalHeader}). */
  magic?: RetroArchHeaderMagic;
  /** Word 1; default {@link RETROARCH_PLATFORM_LP64} (0x00040008, x86-64). */
  platformMagic?: number;
  /** Word 2, the compression bits the host supports; default {@link RETROARCH_COMPRESSION_ZLIB} (1). */
  compression?: number;
  /** Word 3, the u32 salt the client hashes its password with; default 0, no password asked. */
  salt?: number;
  /** Word 4, the protocol chosen for this client (see {@link chooseRetroArchProtocol}); default 6. */
  protocol?: number;
  /** Word 5; default 0x469, RetroArch 1.14.0's (see {@link retroArchImplementationMagic}). */
  implementationMagic?: number;
}

/** A host header as RetroArch 1.14 on x86-64 answers (salt 0 = no password). */
export function retroArchHostHeader(options: HostHeaderOptions = {}): RetroArchHostHeader {
  return {
    sender: 'host',
    magic: options.magic ?? RetroArchHeaderMagic.Ranp,
    platformMagic: options.platformMagic ?? RETROARCH_PLATFORM_LP64,
    compression: options.compression ?? RETROARCH_COMPRESSION_ZLIB,
    salt: options.salt ?? 0,
    protocol: options.protocol ?? RETROARCH_PROTOCOL_HIGH,
    implementationMagic: options.implementationMagic ?? RETROARCH_1_14_IMPLEMENTATION_MAGIC,
  };
}

/**
 * The refusal a full (`Full`) or banning (`Deny`) host sends: every word 0 except the magic and
 * word 4 = 6, exactly as RetroArch 1.14 writes it.
 */
export function retroArchRefusalHeader(
  magic: RetroArchHeaderMagic.Full | RetroArchHeaderMagic.Deny,
): RetroArchHostHeader {
  return {
    sender: 'host',
    magic,
    platformMagic: 0,
    compression: 0,
    salt: 0,
    protocol: RETROARCH_PROTOCOL_HIGH,
    implementationMagic: 0,
  };
}

/**
 * Writes a connection header (24 bytes) into `target` at `offset`.
 * @returns 24.
 * @throws EncodeError `buffer-too-small` or `out-of-range`.
 */
export function encodeRetroArchHeader(header: RetroArchHeader, target: Uint8Array, offset = 0): number {
  if (offset < 0 || offset + RETROARCH_HEADER_SIZE > target.length) {
    throw new EncodeError('buffer-too-small', `a 24-byte header at ${offset} does not fit ${target.length} bytes`);
  }
  if (!MAGICS.has(header.magic)) throw new EncodeError('out-of-range', `header magic ${header.magic} is not known`);
  const word3 = header.sender === 'client' ? header.highProtocol : header.salt;
  const word4 = header.sender === 'client' ? header.lowProtocol : header.protocol;
  headerLayout.encode(
    {
      magic: header.magic,
      platformMagic: u32(header.platformMagic, 'platform magic'),
      compression: u32(header.compression, 'compression'),
      word3: u32(word3, header.sender === 'client' ? 'high protocol' : 'salt'),
      word4: u32(word4, header.sender === 'client' ? 'low protocol' : 'protocol'),
      implementationMagic: u32(header.implementationMagic, 'implementation magic'),
    },
    target,
    offset,
  );
  return RETROARCH_HEADER_SIZE;
}

/**
 * Decodes a connection header sent by `sender` from `bytes[offset..offset+24)`.
 * @throws DecodeError `truncated` (fewer than 24 bytes), `bad-magic` (not RANP/FULL/DENY/POKE) or
 *   `bad-range` (an offset that is not an integer 0..2^32−1).
 */
export function decodeRetroArchHeader(bytes: Uint8Array, sender: RetroArchSender, offset = 0): RetroArchHeader {
  checkOffset(offset, 'RetroArch header');
  if (bytes.length - offset < RETROARCH_HEADER_SIZE) {
    throw new DecodeError(
      'truncated',
      Math.max(offset, bytes.length),
      `a header needs 24 bytes, ${bytes.length - offset} given`,
    );
  }
  const f = headerLayout.decode(bytes, offset);
  if (!MAGICS.has(f.magic)) {
    throw new DecodeError(
      'bad-magic',
      offset,
      `header magic 0x${f.magic.toString(16).padStart(8, '0')} is not RANP/FULL/DENY/POKE`,
    );
  }
  const common = {
    magic: f.magic as RetroArchHeaderMagic,
    platformMagic: f.platformMagic,
    compression: f.compression,
    implementationMagic: f.implementationMagic,
  };
  return sender === 'client'
    ? { sender, ...common, highProtocol: f.word3, lowProtocol: f.word4 }
    : { sender, ...common, salt: f.word3, protocol: f.word4 };
}

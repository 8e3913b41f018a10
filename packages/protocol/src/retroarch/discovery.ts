import { DecodeError, EncodeError } from '../errors.js';
import { discoveryQueryLayout, discoveryReplyLayout } from './layouts.js';
import { decodeFixedText, encodeFixedText } from './text.js';

/** `RANQ`: the LAN discovery query (UDP to port 55435). */
export const RETROARCH_DISCOVERY_QUERY_MAGIC = 0x52414e51;
/** `RANS`: the LAN discovery reply. */
export const RETROARCH_DISCOVERY_REPLY_MAGIC = 0x52414e53;
/** Size of the discovery query. */
export const RETROARCH_DISCOVERY_QUERY_SIZE = 4;
/** Size of the discovery reply. */
export const RETROARCH_DISCOVERY_REPLY_SIZE = 688;

/** A host's answer to a LAN discovery query. */
export interface RetroArchDiscoveryReply {
  /** Offset 4, u32: CRC-32 of the content the host is running, which a client compares with its own. */
  readonly contentCrc: number;
  /** The host's TCP port. */
  readonly port: number;
  /** Flags bit 0: playing needs a password. */
  readonly hasPassword: boolean;
  /** Flags bit 1: spectating needs a password. */
  readonly hasSpectatePassword: boolean;
  /** char[32]. */
  readonly nick: string;
  /** char[32], e.g. "Linux x86_64". */
  readonly frontend: string;
  /** char[32], the core's library name. */
  readonly core: string;
  /** char[32]. */
  readonly coreVersion: string;
  /** char[32], e.g. "1.14.0". */
  readonly retroarchVersion: string;
  /** char[256], the content's name. */
  readonly content: string;
  /** char[256], the subsystem name. */
  readonly subsystem: string;
}

/**
 * Writes the 4-byte query `RANQ` at `offset`.
 * @returns 4.
 */
export function encodeRetroArchDiscoveryQuery(target: Uint8Array, offset = 0): number {
  if (offset < 0 || offset + RETROARCH_DISCOVERY_QUERY_SIZE > target.length) {
    throw new EncodeError('buffer-too-small', `a 4-byte query at ${offset} does not fit ${target.length} bytes`);
  }
  discoveryQueryLayout.encode({ magic: RETROARCH_DISCOVERY_QUERY_MAGIC }, target, offset);
  return RETROARCH_DISCOVERY_QUERY_SIZE;
}

/**
 * Checks a UDP datagram is a discovery query (exactly the 4 bytes `RANQ`, as a 1.14 host requires).
 * @throws DecodeError `bad-length` or `bad-magic`.
 */
export function decodeRetroArchDiscoveryQuery(datagram: Uint8Array): void {
  if (datagram.length !== RETROARCH_DISCOVERY_QUERY_SIZE) {
    throw new DecodeError('bad-length', 0, `a discovery query is 4 bytes, not ${datagram.length}`);
  }
  if (discoveryQueryLayout.decode(datagram, 0).magic !== RETROARCH_DISCOVERY_QUERY_MAGIC) {
    throw new DecodeError('bad-magic', 0, 'a discovery query starts with RANQ');
  }
}

function u32(v: number, field: string): number {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff)
    throw new EncodeError('out-of-range', `${field} ${v} is not a u32`);
  return v;
}

/**
 * Writes a 688-byte discovery reply at `offset`.
 * @returns 688.
 * @throws EncodeError `buffer-too-small`, `out-of-range` or `too-long` (a text does not fit its field).
 */
export function encodeRetroArchDiscoveryReply(reply: RetroArchDiscoveryReply, target: Uint8Array, offset = 0): number {
  if (offset < 0 || offset + RETROARCH_DISCOVERY_REPLY_SIZE > target.length) {
    throw new EncodeError('buffer-too-small', `a 688-byte reply at ${offset} does not fit ${target.length} bytes`);
  }
  discoveryReplyLayout.encode(
    {
      magic: RETROARCH_DISCOVERY_REPLY_MAGIC,
      contentCrc: u32(reply.contentCrc, 'content CRC'),
      port: u32(reply.port, 'port'),
      flags: (reply.hasPassword ? 1 : 0) | (reply.hasSpectatePassword ? 2 : 0),
      nick: encodeFixedText(reply.nick, 32, 'nick'),
      frontend: encodeFixedText(reply.frontend, 32, 'frontend'),
      core: encodeFixedText(reply.core, 32, 'core'),
      coreVersion: encodeFixedText(reply.coreVersion, 32, 'core version'),
      retroarchVersion: encodeFixedText(reply.retroarchVersion, 32, 'RetroArch version'),
      content: encodeFixedText(reply.content, 256, 'content'),
      subsystem: encodeFixedText(reply.subsystem, 256, 'subsystem'),
    },
    target,
    offset,
  );
  return RETROARCH_DISCOVERY_REPLY_SIZE;
}

/**
 * Decodes a discovery reply datagram (exactly 688 bytes starting with `RANS`, as RetroArch
 * requires). Flag bits other than 0 and 1 are ignored.
 * @throws DecodeError `bad-length` or `bad-magic`.
 */
export function decodeRetroArchDiscoveryReply(datagram: Uint8Array): RetroArchDiscoveryReply {
  if (datagram.length !== RETROARCH_DISCOVERY_REPLY_SIZE) {
    throw new DecodeError('bad-length', 0, `a discovery reply is 688 bytes, not ${datagram.length}`);
  }
  const f = discoveryReplyLayout.decode(datagram, 0);
  if (f.magic !== RETROARCH_DISCOVERY_REPLY_MAGIC)
    throw new DecodeError('bad-magic', 0, 'a discovery reply starts with RANS');
  return {
    contentCrc: f.contentCrc,
    port: f.port,
    hasPassword: (f.flags & 1) !== 0,
    hasSpectatePassword: (f.flags & 2) !== 0,
    nick: decodeFixedText(f.nick),
    frontend: decodeFixedText(f.frontend),
    core: decodeFixedText(f.core),
    coreVersion: decodeFixedText(f.coreVersion),
    retroarchVersion: decodeFixedText(f.retroarchVersion),
    content: decodeFixedText(f.content),
    subsystem: decodeFixedText(f.subsystem),
  };
}

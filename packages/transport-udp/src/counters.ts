/**
 * Datagrams dropped before they could change anything, by cause. A listener keeps one set for
 * all its sessions; a client connection keeps its own.
 */
export interface DropCounters {
  /** Too short for a header, or the CRC-32 does not match. */
  badCrc: number;
  /** From a known address, but with a session id that is not that address's session. */
  badSession: number;
  /** From an address with no session, and not a handshake packet (or, on a client, not from the server). */
  unknownAddress: number;
  /** CRC and session fine, but the content is malformed (bad type, truncated frame, bad magic). */
  malformed: number;
  /** Handshake packets ignored: short HELLO, bad or expired cookie, wrong nonce, late replies. */
  handshakeIgnored: number;
  /** DATA packets already received (exact duplicates detected by the ack window). */
  duplicate: number;
}

/** A fresh set of zeroed counters. */
export function newDropCounters(): DropCounters {
  return { badCrc: 0, badSession: 0, unknownAddress: 0, malformed: 0, handshakeIgnored: 0, duplicate: 0 };
}

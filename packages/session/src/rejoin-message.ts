import { DecodeError } from '@netplay/protocol';
import { LINK_TOKEN_BYTES } from './link-messages.js';

/** Type byte of REJOIN (player → the host elected after a hand-over, right after INFO; session protocol 5). */
export const REJOIN_TYPE = 28;

/**
 * REJOIN: a player that left comes back to the host elected after a hand-over, proving it held
 * its slot: the token of its pair with that host, issued by the original host in LINKS.
 */
export interface RejoinMessage {
  /** The slot it held (u8). */
  readonly slot: number;
  /** The 8-byte token of its pair with the new host (LINKS, or LINK_ADD / LINKS at its entry). */
  readonly token: Uint8Array;
}

/**
 * Where and how a player that leaves after a host hand-over comes back (`NetplayClient.rejoinTarget`,
 * then the new client's `rejoin` option): plain data a shell can keep past the process.
 */
export interface RejoinTarget {
  /** The nick of the host elected after the hand-over. */
  readonly host: string;
  /** Where it listens (its link address, as the original host passed it on; empty: unknown, the shell must know it). */
  readonly address: string;
  /** The slot this player held. */
  readonly slot: number;
  /** The 8-byte token of this player's pair with that host. */
  readonly token: Uint8Array;
}

/** Encodes REJOIN: `u8 28, u8 slot, 8 bytes token`. @throws RangeError for a token of another size. */
export function encodeRejoin(m: RejoinMessage): Uint8Array {
  if (m.token.length !== LINK_TOKEN_BYTES) throw new RangeError(`a rejoin token is ${LINK_TOKEN_BYTES} bytes`);
  const b = new Uint8Array(2 + LINK_TOKEN_BYTES);
  b[0] = REJOIN_TYPE;
  b[1] = m.slot & 0xff;
  b.set(m.token, 2);
  return b;
}

/** Decodes REJOIN. @throws DecodeError for another type or another length. */
export function decodeRejoin(b: Uint8Array): RejoinMessage {
  if (b[0] !== REJOIN_TYPE) throw new DecodeError('unknown-type', 0, `REJOIN expected, got type ${b[0]}`);
  if (b.length !== 2 + LINK_TOKEN_BYTES)
    throw new DecodeError('bad-value', 0, `REJOIN is ${2 + LINK_TOKEN_BYTES} bytes, got ${b.length}`);
  return { slot: b[1]!, token: b.slice(2) };
}

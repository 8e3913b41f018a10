import { TransportError } from '@netplay/transport';
import type { Chan, MutableStats } from './channel-state.js';
import { seqNewer, UNRELIABLE_HEADER_BYTES } from './wire.js';

/**
 * The payload of an unreliable frame (`u32 sequence, payload`) received on `chan`, or `undefined`
 * when it is stale (not newer than the last one delivered: counted in `stats.staleReceived`).
 * @throws TransportError `protocol` for a frame shorter than its header, `too-large` past `limit`.
 */
export function unreliablePayload(
  chan: Chan,
  bytes: Uint8Array,
  limit: number,
  stats: MutableStats,
): Uint8Array | undefined {
  if (bytes.length < UNRELIABLE_HEADER_BYTES)
    throw new TransportError('protocol', `unreliable frame of ${bytes.length} bytes`);
  const payload = bytes.length - UNRELIABLE_HEADER_BYTES;
  if (payload > limit)
    throw new TransportError('too-large', `received ${payload} bytes on "${chan.spec.name}" (limit ${limit})`);
  const seq = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  if (chan.got && !seqNewer(seq, chan.lastSeq)) {
    stats.staleReceived++;
    return undefined;
  }
  chan.got = true;
  chan.lastSeq = seq;
  return bytes.subarray(UNRELIABLE_HEADER_BYTES);
}

/** Whether every reliable channel received as many messages as the peer's CLOSE says it sent (`sent`, in channel order). */
export function allReliableReceived(chans: readonly Chan[], sent: readonly number[]): boolean {
  let i = 0;
  for (const c of chans) {
    if (!c.reliable) continue;
    if (c.received < (sent[i] ?? 0)) return false;
    i++;
  }
  return true;
}

/** Data received on the client before WELCOME (another stream may overtake it), delivered at open. */
export interface Early {
  readonly chan: Chan;
  readonly bytes: Uint8Array;
}

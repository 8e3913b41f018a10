import { applyDelta, DeltaError, describeDelta, pageDelta } from '@netplay/state';
import { SessionError } from './errors.js';

/**
 * SYNC's savestate on the wire (session protocol 3): a page delta (@netplay/state's `pageDelta`,
 * deflated) against an all-zero state of the same size, so only the pages that are not zero travel,
 * compressed. A power-on state is mostly zero (RAM), so a lockstep-cs joiner's base (the power-on
 * state) costs a few hundred bytes instead of the whole state; an empty state stays empty.
 */
export function packSyncState(state: Uint8Array): Uint8Array {
  if (state.length === 0) return state;
  return pageDelta(new Uint8Array(state.length), state, { layoutHash: 0n });
}

/**
 * The savestate of a SYNC packed by {@link packSyncState}, at most `maxBytes` (the client core's
 * `stateBytes`: checked before anything is allocated). An empty one stays empty.
 * @throws SessionError `protocol` for bytes that are not such a delta or a state over `maxBytes`.
 */
export function unpackSyncState(bytes: Uint8Array, maxBytes: number): Uint8Array {
  if (bytes.length === 0) return bytes;
  try {
    const { baseBytes } = describeDelta(bytes);
    if (baseBytes > maxBytes)
      throw new SessionError('protocol', `the host's savestate has ${baseBytes} bytes, this core at most ${maxBytes}`);
    return applyDelta(new Uint8Array(baseBytes), bytes, { layoutHash: 0n, maxTargetBytes: maxBytes });
  } catch (e) {
    if (e instanceof DeltaError)
      throw new SessionError('protocol', `the host's savestate does not unpack: ${e.message}`);
    throw e;
  }
}

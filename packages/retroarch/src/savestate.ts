import { DeltaError, inflateBounded } from '@netplay/state';
import { RetroArchError } from './errors.js';

/**
 * Turns LOAD_SAVESTATE data into the serialized state: inflates it (when both ends advertised
 * zlib) into exactly `uncompressedSize` bytes, after checking that size against `max`. Fails with
 * `RetroArchError('savestate')` on a size over `max`, malformed zlib, a stream that inflates to more
 * or fewer bytes than announced, or trailing bytes. Raw data must be exactly the announced size.
 * The inflate is `@netplay/state`'s `inflateBounded`: it never writes past the announced size.
 */
export function inflateSavestate(data: Uint8Array, uncompressedSize: number, zlib: boolean, max: number): Uint8Array {
  if (uncompressedSize > max) {
    throw new RetroArchError('savestate', `savestate of ${uncompressedSize} bytes is over the ${max}-byte maximum`);
  }
  if (!zlib) {
    if (data.length !== uncompressedSize) {
      throw new RetroArchError('savestate', `raw savestate of ${data.length} bytes announced as ${uncompressedSize}`);
    }
    return data.slice();
  }
  const dst = new Uint8Array(uncompressedSize);
  let produced: number;
  try {
    produced = inflateBounded(data, dst);
  } catch (e) {
    if (e instanceof DeltaError) {
      throw new RetroArchError('savestate', `savestate zlib data rejected: ${e.message}`);
    }
    throw e;
  }
  if (produced !== uncompressedSize) {
    throw new RetroArchError('savestate', `savestate inflates to ${produced} bytes, not ${uncompressedSize}`);
  }
  return dst;
}

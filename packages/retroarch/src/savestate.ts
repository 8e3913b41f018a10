import { DeltaError, inflateBounded, maxInflatedBytes } from '@netplay/state';
import { RetroArchError } from './errors.js';

/**
 * Turns LOAD_SAVESTATE data into the serialized state: inflates it (when both ends advertised
 * zlib) into exactly `uncompressedSize` bytes, after checking that size against `max` and against what
 * the zlib data can inflate to at most (`maxInflatedBytes`), so nothing is allocated for a lie. Fails with
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
  // A zlib stream cannot inflate to more than MAX_INFLATE_RATIO times its size: a larger announced
  // size is a lie, refused before the buffer is allocated (a 20-byte message must not cost 16 MiB).
  if (uncompressedSize > maxInflatedBytes(data.length)) {
    throw new RetroArchError(
      'savestate',
      `savestate announced as ${uncompressedSize} bytes, more than ${data.length} bytes of zlib data can inflate to`,
    );
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

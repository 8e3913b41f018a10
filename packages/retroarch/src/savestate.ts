import { Z_FINISH, Z_OK, Z_STREAM_END, ZStream, zlibInflate, zlibInflateEnd, zlibInflateInit2 } from 'pako';
import { RetroArchError } from './errors.js';

/**
 * Turns LOAD_SAVESTATE data into the serialized state: inflates it (when both ends advertised
 * zlib) into exactly `uncompressedSize` bytes, after checking that size against `max`. Fails with
 * `RetroArchError('savestate')` on a size over `max`, malformed zlib, a stream that inflates to more
 * or fewer bytes than announced, or trailing bytes. Raw data must be exactly the announced size.
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
  const strm = new ZStream();
  if (zlibInflateInit2(strm, 15) !== Z_OK) throw new RetroArchError('savestate', 'cannot start inflate');
  strm.input = data;
  strm.next_in = 0;
  strm.avail_in = data.length;
  strm.output = dst;
  strm.next_out = 0;
  strm.avail_out = dst.length;
  let status: number;
  try {
    status = zlibInflate(strm, Z_FINISH);
  } catch {
    throw new RetroArchError('savestate', 'savestate zlib data is malformed');
  } finally {
    zlibInflateEnd(strm);
  }
  if (status !== Z_STREAM_END) {
    const why = strm.avail_out === 0 ? 'inflates to more than announced' : strm.msg || 'ends early';
    throw new RetroArchError('savestate', `savestate zlib data ${why}`);
  }
  if (strm.total_out !== uncompressedSize) {
    throw new RetroArchError('savestate', `savestate inflates to ${strm.total_out} bytes, not ${uncompressedSize}`);
  }
  if (strm.avail_in !== 0) throw new RetroArchError('savestate', `${strm.avail_in} bytes after the savestate`);
  return dst;
}

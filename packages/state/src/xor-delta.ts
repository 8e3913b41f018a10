/**
 * MAMEHub's delta (seed 000): deflate of XOR(base, current) over the whole state, with pako
 * streamed through 256 KiB (the default, bounded memory) or with a native compressor (node:zlib,
 * `CompressionStream`) over the whole XOR at once.
 */
import { Deflate } from 'pako';
import { type DeflateAsync, type DeflateSync, defaultDeflateAsync } from './deflate.js';
import { checkLevel, checkSize, type DeltaOptions, KIND_XOR, writeHeader } from './delta.js';
import { xorRange } from './delta-body.js';
import { DeltaError } from './errors.js';
import { hash64 } from './hash64.js';

/** Options of {@link xorDelta}. */
export interface XorDeltaOptions extends DeltaOptions {
  /**
   * The compressor. Default: pako, streamed through a 256 KiB buffer (memory bounded whatever
   * the state size). With one (`nodeDeflate` from `@netplay/state/node`: node:zlib, several times
   * faster), the XOR of the whole state is made in one buffer of the state's size and compressed
   * at once. Any zlib-format compressor gives a delta every reader applies.
   */
  readonly deflate?: DeflateSync;
}

/** Options of {@link xorDeltaAsync}. */
export interface XorDeltaAsyncOptions extends DeltaOptions {
  /**
   * The compressor (default: `CompressionStream('deflate')` where the platform has it, which
   * ignores `level` and uses zlib's default 6; else pako). `nodeDeflateAsync` from
   * `@netplay/state/node` runs node:zlib on libuv's thread pool.
   */
  readonly deflate?: DeflateAsync;
}

const CHUNK = 256 * 1024;

/** Writes XOR(base, current) of bytes [start, end) into `out` (base read as zeros past its end). */
function xorInto(base: Uint8Array, current: Uint8Array, start: number, end: number, out: Uint8Array): void {
  const common = Math.min(end, base.length);
  if (start < common) xorRange(base, current, start, common, out);
  for (let i = Math.max(start, common); i < end; i++) out[i - start] = current[i]!;
}

/** XOR(base, current) over the whole of `current`, in one new buffer. */
function wholeXor(base: Uint8Array, current: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(current.length);
  xorInto(base, current, 0, current.length, out);
  return out;
}

/**
 * MAMEHub's delta (seed 000): deflate of XOR(base, current) over the whole state. The base is
 * read as zero past its end when `current` is longer. By default pako compresses it, the XOR
 * streamed through a 256 KiB buffer, so memory stays bounded whatever the state size; with
 * `options.deflate` (e.g. `nodeDeflate`, node:zlib) the XOR is made in one buffer of the state's
 * size and compressed at once. Either delta applies with {@link applyDelta}.
 */
export function xorDelta(base: Uint8Array, current: Uint8Array, options: XorDeltaOptions): Uint8Array<ArrayBuffer> {
  checkSize(base, 'base');
  checkSize(current, 'state');
  const level = checkLevel(options.level ?? 6);
  if (options.deflate !== undefined)
    return writeHeader(KIND_XOR, 0, options, base, current, 0, options.deflate(wholeXor(base, current), level));
  const z = new Deflate({ level: level as 0 });
  const chunk = new Uint8Array(CHUNK);
  const n = current.length;
  for (let start = 0; start < n; start += CHUNK) {
    const end = Math.min(n, start + CHUNK);
    const c = end - start === CHUNK ? chunk : chunk.subarray(0, end - start);
    xorInto(base, current, start, end, c);
    z.push(c, end === n);
  }
  if (n === 0) z.push(new Uint8Array(0), true);
  if (z.err) throw new DeltaError('corrupt', `deflate failed: ${z.msg}`);
  return writeHeader(KIND_XOR, 0, options, base, current, 0, z.result);
}

/**
 * {@link xorDelta} with an asynchronous compressor: by default the platform's native deflate
 * (`CompressionStream`, in browsers and Node 18+), else pako. The XOR of the whole state (one
 * buffer of its size) and both hashes are made before it returns, so `base` and `current` may
 * change while the promise is pending. Every delta reader applies the result.
 */
export async function xorDeltaAsync(
  base: Uint8Array,
  current: Uint8Array,
  options: XorDeltaAsyncOptions,
): Promise<Uint8Array<ArrayBuffer>> {
  checkSize(base, 'base');
  checkSize(current, 'state');
  const level = checkLevel(options.level ?? 6);
  const xor = wholeXor(base, current);
  const hashes = { baseHash: options.baseHash ?? hash64(base), targetHash: options.targetHash ?? hash64(current) };
  const z = await (options.deflate ?? defaultDeflateAsync)(xor, level);
  return writeHeader(KIND_XOR, 0, { ...options, ...hashes }, base, current, 0, z);
}

/**
 * @netplay/state/node: the Node-only NVRAM file adapter and node:zlib compressors for deltas.
 * Kept out of the main entry so that `@netplay/state` stays free of `node:` imports and runs in
 * browsers.
 * @packageDocumentation
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { deflate, deflateSync, inflateSync } from 'node:zlib';
import type { InflateBounded } from './bounded-inflate.js';
import type { DeflateAsync, DeflateSync } from './deflate.js';
import type { RangeCompare } from './delta-body.js';
import { DeltaError } from './errors.js';
import type { StateRegistry } from './registry.js';

/**
 * node:zlib's deflate (zlib format), synchronous: several times faster than pako. Pass it as the
 * `deflate` option of `pageDelta` or `DeltaBase.pageDelta`; the deltas apply with any reader.
 */
export const nodeDeflate: DeflateSync = (data, level) => deflateSync(data, { level });

/** node:zlib's deflate on libuv's thread pool: the event loop stays free while it compresses. */
export const nodeDeflateAsync: DeflateAsync = (data, level) =>
  new Promise((resolve, reject) => {
    deflate(data, { level }, (err, out) => (err ? reject(err) : resolve(out)));
  });

/**
 * node:zlib's inflate for `applyDelta` (`applyDelta(base, delta, { inflate: nodeInflateBounded })`),
 * several times faster than pako's. Bounded like it: the output is one buffer of `maxBytes + 1`
 * bytes (node:zlib's `chunkSize`), the stream fails as soon as it would pass `maxBytes`
 * (`maxOutputLength`), and a stream that is malformed, ends early or is followed by extra bytes is
 * `DeltaError('corrupt')`. Outputs small enough to come from Node's shared Buffer pool are copied
 * out, so the result never shares memory with other Buffers.
 */
export const nodeInflateBounded: InflateBounded = (src, maxBytes) => {
  let r: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    r = inflateSync(src, {
      chunkSize: Math.max(64, maxBytes + 1),
      maxOutputLength: Math.max(1, maxBytes),
      info: true,
    }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
  } catch (e) {
    throw new DeltaError(
      'corrupt',
      `compressed data is malformed, ends early or inflates to more than ${maxBytes} bytes (${(e as Error).message})`,
    );
  }
  const out = r.buffer;
  if (out.length > maxBytes) throw new DeltaError('corrupt', `compressed data inflates to more than ${maxBytes} bytes`);
  if (r.engine.bytesWritten !== src.length)
    throw new DeltaError('corrupt', `${src.length - r.engine.bytesWritten} bytes after the compressed data`);
  if (out.byteOffset !== 0 || out.buffer.byteLength > out.length + 1) return new Uint8Array(out);
  return new Uint8Array(out.buffer as ArrayBuffer, 0, out.length);
};

/**
 * Writes the registry's NVRAM blob to `path`, atomically: it is written to `path + '.tmp'` and
 * renamed over `path`, so a crash never leaves a half-written file.
 */
export async function saveNvramFile(registry: StateRegistry, path: string): Promise<void> {
  const blob = registry.saveNvram();
  const tmp = `${path}.tmp`;
  await writeFile(tmp, blob);
  await rename(tmp, path);
}

/**
 * Loads the NVRAM blob at `path` into the registry, as on power-on.
 * @returns false, changing nothing, when the file does not exist (first power-on: the entries
 *   keep their initial values).
 * @throws SnapshotError when the file is not a valid blob for this registry (nothing is loaded),
 *   or the file system error for anything but a missing file.
 */
export async function loadNvramFile(registry: StateRegistry, path: string): Promise<boolean> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  registry.loadNvram(bytes);
  return true;
}

/**
 * A page comparator for `DeltaBase` (`new DeltaBase(base, { layoutHash, compare: nodeRangeCompare() })`)
 * using native `memcmp` through `Buffer.compare`: a whole-state compare runs several times faster
 * than the JavaScript default. Each comparator keeps Buffer views of the last two states it saw,
 * so it allocates only when they change.
 */
export function nodeRangeCompare(): RangeCompare {
  let lastA: Uint8Array | undefined;
  let lastB: Uint8Array | undefined;
  let bufA: Buffer = Buffer.alloc(0);
  let bufB: Buffer = Buffer.alloc(0);
  return (a, b, start, end) => {
    if (a !== lastA) {
      lastA = a;
      bufA = Buffer.from(a.buffer, a.byteOffset, a.length);
    }
    if (b !== lastB) {
      lastB = b;
      bufB = Buffer.from(b.buffer, b.byteOffset, b.length);
    }
    return bufA.compare(bufB, start, end, start, end) === 0;
  };
}

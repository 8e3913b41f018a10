import { deflate } from 'pako';
import { DeltaError } from './errors.js';

/**
 * A synchronous zlib-format (RFC 1950) compressor: `data` compressed at `level` (0..9). Any
 * conforming zlib stream works; deltas are read with one inflate whatever made them.
 */
export type DeflateSync = (data: Uint8Array, level: number) => Uint8Array;

/** An asynchronous zlib-format compressor (a `CompressionStream`, a worker, `node:zlib`'s callback API). */
export type DeflateAsync = (data: Uint8Array, level: number) => Promise<Uint8Array>;

/** pako's deflate (pure JavaScript, every platform): the default compressor. */
export const pakoDeflate: DeflateSync = (data, level) => deflate(data, { level: level as 0 });

/** The slice of the `CompressionStream` API we use, so the package needs no DOM types. */
interface CompressionStreamLike {
  readonly writable: {
    getWriter(): { write(chunk: Uint8Array): Promise<void>; close(): Promise<void> };
  };
  readonly readable: {
    getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }> };
  };
}
type CompressionStreamConstructor = new (format: 'deflate') => CompressionStreamLike;

function compressionStreamClass(): CompressionStreamConstructor | undefined {
  const c = (globalThis as { CompressionStream?: unknown }).CompressionStream;
  return typeof c === 'function' ? (c as CompressionStreamConstructor) : undefined;
}

/**
 * True when the platform has `CompressionStream` (browsers, Deno, Node 18+), which
 * {@link compressionStreamDeflate} needs.
 */
export function hasCompressionStream(): boolean {
  return compressionStreamClass() !== undefined;
}

/**
 * The platform's native deflate through `CompressionStream('deflate')` (zlib format). It has no
 * level setting: `level` is ignored and the platform's default (zlib's 6 everywhere we know of)
 * is used. Throws `DeltaError('bad-argument')` where `CompressionStream` does not exist.
 */
export const compressionStreamDeflate: DeflateAsync = async (data) => {
  const Ctor = compressionStreamClass();
  if (Ctor === undefined) throw new DeltaError('bad-argument', 'CompressionStream is not available on this platform');
  const cs = new Ctor('deflate');
  const writer = cs.writable.getWriter();
  const written = writer.write(data).then(() => writer.close());
  const reader = cs.readable.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done || value === undefined) break;
    chunks.push(value);
    total += value.length;
  }
  await written;
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
};

/**
 * The default asynchronous compressor: {@link compressionStreamDeflate} where the platform has
 * `CompressionStream`, else pako.
 */
export const defaultDeflateAsync: DeflateAsync = (data, level) =>
  hasCompressionStream() ? compressionStreamDeflate(data, level) : Promise.resolve(pakoDeflate(data, level));

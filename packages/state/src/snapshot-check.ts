import { SnapshotError } from './errors.js';
import type { Layout } from './registry-layout.js';
import { FLAG_NVRAM, HEADER_BYTES, readU32, readU64, SNAPSHOT_MAGIC, SNAPSHOT_VERSION } from './snapshot-format.js';
import { formatSignature } from './types.js';

/** Strict checks of `bytes` against the layout, in the order the README documents. */
export function checkStrict(layout: Layout, bytes: Uint8Array): void {
  const p = layout.prefix;
  if (bytes.length < HEADER_BYTES)
    throw new SnapshotError('truncated', bytes.length, 'snapshot shorter than its header');
  if (readU32(bytes, 0) !== SNAPSHOT_MAGIC)
    throw new SnapshotError('bad-magic', 0, 'not a netplay snapshot (magic NPST)');
  const version = bytes[4]! | (bytes[5]! << 8);
  if (version !== SNAPSHOT_VERSION)
    throw new SnapshotError('bad-version', 4, `snapshot format version ${version} is not supported`);
  const flags = bytes[6]! | (bytes[7]! << 8);
  if (flags !== layout.flags)
    throw new SnapshotError(
      'bad-flags',
      6,
      layout.flags === FLAG_NVRAM
        ? 'expected an NVRAM blob'
        : flags === FLAG_NVRAM
          ? 'this is an NVRAM blob, not a snapshot'
          : `unknown flags 0x${flags.toString(16)}`,
    );
  if (readU32(bytes, 28) !== 0) throw new SnapshotError('bad-flags', 28, 'reserved header field is not zero');
  const count = readU32(bytes, 8);
  if (count !== layout.entries.length)
    throw new SnapshotError(
      'bad-entry-count',
      8,
      `snapshot has ${count} entries, the registry ${layout.entries.length}`,
    );
  const dirBytes = readU32(bytes, 12);
  if (dirBytes !== p.length - HEADER_BYTES)
    throw new SnapshotError(
      'bad-directory',
      12,
      `directory of ${dirBytes} bytes, the registry's has ${p.length - HEADER_BYTES}`,
    );
  for (let i = 16; i < 24; i++) {
    if (bytes[i] !== p[i]) {
      throw new SnapshotError(
        'bad-layout',
        16,
        `layout hash ${readU64(bytes, 16).toString(16)} is not the registry's ${layout.layoutHash.toString(16)}`,
      );
    }
  }
  const payload = readU32(bytes, 24);
  const expectedPayload = layout.totalBytes - p.length;
  if (payload !== expectedPayload)
    throw new SnapshotError(
      'bad-payload-size',
      24,
      `payload of ${payload} bytes, the registry's has ${expectedPayload}`,
    );
  if (bytes.length < layout.totalBytes)
    throw new SnapshotError('truncated', bytes.length, `snapshot of ${layout.totalBytes} bytes cut at ${bytes.length}`);
  if (bytes.length > layout.totalBytes)
    throw new SnapshotError(
      'trailing-bytes',
      layout.totalBytes,
      `${bytes.length - layout.totalBytes} bytes after the payload`,
    );
  if (!sameDirectory(layout, bytes)) {
    for (let i = HEADER_BYTES; i < p.length; i++) {
      if (bytes[i] !== p[i]) {
        const rel = i - HEADER_BYTES;
        let k = 0;
        while (k + 1 < layout.recordStarts.length && layout.recordStarts[k + 1]! <= rel) k++;
        const e = layout.entries[k];
        throw new SnapshotError(
          'bad-directory',
          i,
          `directory differs in the record of ${e ? formatSignature(e) : 'an entry'}`,
        );
      }
    }
  }
}

// One-entry cache of an Int32Array over the last source buffer compared (ring slots share one buffer).
let wordsBuffer: ArrayBufferLike | undefined;
let wordsView: Int32Array = new Int32Array(0);

/** True when the directory in `bytes` equals the layout's; word-wise when `bytes` is 4-aligned. */
function sameDirectory(layout: Layout, bytes: Uint8Array): boolean {
  const p = layout.prefix;
  const words = layout.directoryWords;
  let i = HEADER_BYTES;
  if ((bytes.byteOffset & 3) === 0 && words.length > 0) {
    const buffer = bytes.buffer;
    if (buffer !== wordsBuffer || wordsView.length !== buffer.byteLength >>> 2) {
      wordsView = new Int32Array(buffer, 0, buffer.byteLength >>> 2);
      wordsBuffer = buffer;
    }
    const w = wordsView;
    const base = (bytes.byteOffset + HEADER_BYTES) >>> 2;
    for (let k = 0, n = words.length; k < n; k++) if (w[base + k] !== words[k]) return false;
    i += words.length * 4;
  }
  for (; i < p.length; i++) if (bytes[i] !== p[i]) return false;
  return true;
}

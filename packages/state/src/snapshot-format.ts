import { SnapshotError } from './errors.js';
import { hash64 } from './hash64.js';
import { type StateType, TYPE_CODES, TYPE_SIZES, TYPES_BY_CODE } from './types.js';

/** `NPST`, the first four bytes of every snapshot and NVRAM blob. */
export const SNAPSHOT_MAGIC = 0x5453504e; // 'N' 'P' 'S' 'T' read as a little-endian u32
/** The snapshot format version this library writes and reads. */
export const SNAPSHOT_VERSION = 1;
/** Size of the fixed header in bytes. */
export const HEADER_BYTES = 32;
/** Header flag: the bytes are an NVRAM blob (only the entries flagged `nvram`). */
export const FLAG_NVRAM = 1;
/** Largest payload or directory the format can describe. */
export const MAX_SECTION_BYTES = 0xffff_ffff;

/** One entry of a snapshot directory. */
export interface DirectoryEntry {
  /** The entry's module name (UTF-8, a u16 length then bytes in the directory record). */
  readonly module: string;
  /** The entry's instance number (u32 in the record). */
  readonly instance: number;
  /** The entry's data name (UTF-8, a u16 length then bytes in the record). */
  readonly name: string;
  /** Element type (a u8 type code in the record); fixes the element size in the payload. */
  readonly type: StateType;
  /** Number of elements (u32 in the record); the entry's payload is `count` × the type's size bytes. */
  readonly count: number;
  /** The record's flag byte: true when the entry was registered as NVRAM (an NVRAM blob lists only these). */
  readonly nvram: boolean;
}

/** A parsed snapshot header and directory, as `describeSnapshot` returns them. */
export interface SnapshotInfo {
  /** Format version from header bytes 4–5; always {@link SNAPSHOT_VERSION} (1), since any other is rejected with `bad-version`. */
  readonly version: number;
  /** True for an NVRAM blob, false for a full snapshot. */
  readonly nvram: boolean;
  /** `hash64` of the directory bytes (header bytes 16–23, checked): equal for snapshots of the same layout, whatever the state. */
  readonly layoutHash: bigint;
  /** The directory, in payload order (the registry's registration order). */
  readonly entries: readonly DirectoryEntry[];
  /** Offset of each entry's data in the snapshot, parallel to `entries`. */
  readonly offsets: readonly number[];
  /** Byte offset where the payload starts: the 32-byte header plus the directory. */
  readonly payloadOffset: number;
  /** Payload size in bytes (header bytes 24–27), checked to equal the sum of the entries' sizes. */
  readonly payloadBytes: number;
  /** Header, directory and payload: the exact size of a valid snapshot. */
  readonly totalBytes: number;
}

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** The bytes of a directory for these entries (cold path, run at `freeze()`). */
export function encodeDirectory(entries: readonly DirectoryEntry[]): { bytes: Uint8Array; recordStarts: number[] } {
  const parts: Uint8Array[] = [];
  const recordStarts: number[] = [];
  let size = 0;
  for (const e of entries) {
    const m = utf8.encode(e.module);
    const n = utf8.encode(e.name);
    const rec = new Uint8Array(2 + m.length + 4 + 2 + n.length + 1 + 1 + 4);
    const dv = new DataView(rec.buffer);
    let o = 0;
    dv.setUint16(o, m.length, true);
    rec.set(m, o + 2);
    o += 2 + m.length;
    dv.setUint32(o, e.instance, true);
    o += 4;
    dv.setUint16(o, n.length, true);
    rec.set(n, o + 2);
    o += 2 + n.length;
    rec[o++] = TYPE_CODES[e.type];
    rec[o++] = e.nvram ? 1 : 0;
    dv.setUint32(o, e.count, true);
    recordStarts.push(size);
    parts.push(rec);
    size += rec.length;
  }
  const bytes = new Uint8Array(size);
  let o = 0;
  for (const p of parts) {
    bytes.set(p, o);
    o += p.length;
  }
  return { bytes, recordStarts };
}

/** The header and directory of a snapshot of these entries, with the payload size it announces. */
export function encodePrefix(
  directory: Uint8Array,
  entryCount: number,
  payloadBytes: number,
  flags: number,
): { prefix: Uint8Array; layoutHash: bigint } {
  const layoutHash = hash64(directory);
  const prefix = new Uint8Array(HEADER_BYTES + directory.length);
  const dv = new DataView(prefix.buffer);
  dv.setUint32(0, SNAPSHOT_MAGIC, true);
  dv.setUint16(4, SNAPSHOT_VERSION, true);
  dv.setUint16(6, flags, true);
  dv.setUint32(8, entryCount, true);
  dv.setUint32(12, directory.length, true);
  dv.setBigUint64(16, layoutHash, true);
  dv.setUint32(24, payloadBytes, true);
  dv.setUint32(28, 0, true);
  prefix.set(directory, HEADER_BYTES);
  return { prefix, layoutHash };
}

function u16(b: Uint8Array, o: number): number {
  return b[o]! | (b[o + 1]! << 8);
}

function u32(b: Uint8Array, o: number): number {
  return (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
}

/** Reads the little-endian u64 at `o` (cold path). */
export function readU64(b: Uint8Array, o: number): bigint {
  return (BigInt(u32(b, o + 4)) << 32n) | BigInt(u32(b, o));
}

/** Reads the u32 at `o`, little-endian. */
export function readU32(b: Uint8Array, o: number): number {
  return u32(b, o);
}

/**
 * Parses and checks the header and directory of any snapshot or NVRAM blob, without a registry:
 * magic, version, reserved field, directory structure, layout hash (which must be the hash of
 * the directory bytes), payload size and total size. Allocates the parsed directory; bounded by
 * the input's size. Throws only {@link SnapshotError}.
 */
export function describeSnapshot(bytes: Uint8Array): SnapshotInfo {
  if (bytes.length < HEADER_BYTES)
    throw new SnapshotError('truncated', bytes.length, 'snapshot shorter than its header');
  if (u32(bytes, 0) !== SNAPSHOT_MAGIC) throw new SnapshotError('bad-magic', 0, 'not a netplay snapshot (magic NPST)');
  const version = u16(bytes, 4);
  if (version !== SNAPSHOT_VERSION)
    throw new SnapshotError('bad-version', 4, `snapshot format version ${version} is not supported`);
  const flags = u16(bytes, 6);
  if ((flags & ~FLAG_NVRAM) !== 0)
    throw new SnapshotError('bad-flags', 6, `unknown snapshot flags 0x${flags.toString(16)}`);
  if (u32(bytes, 28) !== 0) throw new SnapshotError('bad-flags', 28, 'reserved header field is not zero');
  const entryCount = u32(bytes, 8);
  const dirBytes = u32(bytes, 12);
  const payloadBytes = u32(bytes, 24);
  const dirEnd = HEADER_BYTES + dirBytes;
  if (dirEnd > bytes.length)
    throw new SnapshotError('truncated', bytes.length, `directory of ${dirBytes} bytes does not fit`);
  // A record is at least 14 bytes: check the count against the size before building anything.
  if (entryCount * 14 > dirBytes)
    throw new SnapshotError('bad-entry-count', 8, `${entryCount} entries cannot fit a ${dirBytes}-byte directory`);
  const layoutHash = readU64(bytes, 16);
  if (hash64(bytes, HEADER_BYTES, dirEnd) !== layoutHash)
    throw new SnapshotError('bad-layout', 16, 'layout hash does not match the directory');
  const entries: DirectoryEntry[] = [];
  const offsets: number[] = [];
  let o = HEADER_BYTES;
  let payload = 0;
  const need = (n: number, what: string) => {
    if (o + n > dirEnd) throw new SnapshotError('bad-directory', o, `directory ends inside ${what}`);
  };
  const text = (len: number, what: string): string => {
    need(len, what);
    try {
      return utf8Strict.decode(bytes.subarray(o, o + len));
    } catch {
      throw new SnapshotError('bad-directory', o, `${what} is not UTF-8`);
    } finally {
      o += len;
    }
  };
  for (let i = 0; i < entryCount; i++) {
    need(2, 'a module name length');
    const mLen = u16(bytes, o);
    o += 2;
    const module = text(mLen, 'a module name');
    need(4, 'an instance');
    const instance = u32(bytes, o);
    o += 4;
    need(2, 'a data name length');
    const nLen = u16(bytes, o);
    o += 2;
    const name = text(nLen, 'a data name');
    need(6, 'an entry type and count');
    const type = TYPES_BY_CODE[bytes[o]!];
    if (type === undefined)
      throw new SnapshotError('bad-directory', o, `unknown type code ${bytes[o]} for ${module}[${instance}].${name}`);
    const eflags = bytes[o + 1]!;
    if (eflags > 1) throw new SnapshotError('bad-directory', o + 1, `unknown entry flags ${eflags}`);
    const count = u32(bytes, o + 2);
    o += 6;
    entries.push({ module, instance, name, type, count, nvram: eflags === 1 });
    offsets.push(dirEnd + payload);
    payload += count * TYPE_SIZES[type];
  }
  if (o !== dirEnd)
    throw new SnapshotError(
      'bad-directory',
      o,
      `${dirEnd - o} bytes left in the directory after ${entryCount} entries`,
    );
  if (payload !== payloadBytes)
    throw new SnapshotError(
      'bad-payload-size',
      24,
      `payload size ${payloadBytes} but the directory describes ${payload}`,
    );
  const totalBytes = dirEnd + payloadBytes;
  if (bytes.length < totalBytes)
    throw new SnapshotError('truncated', bytes.length, `snapshot of ${totalBytes} bytes cut at ${bytes.length}`);
  if (bytes.length > totalBytes)
    throw new SnapshotError('trailing-bytes', totalBytes, `${bytes.length - totalBytes} bytes after the payload`);
  return {
    version,
    nvram: (flags & FLAG_NVRAM) !== 0,
    layoutHash,
    entries,
    offsets,
    payloadOffset: dirEnd,
    payloadBytes,
    totalBytes,
  };
}

/**
 * @netplay/state: the savestate registry, snapshots, deltas, checksums and the `Core` contract.
 * @packageDocumentation
 */
export {
  type InflateBounded,
  inflateBounded,
  MAX_INFLATE_RATIO,
  maxInflatedBytes,
  pakoInflateBounded,
} from './bounded-inflate.js';
export type { Core } from './core.js';
export {
  compressionStreamDeflate,
  type DeflateAsync,
  type DeflateSync,
  defaultDeflateAsync,
  hasCompressionStream,
  pakoDeflate,
} from './deflate.js';
export {
  type ApplyDeltaOptions,
  applyDelta,
  DEFAULT_PAGE_SIZE,
  DELTA_HEADER_BYTES,
  DELTA_MAGIC,
  DELTA_VERSION,
  DELTA_VERSION_PAGED,
  type DeltaInfo,
  type DeltaKind,
  type DeltaOptions,
  describeDelta,
  MAX_DELTA_TARGET_BYTES,
  type PageDeltaAsyncOptions,
  type PageDeltaOptions,
  pageDelta,
  pageDeltaAsync,
} from './delta.js';
export {
  type BasePageDeltaAsyncOptions,
  type BasePageDeltaOptions,
  DeltaBase,
  type DeltaBaseOptions,
} from './delta-base.js';
export type { RangeCompare } from './delta-body.js';
export { LITTLE_ENDIAN_HOST } from './endian.js';
export {
  DeltaError,
  type DeltaErrorCode,
  SnapshotError,
  type SnapshotErrorCode,
  StateError,
  type StateErrorCode,
} from './errors.js';
export { hash64, murmur3x86_128Into } from './hash64.js';
export { type DirtyPageSet, PageTracker } from './page-tracker.js';
export { pagedHash64, pageHashesInto } from './paged-hash.js';
export { type LenientLoadReport, StateRegistry } from './registry.js';
export { SnapshotRing, type StateLoader, type StateSaver } from './ring.js';
export {
  type DirectoryEntry,
  describeSnapshot,
  FLAG_NVRAM,
  HEADER_BYTES,
  SNAPSHOT_MAGIC,
  SNAPSHOT_VERSION,
  type SnapshotInfo,
} from './snapshot-format.js';
export {
  type BigIntAccessor,
  type BigIntStateType,
  type EntryInfo,
  formatSignature,
  type MemoryRegion,
  type NumberAccessor,
  type NumberStateType,
  type RegisterOptions,
  type ScalarAccessor,
  type Signature,
  type StateArray,
  type StateType,
  type StateValue,
} from './types.js';
export { type XorDeltaAsyncOptions, type XorDeltaOptions, xorDelta, xorDeltaAsync } from './xor-delta.js';

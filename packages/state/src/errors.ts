/** Why a registry operation was refused. */
export type StateErrorCode =
  /** The signature (module, instance, name) is already registered. */
  | 'duplicate-signature'
  /** Registration (or a scope change) after `freeze()`: the init window is closed. */
  | 'frozen'
  /** Saving or loading before `freeze()`: the layout is not fixed yet. */
  | 'not-frozen'
  /** `endScope()` without a matching `beginScope()`. */
  | 'no-scope'
  /** A registration argument is not valid (empty name, bad instance, unsupported value, empty array). */
  | 'bad-argument'
  /** A registered array or memory region no longer has its registered size (detached or shrunk buffer). */
  | 'size-changed'
  /** The target buffer is smaller than the snapshot. */
  | 'buffer-too-small'
  /** The snapshot would exceed the format's 4 GiB limit. */
  | 'too-large'
  /** Multi-byte entries on a big-endian host (not supported, see the README). */
  | 'big-endian-host';

/** Thrown by {@link StateRegistry} when it is used against its rules. The message names the signature involved. */
export class StateError extends Error {
  /** Always `'StateError'`; tell kinds apart by `code`. */
  override readonly name = 'StateError';
  constructor(
    /** What kind of problem it is. */
    readonly code: StateErrorCode,
    message: string,
  ) {
    super(`${message} (${code})`);
  }
}

/** Why snapshot or NVRAM bytes were rejected. */
export type SnapshotErrorCode =
  /** The bytes end before the header, directory or payload does. */
  | 'truncated'
  /** The first four bytes are not the snapshot magic `NPST`. */
  | 'bad-magic'
  /** The format version is not one this library reads. */
  | 'bad-version'
  /** The flags (snapshot vs NVRAM blob) or the reserved field do not match. */
  | 'bad-flags'
  /** The entry count differs from the registry's. */
  | 'bad-entry-count'
  /** The directory size differs from the registry's (strict) or the directory is malformed (lenient). */
  | 'bad-directory'
  /** The layout hash differs from the registry's (strict) or from the hash of the directory (lenient). */
  | 'bad-layout'
  /** The payload size differs from what the directory announces. */
  | 'bad-payload-size'
  /** Bytes follow the payload. */
  | 'trailing-bytes';

/**
 * Thrown by `load`, `loadLenient` and `loadNvram` on bytes that are not a valid snapshot for this
 * registry. Nothing has been written when it is thrown. `offset` is the byte where the first
 * problem was found.
 */
export class SnapshotError extends Error {
  /** Always `'SnapshotError'`; tell kinds apart by `code`, locate the fault by `offset`. */
  override readonly name = 'SnapshotError';
  constructor(
    /** What kind of problem it is. */
    readonly code: SnapshotErrorCode,
    /** Offset in the snapshot of the first problem. */
    readonly offset: number,
    message: string,
  ) {
    super(`${message} (${code} at byte ${offset})`);
  }
}

/** Why a delta could not be applied. */
export type DeltaErrorCode =
  /** The bytes are not a well-formed delta (header, sizes, page list or compressed stream). */
  | 'corrupt'
  /** The delta was made for another layout. */
  | 'wrong-layout'
  /** The base given is not the one the delta was made from (size or hash differ). */
  | 'wrong-base'
  /** An option given to `xorDelta`/`pageDelta` is out of range (deflate level, page size). */
  | 'bad-argument'
  /** A size exceeds what the format or the caller's limit allows. */
  | 'too-large';

/** The one error delta decoding throws, on any input. */
export class DeltaError extends Error {
  /** Always `'DeltaError'`; tell kinds apart by `code`. */
  override readonly name = 'DeltaError';
  constructor(
    /** What kind of problem it is. */
    readonly code: DeltaErrorCode,
    message: string,
  ) {
    super(`${message} (${code})`);
  }
}

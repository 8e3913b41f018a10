/** What went wrong in a {@link LibretroError}. */
export type LibretroErrorCode =
  /** The core file does not exist or cannot be read. */
  | 'missing-core'
  /** The file is not a shared library, or lacks the `retro_*` exports of a libretro core. */
  | 'not-libretro'
  /** The core speaks another libretro API version than 1. */
  | 'api-version'
  /** The content file does not exist or cannot be read. */
  | 'missing-content'
  /** The core refused the content (`retro_load_game` returned false): wrong system or a bad ROM. */
  | 'content-rejected'
  /** The core asked for an environment call this headless frontend refuses, and needs it. */
  | 'unsupported-environment'
  /** A state shorter than its header says, or shorter than a header. */
  | 'truncated-state'
  /** Bytes that are not a state written by `LibretroCore.saveInto`. */
  | 'not-a-state'
  /** A state written by another core (library name or version differ). */
  | 'foreign-state'
  /** A state written by the same core with other content. */
  | 'other-content'
  /** The core refused the state (`retro_unserialize` returned false); the core is unchanged. */
  | 'state-rejected'
  /** The core's state grew past the capacity fixed at load (`stateBytes`). */
  | 'state-too-large'
  /** The core cannot serialize (`retro_serialize_size` is 0 or `retro_serialize` failed). */
  | 'no-savestates'
  /** A port number or an input length is out of range. */
  | 'bad-input'
  /** A target buffer is too small. */
  | 'buffer-too-small'
  /** An option of `LibretroCore.load` is malformed, unknown to the core or not one of its values. */
  | 'bad-option'
  /** The core was used after `close()`. */
  | 'closed'
  /** The core crashed (or hung) the child process of `probeLibretroCore`. */
  | 'core-crashed';

/** The error every @netplay/core-libretro API throws; `file` names the core, content or state concerned. */
export class LibretroError extends Error {
  /** Always `'LibretroError'`; tell kinds apart by `code`. */
  override readonly name = 'LibretroError';
  /** Machine-readable reason. */
  readonly code: LibretroErrorCode;
  /** The file (core or content path) the error is about, when there is one. */
  readonly file: string | undefined;

  constructor(code: LibretroErrorCode, message: string, file?: string) {
    super(`${code}: ${message}`);
    this.code = code;
    this.file = file;
  }
}

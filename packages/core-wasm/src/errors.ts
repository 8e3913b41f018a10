/** What went wrong in a {@link WasmCoreError}. */
export type WasmCoreErrorCode =
  /** The module lacks an export the ABI requires, or an export has the wrong kind. */
  | 'missing-export'
  /** The module reports an ABI version this host does not speak. */
  | 'abi-version'
  /** The content (ROM) is larger than the core accepts, or the core refused it. */
  | 'content-rejected'
  /** A port number or an input length is out of range. */
  | 'bad-input'
  /** A buffer passed in is too small. */
  | 'buffer-too-small'
  /** An option is out of range. */
  | 'bad-option';

/** The error every @netplay/core-wasm API throws for bad modules, inputs, states and options. */
export class WasmCoreError extends Error {
  /** Always `'WasmCoreError'`; tell kinds apart by `code`. */
  override readonly name = 'WasmCoreError';
  /** Machine-readable reason. */
  readonly code: WasmCoreErrorCode;

  constructor(code: WasmCoreErrorCode, message: string) {
    super(`${code}: ${message}`);
    this.code = code;
  }
}

/**
 * @netplay/core-wasm: not implemented yet; see the package README.
 * @packageDocumentation
 */
export {};

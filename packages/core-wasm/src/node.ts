/**
 * Node conveniences for @netplay/core-wasm (`@netplay/core-wasm/node`): loading a core module
 * from a file. The main entry point uses no Node APIs; this one does.
 * @packageDocumentation
 */
import { readFile } from 'node:fs/promises';
import { WasmCore, type WasmCoreOptions } from './wasm-core.js';

/** Reads a `.wasm` file and instantiates it as a {@link WasmCore}. */
export async function loadWasmCoreFile(path: string | URL, options: WasmCoreOptions = {}): Promise<WasmCore> {
  const bytes = await readFile(path);
  return WasmCore.instantiate(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), options);
}

/**
 * @netplay/core-wasm: a deterministic CHIP-8 / SUPER-CHIP / XO-CHIP core in WebAssembly, and
 * `WasmCore`, the host for any WebAssembly core that meets the netplay core ABI.
 * @packageDocumentation
 */
export {
  ABI_VERSION,
  AudioFormat,
  type BoundAbi,
  bindAbi,
  type CoreAbi,
  FramebufferFormat,
  readCString,
  type StateRegionAbi,
} from './abi.js';
export { decodeBase64 } from './base64.js';
export { Chip8Core, type Chip8CoreOptions, chip8Module, chip8WasmBytes } from './chip8.js';
export {
  CHIP8_PLATFORM_NAMES,
  type Chip8Config,
  Chip8Platform,
  Chip8Quirk,
  type Chip8QuirkFlag,
  checkConfig,
  DEFAULT_SEED,
  IDENTITY_KEYS,
  PLATFORM_QUIRKS,
  PLATFORM_TICKRATE,
  platformConfig,
} from './chip8-config.js';
export { WasmCoreError, type WasmCoreErrorCode } from './errors.js';
export { type Framebuffer, packFramebuffer } from './framebuffer.js';
export { DEFAULT_PALETTE, framebufferToRgba, framebufferToText, type Rgba, type TextMode } from './render.js';
export {
  type DatabasePlatform,
  type DatabaseQuirks,
  type DatabaseRom,
  lookupRom,
  type RomDatabase,
  romDatabase,
  romSha1,
} from './rom-database.js';
export {
  DEFAULT_SETUP,
  MULTIPLAYER_KEYS,
  PadButton,
  quirksFromDatabase,
  type RomSetup,
  type RomSetupOptions,
  resolveRomSetup,
} from './rom-setup.js';
export { type StateMode, type StateRegionInfo, WasmCore, type WasmCoreOptions, type WasmSource } from './wasm-core.js';

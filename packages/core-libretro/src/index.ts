/**
 * @netplay/core-libretro: real libretro emulator cores (`*_libretro.so`: Nestopia, Gambatte,
 * mGBA...) as netplay `Core`s, driven through FFI (koffi). Node only.
 * @packageDocumentation
 */
export {
  DEVICE_JOYPAD,
  Env,
  MEMORY_SAVE_RAM,
  MEMORY_SYSTEM_RAM,
  SavestateContextValue,
  SerializationQuirk,
} from './abi.js';
export { crc32 } from './crc32.js';
export { LibretroError, type LibretroErrorCode } from './errors.js';
export { LibretroCore, type LibretroCoreInfo } from './libretro-core.js';
export {
  type AudioSink,
  type CoreVariable,
  type LibretroCoreOptions,
  type LogSink,
  type PixelFormat,
  parseVariableDeclaration,
  type SavestateContext,
  type VideoFrame,
  type VideoSink,
  validateOptions,
} from './options.js';
export { type ProbeOptions, type ProbeReport, probeLibretroCore } from './probe.js';
export { DEBIAN_LIBRETRO_DIR, resolveLibretroCore } from './resolve.js';
export { encodeRetroPad, RETROPAD_INPUT_BYTES, RetroPad } from './retropad.js';
export { STATE_HEADER_BYTES } from './state-header.js';

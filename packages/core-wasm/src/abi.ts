import { WasmCoreError } from './errors.js';

/** The ABI version this host implements (`np_abi_version()` must return it). */
export const ABI_VERSION = 1;

/** Framebuffer formats a core may report from `np_fb_format()`. */
export const FramebufferFormat = {
  /** One byte per pixel: a palette index (the CHIP-8 core stores the plane bits, 0..3). */
  Index8: 0,
  /** Four bytes per pixel: R, G, B, A. */
  Rgba8888: 1,
} as const;
/** A value of {@link FramebufferFormat}. */
export type FramebufferFormat = (typeof FramebufferFormat)[keyof typeof FramebufferFormat];

/** Audio sample formats a core may report; the ABI has one: signed 16-bit little-endian mono. */
export const AudioFormat = {
  /** Signed 16-bit little-endian samples, one channel, at the core's `np_audio_rate()` Hz. */
  S16Mono: 0,
} as const;

/** The functions every netplay wasm core exports (see the README's ABI section). */
export interface CoreAbi {
  /** The core's linear memory (pointers below are offsets into it). */
  readonly memory: WebAssembly.Memory;
  /** Must return {@link ABI_VERSION}. */
  np_abi_version(): number;
  /** Number of input ports (players), 1..255. */
  np_ports(): number;
  /** Bytes of one port's input per frame, 0..4. */
  np_input_bytes(): number;
  /** Where the host may write `len` bytes of content (a ROM); 0 when too large. */
  np_content_ptr(len: number): number;
  /** Loads the `len` bytes written at `np_content_ptr` and resets; 0 = ok, else refused. */
  np_load(len: number): number;
  /** Power-on state with the loaded content; clears the staged inputs. */
  np_reset(): void;
  /** Stages a port's input for the next frame: its bytes little-endian in `value`. */
  np_set_input(port: number, value: number): void;
  /** Runs exactly one frame with the staged inputs. */
  np_run_frame(): void;
  /** The framebuffer (the core may compose it on this call). */
  np_fb_ptr(): number;
  /** Framebuffer width in pixels (may change between frames). */
  np_fb_width(): number;
  /** Framebuffer height in pixels (may change between frames). */
  np_fb_height(): number;
  /** A {@link FramebufferFormat}. */
  np_fb_format(): number;
  /** The audio of the last frame: signed 16-bit mono samples (2-aligned). */
  np_audio_ptr(): number;
  /** Number of samples of the last frame. */
  np_audio_len(): number;
  /** Sample rate in Hz. */
  np_audio_rate(): number;
}

/** The optional state-region exports; a core exports all four or none. */
export interface StateRegionAbi {
  /** Number of state regions. */
  np_state_regions(): number;
  /** Start of region `index`. */
  np_state_region_ptr(index: number): number;
  /** Length of region `index` in bytes (> 0). */
  np_state_region_len(index: number): number;
  /** Name of region `index`: NUL-terminated ASCII, unique. */
  np_state_region_name(index: number): number;
}

const REQUIRED_FUNCTIONS = [
  'np_abi_version',
  'np_ports',
  'np_input_bytes',
  'np_content_ptr',
  'np_load',
  'np_reset',
  'np_set_input',
  'np_run_frame',
  'np_fb_ptr',
  'np_fb_width',
  'np_fb_height',
  'np_fb_format',
  'np_audio_ptr',
  'np_audio_len',
  'np_audio_rate',
] as const;

const REGION_FUNCTIONS = [
  'np_state_regions',
  'np_state_region_ptr',
  'np_state_region_len',
  'np_state_region_name',
] as const;

/** A module's exports checked against the ABI. */
export interface BoundAbi {
  /** The required functions and memory, every one checked present and callable. */
  readonly core: CoreAbi;
  /** Present when the module exports the state-region functions. */
  readonly regions: StateRegionAbi | undefined;
  /** Every exported mutable global, by export name (for the whole-memory fallback). */
  readonly mutableGlobals: ReadonlyArray<readonly [string, WebAssembly.Global]>;
}

function isMutableGlobal(g: WebAssembly.Global): boolean {
  try {
    const value = g.value as unknown;
    g.value = value;
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks an instance's exports against the ABI and returns typed bindings.
 * Throws {@link WasmCoreError} `missing-export` or `abi-version`.
 */
export function bindAbi(exports: WebAssembly.Exports): BoundAbi {
  const memory = exports.memory;
  if (!(memory instanceof WebAssembly.Memory)) {
    throw new WasmCoreError('missing-export', 'the module must export its memory as "memory"');
  }
  for (const name of REQUIRED_FUNCTIONS) {
    if (typeof exports[name] !== 'function') {
      throw new WasmCoreError('missing-export', `the module does not export function ${name}`);
    }
  }
  const core = exports as unknown as CoreAbi;
  const version = core.np_abi_version();
  if (version !== ABI_VERSION) {
    throw new WasmCoreError('abi-version', `core speaks ABI ${version}, host speaks ${ABI_VERSION}`);
  }
  const present = REGION_FUNCTIONS.filter((name) => typeof exports[name] === 'function');
  if (present.length !== 0 && present.length !== REGION_FUNCTIONS.length) {
    throw new WasmCoreError('missing-export', 'state-region exports must be all present or all absent');
  }
  const regions = present.length > 0 ? (exports as unknown as StateRegionAbi) : undefined;
  const mutableGlobals: Array<readonly [string, WebAssembly.Global]> = [];
  for (const name of Object.keys(exports).sort()) {
    const g = exports[name];
    if (g instanceof WebAssembly.Global && isMutableGlobal(g)) mutableGlobals.push([name, g]);
  }
  return { core, regions, mutableGlobals };
}

/** Reads a NUL-terminated ASCII string (at most `max` bytes) from linear memory. */
export function readCString(memory: WebAssembly.Memory, ptr: number, max = 64): string {
  const bytes = new Uint8Array(memory.buffer);
  let s = '';
  for (let i = 0; i < max && ptr + i < bytes.length; i++) {
    const c = bytes[ptr + i] ?? 0;
    if (c === 0) break;
    s += String.fromCharCode(c);
  }
  return s;
}

import { type Core, StateRegistry } from '@netplay/state';
import { type BoundAbi, bindAbi, readCString } from './abi.js';
import { WasmCoreError } from './errors.js';
import type { Framebuffer } from './framebuffer.js';

/** How a {@link WasmCore} snapshots the module's state. */
export type StateMode =
  /** The core's state regions when it exports them, else the whole memory and mutable globals. */
  | 'auto'
  /** The core's state regions; throws `missing-export` when it has none. */
  | 'regions'
  /** The whole linear memory and every exported mutable global. */
  | 'memory';

/** Options of {@link WasmCore}. */
export interface WasmCoreOptions {
  /** How to snapshot the state (default `auto`). */
  readonly state?: StateMode;
  /** Content (a ROM) to load right away. */
  readonly content?: Uint8Array;
  /**
   * How many ports to expose as `Core.ports` (1..`np_ports()`, default all): a two-player session
   * on a four-port core sets 2, and the other ports stay released.
   */
  readonly ports?: number;
  /** The module name state entries are registered under (default `core`). */
  readonly stateModule?: string;
  /**
   * Imports for {@link WasmCore.instantiate} (default none). Whatever a core imports must be
   * deterministic: no clocks, no randomness, no host state.
   */
  readonly imports?: WebAssembly.Imports;
}

/** A state region as the core reported it. */
export interface StateRegionInfo {
  /** The region's name (`np_state_region_name`): unique ASCII, the state entry's name in the registry. */
  readonly name: string;
  /** Byte offset of the region's start in the core's linear memory (`np_state_region_ptr`). */
  readonly ptr: number;
  /** The region's length in bytes, > 0 (`np_state_region_len`). */
  readonly len: number;
}

/** Anything `WebAssembly.instantiate` accepts as a module source. */
export type WasmSource = BufferSource | WebAssembly.Module;

/**
 * The netplay host for any WebAssembly core that meets the ABI (see the README): it implements
 * the `Core` contract of @netplay/state on top of the module's exports. Savestates, checksums
 * and deltas come from a {@link StateRegistry} holding the core's state regions (or, for a core
 * without regions, its whole linear memory and mutable globals) plus the frame counter.
 *
 * Uses only WebAssembly and typed arrays: runs unchanged in Node and browsers.
 */
export class WasmCore implements Core {
  /** The checked exports of the module. */
  readonly abi: BoundAbi;
  readonly ports: number;
  readonly inputBytes: number;
  private frameCount = 0;
  private registryValue: StateRegistry;
  private regionList: StateRegionInfo[] = [];
  private readonly stateMode: StateMode;
  private readonly stateModule: string;
  private fbCache: { ptr: number; buffer: ArrayBufferLike; fb: Framebuffer } | undefined;
  private audioCache: Int16Array | undefined;

  /**
   * Compiles and instantiates a module, then wraps it.
   * @throws WasmCoreError `missing-export` / `abi-version` when the module does not meet the ABI.
   */
  static async instantiate(source: WasmSource, options: WasmCoreOptions = {}): Promise<WasmCore> {
    const module = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(source);
    const instance = await WebAssembly.instantiate(module, options.imports ?? {});
    return new WasmCore(instance, options);
  }

  /** Wraps an instance; see {@link WasmCore.instantiate}. */
  constructor(instance: WebAssembly.Instance, options: WasmCoreOptions = {}) {
    this.abi = bindAbi(instance.exports);
    this.stateMode = options.state ?? 'auto';
    this.stateModule = options.stateModule ?? 'core';
    if (this.stateMode === 'regions' && this.abi.regions === undefined) {
      throw new WasmCoreError('missing-export', 'state mode "regions" needs the np_state_region* exports');
    }
    const c = this.abi.core;
    const corePorts = c.np_ports();
    this.inputBytes = c.np_input_bytes();
    if (!Number.isInteger(corePorts) || corePorts < 1 || corePorts > 255) {
      throw new WasmCoreError('missing-export', `np_ports() returned ${corePorts}`);
    }
    const ports = options.ports ?? corePorts;
    if (!Number.isInteger(ports) || ports < 1 || ports > corePorts) {
      throw new WasmCoreError('bad-option', `ports must be in 1..${corePorts}, not ${ports}`);
    }
    this.ports = ports;
    if (!Number.isInteger(this.inputBytes) || this.inputBytes < 0 || this.inputBytes > 4) {
      throw new WasmCoreError('missing-export', `np_input_bytes() must be 0..4, not ${this.inputBytes}`);
    }
    this.registryValue = this.buildRegistry();
    if (options.content !== undefined) this.loadContent(options.content);
  }

  /** The frame counter (part of the savestate). */
  get frame(): number {
    return this.frameCount;
  }

  /** The registry the savestate comes from (frozen); use it for deltas or NVRAM. */
  get registry(): StateRegistry {
    return this.registryValue;
  }

  /** The state regions the core reported, empty in memory mode. */
  get regions(): readonly StateRegionInfo[] {
    return this.regionList;
  }

  /** True when the state is the whole memory plus mutable globals. */
  get wholeMemory(): boolean {
    return this.stateMode === 'memory' || (this.stateMode === 'auto' && this.abi.regions === undefined);
  }

  get stateBytes(): number {
    return this.registryValue.snapshotBytes;
  }

  /** The module's linear memory. */
  get memory(): WebAssembly.Memory {
    return this.abi.core.memory;
  }

  /**
   * Loads content (a ROM) into the core and resets it to frame 0.
   * @throws WasmCoreError `content-rejected` when the core refuses it.
   */
  loadContent(content: Uint8Array): void {
    const c = this.abi.core;
    const ptr = c.np_content_ptr(content.length);
    if (ptr === 0) throw new WasmCoreError('content-rejected', `the core has no room for ${content.length} bytes`);
    const mem = new Uint8Array(c.memory.buffer);
    if (ptr + content.length > mem.length) throw new WasmCoreError('content-rejected', 'content pointer out of memory');
    mem.set(content, ptr);
    const status = c.np_load(content.length);
    if (status !== 0) throw new WasmCoreError('content-rejected', `np_load returned ${status}`);
    this.frameCount = 0;
    this.rebuildState();
  }

  /**
   * Re-reads the state regions and rebuilds the registry. Call it after changing anything that
   * changes the regions' sizes (a core-specific configuration); `loadContent` calls it.
   */
  rebuildState(): void {
    this.registryValue = this.buildRegistry();
  }

  setInput(port: number, input: Uint8Array): void {
    if (!Number.isInteger(port) || port < 0 || port >= this.ports) {
      throw new WasmCoreError('bad-input', `port ${port} is not in 0..${this.ports - 1}`);
    }
    if (input.length !== this.inputBytes) {
      throw new WasmCoreError('bad-input', `input must be ${this.inputBytes} bytes, got ${input.length}`);
    }
    let value = 0;
    for (let i = input.length - 1; i >= 0; i--) value = (value << 8) | (input[i] ?? 0);
    this.abi.core.np_set_input(port, value | 0);
  }

  /** Sets a port's input from a number (the input bytes little-endian), without a byte buffer. */
  setInputValue(port: number, value: number): void {
    if (!Number.isInteger(port) || port < 0 || port >= this.ports) {
      throw new WasmCoreError('bad-input', `port ${port} is not in 0..${this.ports - 1}`);
    }
    this.abi.core.np_set_input(port, value | 0);
  }

  advance(): void {
    this.abi.core.np_run_frame();
    this.frameCount++;
  }

  saveInto(target: Uint8Array): number {
    if (target.length < this.stateBytes) {
      throw new WasmCoreError('buffer-too-small', `state needs ${this.stateBytes} bytes, got ${target.length}`);
    }
    return this.registryValue.saveInto(target);
  }

  /** Restores a state written by `saveInto`. Throws the registry's `SnapshotError` on bad bytes. */
  load(state: Uint8Array): void {
    this.registryValue.load(state);
  }

  /** A new savestate. */
  save(): Uint8Array {
    const out = new Uint8Array(this.stateBytes);
    this.saveInto(out);
    return out;
  }

  checksum(): bigint {
    return this.registryValue.checksum();
  }

  reset(): void {
    this.abi.core.np_reset();
    this.frameCount = 0;
  }

  /**
   * The framebuffer: a view into the core's memory, valid until the core runs again. The same
   * object is returned while pointer, size, format and memory buffer stay the same, so calling
   * this every frame allocates nothing.
   */
  framebuffer(): Framebuffer {
    const c = this.abi.core;
    const ptr = c.np_fb_ptr();
    const width = c.np_fb_width();
    const height = c.np_fb_height();
    const format = c.np_fb_format();
    const buffer = c.memory.buffer;
    const last = this.fbCache;
    if (
      last !== undefined &&
      last.ptr === ptr &&
      last.fb.width === width &&
      last.fb.height === height &&
      last.fb.format === format &&
      last.buffer === buffer
    ) {
      return last.fb;
    }
    const size = width * height * (format === 1 ? 4 : 1);
    if (ptr < 0 || ptr + size > buffer.byteLength) {
      throw new WasmCoreError('missing-export', 'the framebuffer lies outside linear memory');
    }
    const fb: Framebuffer = { width, height, format, pixels: new Uint8Array(buffer, ptr, size) };
    this.fbCache = { ptr, buffer, fb };
    return fb;
  }

  /**
   * The last frame's audio: signed 16-bit mono samples, a view into the core's memory (cached
   * like {@link WasmCore.framebuffer}).
   */
  audio(): Int16Array {
    const c = this.abi.core;
    const ptr = c.np_audio_ptr();
    const len = c.np_audio_len();
    const buffer = c.memory.buffer;
    const last = this.audioCache;
    if (last !== undefined && last.byteOffset === ptr && last.length === len && last.buffer === buffer) return last;
    if (ptr < 0 || ptr % 2 !== 0 || ptr + len * 2 > buffer.byteLength) {
      throw new WasmCoreError('missing-export', 'the audio buffer lies outside linear memory or is unaligned');
    }
    this.audioCache = new Int16Array(buffer, ptr, len);
    return this.audioCache;
  }

  /** The audio sample rate in Hz. */
  get audioRate(): number {
    return this.abi.core.np_audio_rate();
  }

  private buildRegistry(): StateRegistry {
    const registry = new StateRegistry();
    const memory = this.abi.core.memory;
    const mod = this.stateModule;
    registry.register(mod, 0, 'frame', {
      type: 'u32',
      get: () => this.frameCount,
      set: (v: number) => {
        this.frameCount = v;
      },
    });
    const regions: StateRegionInfo[] = [];
    if (this.wholeMemory) {
      registry.register(mod, 0, 'memory', {
        buffer: () => memory.buffer,
        byteOffset: 0,
        count: memory.buffer.byteLength,
      });
      for (const [name, g] of this.abi.mutableGlobals) {
        if (typeof g.value === 'bigint') {
          registry.register(mod, 0, `global:${name}`, {
            type: 'i64',
            get: () => g.value as bigint,
            set: (v: bigint) => {
              g.value = v;
            },
          });
        } else {
          // f64 holds every i32, f32 and f64 value exactly.
          registry.register(mod, 0, `global:${name}`, {
            type: 'f64',
            get: () => g.value as number,
            set: (v: number) => {
              g.value = v;
            },
          });
        }
      }
    } else {
      const r = this.abi.regions;
      if (r === undefined) throw new WasmCoreError('missing-export', 'no state regions');
      const count = r.np_state_regions();
      const limit = memory.buffer.byteLength;
      for (let i = 0; i < count; i++) {
        const ptr = r.np_state_region_ptr(i);
        const len = r.np_state_region_len(i);
        const name = readCString(memory, r.np_state_region_name(i));
        if (name.length === 0 || ptr < 0 || len <= 0 || ptr + len > limit) {
          throw new WasmCoreError('missing-export', `state region ${i} (${name}) is invalid`);
        }
        regions.push({ name, ptr, len });
        registry.register(mod, 0, name, { buffer: () => memory.buffer, byteOffset: ptr, count: len });
      }
    }
    registry.freeze();
    this.regionList = regions;
    return registry;
  }
}

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Core, hash64 } from '@netplay/state';
import {
  DEVICE_ID_JOYPAD_MASK,
  DEVICE_JOYPAD,
  MEMORY_SAVE_RAM,
  MEMORY_SYSTEM_RAM,
  RETRO_API_VERSION,
  SavestateContextValue,
  SerializationQuirk,
} from './abi.js';
import { crc32 } from './crc32.js';
import { Environment } from './environment.js';
import { LibretroError } from './errors.js';
import {
  type AvInfo,
  bindLibretro,
  koffi,
  type LibretroExports,
  libretroProtos,
  NativeBuffer,
  nativeView,
  type Pointer,
  type SystemInfo,
} from './ffi.js';
import {
  type CoreVariable,
  checkCoreOptions,
  type LibretroCoreOptions,
  type PixelFormat,
  validateOptions,
} from './options.js';
import { PrivateCopy } from './private-copy.js';
import { RETROPAD_INPUT_BYTES } from './retropad.js';
import { checkStateHeader, HeaderFields, STATE_HEADER_BYTES, writeHeaderFields } from './state-header.js';

/** What the core says about itself and its content, read at load. */
export interface LibretroCoreInfo {
  /** The core's name (`retro_system_info.library_name`, e.g. `Nestopia`); RetroArch netplay compares it with the host's. */
  readonly libraryName: string;
  /** Exactly as the core reports it (Nestopia's ends in a space): RetroArch compares it byte for byte. */
  readonly libraryVersion: string;
  /** Content file extensions the core accepts, `|`-separated without dots (e.g. `nes|fds|unf`), as the core reports them. */
  readonly validExtensions: string;
  /** Whether the core loads content only from a path (it is then given the path of the private copy, not the bytes). */
  readonly needFullpath: boolean;
  /** Frames per second the core runs at. */
  readonly fps: number;
  /** Audio sample rate. */
  readonly sampleRate: number;
  /** Nominal frame width in pixels at load (`retro_game_geometry.base_width`; 0 if unreported); frames may differ. */
  readonly baseWidth: number;
  /** Nominal frame height in pixels at load (`retro_game_geometry.base_height`; 0 if unreported). */
  readonly baseHeight: number;
  /** Display aspect ratio (width / height) the core wants; 0 or less means use `baseWidth / baseHeight`, as libretro says. */
  readonly aspectRatio: number;
}

/**
 * A libretro core (`*_libretro.so`) loaded through FFI as a netplay {@link Core}: one RetroPad per
 * port (a 2-byte little-endian button mask), states through `retro_serialize`. Node only.
 *
 * States are a 24-byte header (core, content, frame counter, length) and the core's own bytes.
 * Checksum rule: `checksum()` hashes the state as last serialized after an advance, or the exact
 * bytes of the last `load()` when no frame ran since — a state is never re-serialized right after
 * a load, because some cores' `retro_serialize` right after `retro_unserialize` differs from the
 * bytes loaded while the machine is the same (the states agree again one frame later).
 * Likewise `saveInto` right after `load` returns the loaded bytes.
 *
 * Each instance runs a private copy of the library (cores keep their state in globals, one per
 * loaded path); `close()` deletes it.
 */
export class LibretroCore implements Core {
  /** The number of frames advanced since power-on, or the frame of the last loaded state. */
  frame = 0;
  readonly ports: number;
  readonly inputBytes = RETROPAD_INPUT_BYTES;
  /** Capacity of a state: header + the core's size at load + slack (`stateSlack`). */
  readonly stateBytes: number;
  /** The core's self-description and timing. */
  readonly info: LibretroCoreInfo;
  /** The core file as given (not the private copy). */
  readonly coreFile: string;
  /** The content path as given, or `contentName` for content given as bytes. */
  readonly contentFile: string;
  /** CRC-32 (zlib) of the content bytes: what RetroArch's netplay INFO command carries. */
  readonly contentCrc32: number;

  private exports: LibretroExports | null;
  private readonly copy: PrivateCopy;
  /** The private folder holding this instance's copy of the core (deleted by `close()`). */
  get privateDir(): string {
    return this.copy.dir;
  }
  private readonly env: Environment;
  private readonly callbacks: bigint[];
  private readonly inputs: Uint16Array;
  private readonly coreId: number;
  private readonly contentId: number;
  private readonly content: NativeBuffer | null;
  /** The current state, serialized (valid when `cacheValid`): header + payload. */
  private readonly cache: NativeBuffer;
  private readonly backup: NativeBuffer;
  private cacheLen = 0;
  private cacheValid = false;
  private readonly payloadCapacity: number;
  private powerOn: Uint8Array;
  private readonly cachePayload: Pointer;
  private readonly header = new HeaderFields();
  private readonly audioPair = new Int16Array(2);

  private constructor(o: LibretroCoreOptions) {
    validateOptions(o);
    this.coreFile = o.core;
    this.ports = o.ports ?? 2;
    this.inputs = new Uint16Array(this.ports);
    if (!existsSync(o.core)) throw new LibretroError('missing-core', `no core file at ${o.core}`, o.core);
    let contentBytes: Uint8Array;
    if (typeof o.content === 'string') {
      this.contentFile = o.content;
      try {
        contentBytes = new Uint8Array(readFileSync(o.content));
      } catch (e) {
        throw new LibretroError(
          'missing-content',
          `cannot read content ${o.content}: ${(e as Error).message}`,
          o.content,
        );
      }
    } else {
      this.contentFile = o.contentName ?? 'content.bin';
      contentBytes = o.content;
    }
    try {
      this.copy = new PrivateCopy(o.core);
    } catch (e) {
      throw new LibretroError('missing-core', `cannot copy core ${o.core}: ${(e as Error).message}`, o.core);
    }
    const cleanup: (() => void)[] = [() => this.copy.remove()];
    const fail = (e: unknown): unknown => {
      for (let i = cleanup.length - 1; i >= 0; i--) {
        try {
          cleanup[i]!();
        } catch {
          // keep cleaning up
        }
      }
      return e;
    };
    let lib: LibretroExports;
    try {
      lib = bindLibretro(this.copy.corePath, o.core);
    } catch (e) {
      throw fail(e);
    }
    this.exports = lib;
    cleanup.push(() => lib.lib.unload());
    const version = lib.retro_api_version();
    if (version !== RETRO_API_VERSION)
      throw fail(
        new LibretroError('api-version', `${o.core} speaks libretro API ${version}, not ${RETRO_API_VERSION}`, o.core),
      );

    const protos = libretroProtos();
    this.env = new Environment({
      ports: this.ports,
      systemDir: o.systemDir ?? this.copy.dir,
      saveDir: o.saveDir ?? this.copy.dir,
      corePath: this.copy.corePath,
      options: o.options ?? {},
      savestateContext: SavestateContextValue[o.savestateContext ?? 'rollback-netplay'],
      log: o.log,
    });
    cleanup.push(() => this.env.dispose());
    const env = this.env;
    const video = o.video;
    const audio = o.audio;
    const inputs = this.inputs;
    const ports = this.ports;
    const pair = this.audioPair;
    this.callbacks = [
      koffi.register((cmd: number, data: Pointer | null) => env.handle(cmd, data), koffi.pointer(protos.environment)),
      koffi.register((data: Pointer | null, width: number, height: number, pitch: number | bigint) => {
        if (video === undefined || data === null) return;
        const p = Number(pitch);
        video({ data: nativeView(data, p * height), width, height, pitch: p, format: env.pixelFormat });
      }, koffi.pointer(protos.videoRefresh)),
      koffi.register((left: number, right: number) => {
        if (audio === undefined) return;
        pair[0] = left;
        pair[1] = right;
        audio(pair, 1);
      }, koffi.pointer(protos.audioSample)),
      koffi.register((data: Pointer | null, frames: number | bigint) => {
        const n = Number(frames);
        if (audio !== undefined && data !== null && n > 0) audio(new Int16Array(koffi.view(data, n * 4)), n);
        return n;
      }, koffi.pointer(protos.audioSampleBatch)),
      koffi.register(() => {}, koffi.pointer(protos.inputPoll)),
      koffi.register((port: number, device: number, _index: number, id: number) => {
        if (port >= ports || (device & 0xff) !== DEVICE_JOYPAD) return 0;
        const mask = inputs[port]!;
        if (id === DEVICE_ID_JOYPAD_MASK) return (mask << 16) >> 16;
        return id < 16 ? (mask >> id) & 1 : 0;
      }, koffi.pointer(protos.inputState)),
    ];
    cleanup.push(() => {
      for (const cb of this.callbacks) koffi.unregister(cb);
    });
    const [envCb, videoCb, sampleCb, batchCb, pollCb, stateCb] = this.callbacks;
    lib.retro_set_environment(envCb);
    const sys: Partial<SystemInfo> = {};
    lib.retro_get_system_info(sys);
    lib.retro_set_video_refresh(videoCb);
    lib.retro_set_audio_sample(sampleCb);
    lib.retro_set_audio_sample_batch(batchCb);
    lib.retro_set_input_poll(pollCb);
    lib.retro_set_input_state(stateCb);
    lib.retro_init();
    cleanup.push(() => lib.retro_deinit());

    const libraryName = sys.library_name ?? '';
    const libraryVersion = sys.library_version ?? '';
    this.coreId = low32(hash64(new TextEncoder().encode(`${libraryName}\0${libraryVersion}`)));
    this.contentId = low32(hash64(contentBytes));
    this.contentCrc32 = crc32(contentBytes);

    // Content: a path for cores that need one (bytes given are written to the private folder).
    let path: string | null = typeof o.content === 'string' ? o.content : null;
    if (sys.need_fullpath && path === null) {
      path = join(this.copy.dir, this.contentFile);
      writeFileSync(path, contentBytes);
    }
    this.content = sys.need_fullpath ? null : new NativeBuffer(contentBytes.length);
    const content = this.content;
    if (content !== null) {
      content.bytes.set(contentBytes);
      cleanup.push(() => content.free());
    }
    const loaded = lib.retro_load_game({
      path: path ?? join(this.copy.dir, this.contentFile),
      data: content === null ? null : content.ptr,
      size: content === null ? 0 : content.size,
      meta: null,
    });
    if (!loaded) {
      if (env.wantsHardwareRender)
        throw fail(
          new LibretroError(
            'unsupported-environment',
            `${o.core} needs RETRO_ENVIRONMENT_SET_HW_RENDER (OpenGL/Vulkan), which this headless frontend refuses`,
            o.core,
          ),
        );
      throw fail(
        new LibretroError(
          'content-rejected',
          `${libraryName} (${o.core}) refused the content ${this.contentFile} (it accepts ${sys.valid_extensions ?? '?'}; environment calls refused: ${env.refused.join(', ') || 'none'})`,
          this.contentFile,
        ),
      );
    }
    cleanup.push(() => lib.retro_unload_game());
    try {
      checkCoreOptions(o.options ?? {}, env.variables, o.core);
    } catch (e) {
      throw fail(e);
    }
    for (let p = 0; p < this.ports; p++) lib.retro_set_controller_port_device(p, DEVICE_JOYPAD);
    const av: Partial<AvInfo> = {};
    lib.retro_get_system_av_info(av);
    this.info = {
      libraryName,
      libraryVersion,
      validExtensions: sys.valid_extensions ?? '',
      needFullpath: sys.need_fullpath === true,
      fps: av.fps ?? 60,
      sampleRate: av.sample_rate ?? 0,
      baseWidth: av.base_width ?? 0,
      baseHeight: av.base_height ?? 0,
      aspectRatio: av.aspect_ratio ?? 0,
    };

    if (o.nvram !== undefined) {
      const sram = this.nvram();
      if (o.nvram.length > sram.length)
        throw fail(
          new LibretroError(
            'bad-option',
            `nvram of ${o.nvram.length} B, the core's save RAM holds ${sram.length} B`,
            this.contentFile,
          ),
        );
      sram.set(o.nvram);
    }
    if (env.quirks & SerializationQuirk.MUST_INITIALIZE) lib.retro_run();

    const size = lib.retro_serialize_size();
    if (!(size > 0))
      throw fail(
        new LibretroError('no-savestates', `${libraryName} (${o.core}) reports a savestate size of 0`, o.core),
      );
    const slack = o.stateSlack ?? Math.max(1024, Math.ceil(size / 8));
    this.payloadCapacity = size + slack;
    this.stateBytes = STATE_HEADER_BYTES + this.payloadCapacity;
    this.cache = new NativeBuffer(this.stateBytes);
    this.backup = new NativeBuffer(this.stateBytes);
    this.cachePayload = this.cache.ptr + BigInt(STATE_HEADER_BYTES);
    cleanup.push(() => {
      this.cache.free();
      this.backup.free();
    });
    try {
      if (o.startState !== undefined) {
        this.load(o.startState);
        this.frame = 0;
        this.cacheValid = false;
      }
      this.ensureSerialized();
    } catch (e) {
      throw fail(e);
    }
    this.powerOn = this.cache.bytes.slice(0, this.cacheLen);
  }

  /**
   * Loads a core and its content and powers it on.
   * @throws LibretroError `missing-core`, `not-libretro`, `api-version`, `missing-content`,
   *   `content-rejected`, `unsupported-environment`, `bad-option`, `no-savestates`, or a state
   *   error for a bad `startState`
   */
  static load(options: LibretroCoreOptions): LibretroCore {
    return new LibretroCore(options);
  }

  private live(): LibretroExports {
    const e = this.exports;
    if (e === null) throw new LibretroError('closed', 'the core was closed', this.coreFile);
    return e;
  }

  /** Sets one port's RetroPad mask (2 bytes, little-endian) for the next `advance()`. */
  setInput(port: number, input: Uint8Array): void {
    if (!(port >= 0 && port < this.ports && Number.isInteger(port)))
      throw new LibretroError('bad-input', `port ${port} is not 0..${this.ports - 1}`);
    if (input.length !== RETROPAD_INPUT_BYTES)
      throw new LibretroError('bad-input', `input of ${input.length} bytes, expected ${RETROPAD_INPUT_BYTES}`);
    this.inputs[port] = input[0]! | (input[1]! << 8);
  }

  /** Sets one port's RetroPad mask from a number (bits of `RetroPad`). */
  setInputMask(port: number, mask: number): void {
    if (!(port >= 0 && port < this.ports && Number.isInteger(port)))
      throw new LibretroError('bad-input', `port ${port} is not 0..${this.ports - 1}`);
    this.inputs[port] = mask;
  }

  /** Runs one frame (`retro_run`) with the inputs set. */
  advance(): void {
    const lib = this.live();
    this.cacheValid = false;
    lib.retro_run();
    this.frame++;
  }

  /** Serializes the current state into the cache unless it already holds it. */
  private ensureSerialized(): void {
    if (this.cacheValid) return;
    const lib = this.live();
    const size = lib.retro_serialize_size();
    if (size > this.payloadCapacity)
      throw new LibretroError(
        'state-too-large',
        `the core's state grew to ${size} B, over the ${this.payloadCapacity} B fixed at load (raise stateSlack)`,
        this.coreFile,
      );
    if (!(size > 0) || !lib.retro_serialize(this.cachePayload, size))
      throw new LibretroError('no-savestates', `retro_serialize failed at frame ${this.frame}`, this.coreFile);
    writeHeaderFields(this.cache.bytes, this.coreId, this.contentId, this.frame >>> 0, size);
    this.cacheLen = STATE_HEADER_BYTES + size;
    this.cacheValid = true;
  }

  /** Writes the state (header + `retro_serialize` bytes) into `target`; returns the bytes written. */
  saveInto(target: Uint8Array): number {
    this.ensureSerialized();
    const n = this.cacheLen;
    if (target.length < n)
      throw new LibretroError('buffer-too-small', `target of ${target.length} B, the state needs ${n} B`);
    // The whole buffer when it fits (a ring slot is stateBytes long): no subarray object per save.
    if (target.length >= this.stateBytes) target.set(this.cache.bytes);
    else target.set(this.cache.bytes.subarray(0, n));
    return n;
  }

  /** A copy of the current state. */
  save(): Uint8Array {
    this.ensureSerialized();
    return this.cache.bytes.slice(0, this.cacheLen);
  }

  /**
   * Restores a state written by `saveInto` of an instance of the same core and content, frame
   * counter included. On any error the core is unchanged.
   * @throws LibretroError `truncated-state`, `not-a-state`, `foreign-state`, `other-content`,
   *   `state-too-large` or `state-rejected`
   */
  load(state: Uint8Array): void {
    this.live();
    const h = this.header;
    checkStateHeader(state, this.coreId, this.contentId, this.contentFile, h);
    this.loadPayload(state, STATE_HEADER_BYTES, h.payloadBytes, h.frame);
  }

  /** Loads `length` payload bytes of `source` from `offset`; copies, allocates nothing. */
  private loadPayload(source: Uint8Array, offset: number, length: number, frame: number): void {
    const lib = this.live();
    if (length > this.payloadCapacity)
      throw new LibretroError(
        'state-too-large',
        `state payload of ${length} B, this core holds at most ${this.payloadCapacity} B`,
        this.contentFile,
      );
    this.ensureSerialized();
    const backupLen = this.cacheLen;
    this.backup.bytes.set(this.cache.bytes);
    // Copies without a subarray object where the shapes allow (a whole state, or a whole raw state).
    if (offset === STATE_HEADER_BYTES && source.length <= this.stateBytes) this.cache.bytes.set(source);
    else if (offset === 0 && source.length === length) this.cache.bytes.set(source, STATE_HEADER_BYTES);
    else this.cache.bytes.set(source.subarray(offset, offset + length), STATE_HEADER_BYTES);
    writeHeaderFields(this.cache.bytes, this.coreId, this.contentId, frame >>> 0, length);
    this.cacheLen = STATE_HEADER_BYTES + length;
    if (!lib.retro_unserialize(this.cachePayload, length)) {
      this.cache.bytes.set(this.backup.bytes);
      this.cacheLen = backupLen;
      lib.retro_unserialize(this.cachePayload, backupLen - STATE_HEADER_BYTES);
      throw new LibretroError(
        'state-rejected',
        `${this.info.libraryName} refused the state (retro_unserialize returned false)`,
        this.contentFile,
      );
    }
    this.frame = frame;
    this.cacheValid = true;
  }

  /** 64-bit hash of the state (see the checksum rule in the class description). */
  checksum(): bigint {
    this.ensureSerialized();
    return hash64(this.cache.bytes, 0, this.cacheLen);
  }

  /** Returns to the power-on state (or `startState`) at frame 0, inputs cleared. */
  reset(): void {
    this.load(this.powerOn);
    this.inputs.fill(0);
  }

  /** A copy of the power-on state (frame 0): give it to peers as `startState` so all start alike. */
  powerOnState(): Uint8Array {
    return this.powerOn.slice();
  }

  // --- The core's own state bytes, as RetroArch's netplay sends and hashes them ---

  /** Capacity of a raw (`retro_serialize`) state. */
  get rawStateBytes(): number {
    return this.payloadCapacity;
  }

  /** Writes the current `retro_serialize` bytes (no header) into `target`; returns their length. */
  saveRawInto(target: Uint8Array): number {
    this.ensureSerialized();
    const n = this.cacheLen - STATE_HEADER_BYTES;
    if (target.length < n)
      throw new LibretroError('buffer-too-small', `target of ${target.length} B, the raw state needs ${n} B`);
    target.set(this.cache.bytes.subarray(STATE_HEADER_BYTES, this.cacheLen));
    return n;
  }

  /** Loads raw `retro_serialize` bytes (from RetroArch, say) and sets the frame counter to `frame`. @throws LibretroError `state-rejected`, `state-too-large` */
  loadRaw(state: Uint8Array, frame: number = this.frame): void {
    if (!Number.isInteger(frame) || frame < 0 || frame > 0xffffffff)
      throw new LibretroError('bad-input', `frame must be 0..2^32-1, got ${frame}`);
    this.loadPayload(state, 0, state.length, frame);
  }

  /** CRC-32 (zlib) of the raw state under the checksum rule: RetroArch's netplay frame CRC. */
  rawCrc32(): number {
    this.ensureSerialized();
    return crc32(this.cache.bytes, STATE_HEADER_BYTES, this.cacheLen);
  }

  /**
   * A fresh `retro_serialize` of the machine now, ignoring the checksum rule: for diagnosis only
   * (right after a load it may differ from the bytes loaded, which is why checksums never use it).
   */
  serializeFresh(): Uint8Array {
    this.cacheValid = false;
    this.ensureSerialized();
    return this.cache.bytes.slice(STATE_HEADER_BYTES, this.cacheLen);
  }

  // --- Memory ---

  /** The save RAM (`RETRO_MEMORY_SAVE_RAM`) as a live view; empty when the game has none. Persist it apart from states. */
  nvram(): Uint8Array {
    const lib = this.live();
    return nativeView(lib.retro_get_memory_data(MEMORY_SAVE_RAM), lib.retro_get_memory_size(MEMORY_SAVE_RAM));
  }

  /** The system RAM (`RETRO_MEMORY_SYSTEM_RAM`) as a live view, for debugging; empty when the core exposes none. */
  systemRam(): Uint8Array {
    const lib = this.live();
    return nativeView(lib.retro_get_memory_data(MEMORY_SYSTEM_RAM), lib.retro_get_memory_size(MEMORY_SYSTEM_RAM));
  }

  // --- What the core asked of the frontend ---

  /** Environment calls the core made that were refused, by libretro name. */
  get refusedEnvironmentCalls(): readonly string[] {
    return this.env.refused;
  }
  /** `RETRO_SERIALIZATION_QUIRK_*` bits the core reported (0 when it reported none). */
  get serializationQuirks(): number {
    return this.env.quirks;
  }
  /** Whether the core asked for the savestate context (`GET_SAVESTATE_CONTEXT`). */
  get savestateContextAsked(): boolean {
    return this.env.savestateContextAsked;
  }
  /** The pixel format of video frames. */
  get pixelFormat(): PixelFormat {
    return this.env.pixelFormat;
  }
  /** Core options the core declared, by key. */
  get coreVariables(): ReadonlyMap<string, CoreVariable> {
    return this.env.variables;
  }
  /** Whether the core asked to shut down (`RETRO_ENVIRONMENT_SHUTDOWN`). */
  get shutdownRequested(): boolean {
    return this.env.shutdown;
  }
  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.exports === null;
  }

  /** Unloads the game and the core, frees native memory and deletes the private copy. Idempotent. */
  close(): void {
    const lib = this.exports;
    if (lib === null) return;
    this.exports = null;
    lib.retro_unload_game();
    lib.retro_deinit();
    for (const cb of this.callbacks) koffi.unregister(cb);
    this.env.dispose();
    this.cache.free();
    this.backup.free();
    this.content?.free();
    lib.lib.unload();
    this.copy.remove();
  }
}

function low32(h: bigint): number {
  return Number(h & 0xffffffffn);
}

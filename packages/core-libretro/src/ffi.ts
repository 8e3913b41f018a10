// The koffi binding of a libretro core's exports. Node only.
import koffi, { type LibraryHandle } from 'koffi';
import { LibretroError } from './errors.js';

/** A native pointer as koffi 3 gives it. */
export type Pointer = bigint;

let protos: ReturnType<typeof defineProtos> | undefined;

function defineProtos() {
  return {
    environment: koffi.proto('bool netplay_retro_environment_t(unsigned int cmd, void *data)'),
    videoRefresh: koffi.proto(
      'void netplay_retro_video_refresh_t(void *data, unsigned int width, unsigned int height, size_t pitch)',
    ),
    audioSample: koffi.proto('void netplay_retro_audio_sample_t(int16_t left, int16_t right)'),
    audioSampleBatch: koffi.proto('size_t netplay_retro_audio_sample_batch_t(void *data, size_t frames)'),
    inputPoll: koffi.proto('void netplay_retro_input_poll_t(void)'),
    inputState: koffi.proto(
      'int16_t netplay_retro_input_state_t(unsigned int port, unsigned int device, unsigned int index, unsigned int id)',
    ),
    // retro_log_printf_t is variadic; on the SysV x86-64 ABI the fixed arguments arrive as for a
    // plain function, so a two-argument callback reads level and format and ignores the rest.
    log: koffi.proto('void netplay_retro_log_printf_t(int level, const char *fmt)'),
    systemInfo: koffi.struct('netplay_retro_system_info', {
      library_name: 'const char *',
      library_version: 'const char *',
      valid_extensions: 'const char *',
      need_fullpath: 'bool',
      block_extract: 'bool',
    }),
    avInfo: koffi.struct('netplay_retro_system_av_info', {
      base_width: 'unsigned int',
      base_height: 'unsigned int',
      max_width: 'unsigned int',
      max_height: 'unsigned int',
      aspect_ratio: 'float',
      fps: 'double',
      sample_rate: 'double',
    }),
    gameInfo: koffi.struct('netplay_retro_game_info', {
      path: 'const char *',
      data: 'void *',
      size: 'size_t',
      meta: 'const char *',
    }),
  };
}

/** The koffi types shared by every core instance (declared once per process). */
export function libretroProtos(): ReturnType<typeof defineProtos> {
  protos ??= defineProtos();
  return protos;
}

/** `retro_system_info`. */
export interface SystemInfo {
  library_name: string | null;
  library_version: string | null;
  valid_extensions: string | null;
  need_fullpath: boolean;
  block_extract: boolean;
}

/** `retro_system_av_info`, flattened. */
export interface AvInfo {
  base_width: number;
  base_height: number;
  max_width: number;
  max_height: number;
  aspect_ratio: number;
  fps: number;
  sample_rate: number;
}

/** The exports of one loaded core library. */
export interface LibretroExports {
  readonly lib: LibraryHandle;
  retro_set_environment(cb: unknown): void;
  retro_set_video_refresh(cb: unknown): void;
  retro_set_audio_sample(cb: unknown): void;
  retro_set_audio_sample_batch(cb: unknown): void;
  retro_set_input_poll(cb: unknown): void;
  retro_set_input_state(cb: unknown): void;
  retro_init(): void;
  retro_deinit(): void;
  retro_api_version(): number;
  retro_get_system_info(out: Partial<SystemInfo>): void;
  retro_get_system_av_info(out: Partial<AvInfo>): void;
  retro_set_controller_port_device(port: number, device: number): void;
  retro_reset(): void;
  retro_run(): void;
  retro_serialize_size(): number;
  retro_serialize(data: Pointer, size: number): boolean;
  retro_unserialize(data: Pointer, size: number): boolean;
  retro_load_game(game: { path: string | null; data: Pointer | null; size: number; meta: string | null }): boolean;
  retro_unload_game(): void;
  retro_get_memory_data(id: number): Pointer | null;
  retro_get_memory_size(id: number): number;
}

/**
 * Loads the shared library at `path` and binds the libretro exports.
 * @throws LibretroError `not-libretro` naming `shownAs` when it is not a library or lacks an export
 */
export function bindLibretro(path: string, shownAs: string): LibretroExports {
  libretroProtos(); // declares the callback and struct types the declarations below name
  let lib: LibraryHandle;
  try {
    lib = koffi.load(path);
  } catch (e) {
    throw new LibretroError(
      'not-libretro',
      `${shownAs} is not a loadable shared library: ${(e as Error).message}`,
      shownAs,
    );
  }
  const fn = (decl: string) => {
    try {
      return lib.func(decl);
    } catch (e) {
      lib.unload();
      throw new LibretroError(
        'not-libretro',
        `${shownAs} is not a libretro core: ${(e as Error).message} (${decl})`,
        shownAs,
      );
    }
  };
  return {
    lib,
    retro_set_environment: fn('void retro_set_environment(netplay_retro_environment_t *cb)'),
    retro_set_video_refresh: fn('void retro_set_video_refresh(netplay_retro_video_refresh_t *cb)'),
    retro_set_audio_sample: fn('void retro_set_audio_sample(netplay_retro_audio_sample_t *cb)'),
    retro_set_audio_sample_batch: fn('void retro_set_audio_sample_batch(netplay_retro_audio_sample_batch_t *cb)'),
    retro_set_input_poll: fn('void retro_set_input_poll(netplay_retro_input_poll_t *cb)'),
    retro_set_input_state: fn('void retro_set_input_state(netplay_retro_input_state_t *cb)'),
    retro_init: fn('void retro_init(void)'),
    retro_deinit: fn('void retro_deinit(void)'),
    retro_api_version: fn('unsigned int retro_api_version(void)'),
    retro_get_system_info: fn('void retro_get_system_info(_Out_ netplay_retro_system_info *info)'),
    retro_get_system_av_info: fn('void retro_get_system_av_info(_Out_ netplay_retro_system_av_info *info)'),
    retro_set_controller_port_device: fn(
      'void retro_set_controller_port_device(unsigned int port, unsigned int device)',
    ),
    retro_reset: fn('void retro_reset(void)'),
    retro_run: fn('void retro_run(void)'),
    retro_serialize_size: fn('size_t retro_serialize_size(void)'),
    retro_serialize: fn('bool retro_serialize(void *data, size_t size)'),
    retro_unserialize: fn('bool retro_unserialize(void *data, size_t size)'),
    retro_load_game: fn('bool retro_load_game(const netplay_retro_game_info *game)'),
    retro_unload_game: fn('void retro_unload_game(void)'),
    retro_get_memory_data: fn('void *retro_get_memory_data(unsigned int id)'),
    retro_get_memory_size: fn('size_t retro_get_memory_size(unsigned int id)'),
  } as LibretroExports;
}

/** A block of native memory that does not move, with a byte view over it. */
export class NativeBuffer {
  readonly ptr: Pointer;
  readonly bytes: Uint8Array;
  private freed = false;

  constructor(readonly size: number) {
    this.ptr = koffi.alloc('uint8_t', Math.max(1, size)) as Pointer;
    this.bytes = new Uint8Array(koffi.view(this.ptr, Math.max(1, size))).subarray(0, size);
  }

  /** A NUL-terminated copy of `text` in native memory. */
  static cString(text: string): NativeBuffer {
    const utf8 = new TextEncoder().encode(text);
    const b = new NativeBuffer(utf8.length + 1);
    b.bytes.set(utf8);
    b.bytes[utf8.length] = 0;
    return b;
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    koffi.free(this.ptr);
  }
}

/** A view of `size` bytes of native memory at `ptr` (no copy), or an empty array for a null pointer. */
export function nativeView(ptr: Pointer | null, size: number): Uint8Array {
  if (ptr === null || ptr === 0n || size <= 0) return new Uint8Array(0);
  return new Uint8Array(koffi.view(ptr, size));
}

export { koffi };

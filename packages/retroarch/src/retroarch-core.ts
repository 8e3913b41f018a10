/**
 * What an emulating RetroArch host or client needs of an emulator core. `LibretroCore` of
 * `@netplay/core-libretro` satisfies it structurally; this package does not depend on it.
 */
export interface RetroArchCore {
  /** The core's `retro_get_system_info` name and version, exactly (INFO carries them). */
  readonly info: {
    /** `retro_system_info.library_name`, sent as INFO's core name. */
    readonly libraryName: string;
    /** `retro_system_info.library_version`, sent as INFO's core version (RetroArch compares it byte for byte and warns on a difference). */
    readonly libraryVersion: string;
  };
  /** zlib CRC-32 of the content, as RetroArch's INFO carries it. */
  readonly contentCrc32: number;
  /** The frame the core is at: frames run since power-on, or the frame of the state last loaded. */
  readonly frame: number;
  /** Number of input ports (RetroArch devices 0..ports-1 reach the core). */
  readonly ports: number;
  /** Capacity of a raw (`retro_serialize`) state, in bytes. */
  readonly rawStateBytes: number;
  /** Sets one port's RetroPad mask (RetroArch's joypad input word, low 16 bits) for the next {@link advance}. */
  setInputMask(port: number, mask: number): void;
  /** Runs one frame. */
  advance(): void;
  /** Writes the `retro_serialize` bytes of the current frame into `target`; returns their length. */
  saveRawInto(target: Uint8Array): number;
  /** Loads `retro_serialize` bytes and sets the frame counter; throws (core unchanged) on a state it refuses. */
  loadRaw(state: Uint8Array, frame: number): void;
}

/** The INFO identity of a core: its name, version and content CRC. */
export function retroArchCoreInfo(core: RetroArchCore): {
  /** The core's `contentCrc32` as an unsigned 32-bit number. */
  contentCrc: number;
  /** The core's library name. */
  coreName: string;
  /** The core's library version, unchanged. */
  coreVersion: string;
} {
  return {
    contentCrc: core.contentCrc32 >>> 0,
    coreName: core.info.libraryName,
    coreVersion: core.info.libraryVersion,
  };
}

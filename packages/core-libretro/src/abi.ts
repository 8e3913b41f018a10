// Constants of libretro.h (API version 1) that this frontend uses.

/** `RETRO_API_VERSION`. */
export const RETRO_API_VERSION = 1;

/** Environment calls marked experimental carry this bit. */
export const ENV_EXPERIMENTAL = 0x10000;
/** Frontend-private environment calls carry this bit. */
export const ENV_PRIVATE = 0x20000;

/** `RETRO_ENVIRONMENT_*` numbers, experimental bit stripped. */
export const Env = {
  /** The core asks to rotate the screen by n × 90°. Accepted and ignored: nothing to do headless. */
  SET_ROTATION: 1,
  /** Whether the core should render overscan; answered `false`. */
  GET_OVERSCAN: 2,
  /**
   * Whether the frontend accepts a NULL frame meaning "repeat the last one"; answered `true` (such a frame is not
   * passed to the `video` sink).
   */
  GET_CAN_DUPE: 3,
  /** A message for the user (text, frames to show it). Accepted and ignored: nothing to do headless. */
  SET_MESSAGE: 6,
  /** The core asks the frontend to quit; recorded as `LibretroCore.shutdownRequested`, answered `true`. */
  SHUTDOWN: 7,
  /** A hint of how demanding the core is (an integer level). Accepted and ignored: nothing to do headless. */
  SET_PERFORMANCE_LEVEL: 8,
  /** Where BIOS and system files are: answered with the `systemDir` option. */
  GET_SYSTEM_DIRECTORY: 9,
  /**
   * The core picks its video format (`0RGB1555`, the default, `XRGB8888` or `RGB565`): accepted for those three (it
   * sets `VideoFrame.format`), answered `false` for any other value.
   */
  SET_PIXEL_FORMAT: 10,
  /** Names of the core's buttons per port, for a remapping UI. Accepted and ignored: nothing to do headless. */
  SET_INPUT_DESCRIPTORS: 11,
  /** The core asks for keyboard events. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  SET_KEYBOARD_CALLBACK: 12,
  /**
   * Multi-disk control (eject, swap) handed to the frontend. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_DISK_CONTROL_INTERFACE: 13,
  /**
   * The core wants an OpenGL/Vulkan context. Refused (this frontend renders in software only) and remembered: when the
   * core then refuses the content, loading fails with `LibretroError` `unsupported-environment`.
   */
  SET_HW_RENDER: 14,
  /**
   * The value of one core option: the `options` value for that key, else the default (first value) the core declared;
   * `false` for a key the core never declared.
   */
  GET_VARIABLE: 15,
  /**
   * The core declares its options (key, description, values; the first value is the default); parsed into
   * `LibretroCore.coreVariables`.
   */
  SET_VARIABLES: 16,
  /**
   * Whether any option changed since the core last asked; `true` once after `SET_VARIABLES`, then `false` (options are
   * fixed for a session).
   */
  GET_VARIABLE_UPDATE: 17,
  /** The core says it can start without content; recorded. */
  SET_SUPPORT_NO_GAME: 18,
  /** The path of the core library: answered with the path the core was loaded from. */
  GET_LIBRETRO_PATH: 19,
  /**
   * The core wants the wall time between frames (a determinism hazard for netplay). Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_FRAME_TIME_CALLBACK: 21,
  /**
   * The core wants to produce audio from a callback on its own schedule. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_AUDIO_CALLBACK: 22,
  /** Force-feedback motors. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  GET_RUMBLE_INTERFACE: 23,
  /**
   * Which input device types the frontend supports. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_INPUT_DEVICE_CAPABILITIES: 24,
  /**
   * Accelerometer, gyroscope and illuminance sensors. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_SENSOR_INTERFACE: 25,
  /** A camera feed. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  GET_CAMERA_INTERFACE: 26,
  /** A printf-style log callback: answered; lines go to the `log` option (default: dropped). */
  GET_LOG_INTERFACE: 27,
  /**
   * Performance counters and timers (wall time). Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_PERF_INTERFACE: 28,
  /** Geolocation. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  GET_LOCATION_INTERFACE: 29,
  /** Where the core may find its assets: answered with the `saveDir` option. */
  GET_CORE_ASSETS_DIRECTORY: 30,
  /** Where the core may write its save files: answered with the `saveDir` option. */
  GET_SAVE_DIRECTORY: 31,
  /**
   * The core changes its video and audio timing or geometry; answered `true` (a new frame size shows in the next
   * `VideoFrame`; `LibretroCore.info` keeps the values read at load).
   */
  SET_SYSTEM_AV_INFO: 32,
  /**
   * A function that returns the core's extension functions by name. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_PROC_ADDRESS_CALLBACK: 33,
  /** Special content types the core loads (e.g. several ROMs at once). Accepted and ignored: nothing to do headless. */
  SET_SUBSYSTEM_INFO: 34,
  /** The controller types each port supports. Accepted and ignored: nothing to do headless. */
  SET_CONTROLLER_INFO: 35,
  /** The emulated machine's memory map (for cheats, achievements). Accepted and ignored: nothing to do headless. */
  SET_MEMORY_MAPS: 36,
  /** The core changes its frame size or aspect ratio; answered `true`, like `SET_SYSTEM_AV_INFO`. */
  SET_GEOMETRY: 37,
  /**
   * The player's nickname (it would differ between peers). Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_USERNAME: 38,
  /** The user's language: answered 0 (English), the same on every peer so the game is too. */
  GET_LANGUAGE: 39,
  /**
   * A frontend-owned buffer the core could render into directly. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_CURRENT_SOFTWARE_FRAMEBUFFER: 40,
  /**
   * The hardware renderer's interface (Vulkan, D3D). Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_HW_RENDER_INTERFACE: 41,
  /** The core says it supports RetroAchievements. Accepted and ignored: nothing to do headless. */
  SET_SUPPORT_ACHIEVEMENTS: 42,
  /**
   * Negotiation of the hardware rendering context. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_HW_RENDER_CONTEXT_NEGOTIATION_INTERFACE: 43,
  /** 44 without the experimental bit; `SET_HW_SHARED_CONTEXT` with it. */
  SET_SERIALIZATION_QUIRKS: 44,
  /** A virtual file system the core would do its file I/O through; refused, so the core uses plain files. */
  GET_VFS_INTERFACE: 45,
  /**
   * Lights on the frontend (drive LEDs and the like). Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_LED_INTERFACE: 46,
  /**
   * Whether the frontend wants video and audio this frame (run-ahead skips them). Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_AUDIO_VIDEO_ENABLE: 47,
  /** MIDI input and output. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  GET_MIDI_INTERFACE: 48,
  /** Whether the frontend is fast-forwarding; answered `false`, so a core never skips work on one peer only. */
  GET_FASTFORWARDING: 49,
  /** The display's refresh rate in Hz. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  GET_TARGET_REFRESH_RATE: 50,
  /** Whether `input_state` answers the whole joypad as one bitmask (`RETRO_DEVICE_ID_JOYPAD_MASK`); answered `true`. */
  GET_INPUT_BITMASKS: 51,
  /**
   * Which core-option format the frontend parses: answered 0, so the core declares its options with `SET_VARIABLES`.
   */
  GET_CORE_OPTIONS_VERSION: 52,
  /**
   * Core options in format v1 (never sent after version 0 is answered). Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_CORE_OPTIONS: 53,
  /** Translated core options in format v1. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  SET_CORE_OPTIONS_INTL: 54,
  /** Shows or hides one option in a menu. Accepted and ignored: nothing to do headless. */
  SET_CORE_OPTIONS_DISPLAY: 55,
  /**
   * Which hardware API the frontend prefers. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_PREFERRED_HW_RENDER: 56,
  /**
   * Which disk-control interface version the frontend supports. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_DISK_CONTROL_INTERFACE_VERSION: 57,
  /** The extended disk-control interface. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  SET_DISK_CONTROL_EXT_INTERFACE: 58,
  /**
   * Which on-screen message interface version the frontend supports. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_MESSAGE_INTERFACE_VERSION: 59,
  /** A message for the user with a level and a duration. Accepted and ignored: nothing to do headless. */
  SET_MESSAGE_EXT: 60,
  /** How many players the frontend polls: answered with the `ports` option. */
  GET_INPUT_MAX_USERS: 61,
  /**
   * A callback reporting how full the audio buffer is (it would differ between peers). Refused (returns false; listed
   * in `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_AUDIO_BUFFER_STATUS_CALLBACK: 62,
  /** The least audio latency the core needs, in ms. Accepted and ignored: nothing to do headless. */
  SET_MINIMUM_AUDIO_LATENCY: 63,
  /**
   * The core asks the frontend to fast-forward. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_FASTFORWARDING_OVERRIDE: 64,
  /**
   * Per-extension overrides of how content is passed (path or memory). Accepted and ignored: nothing to do headless.
   */
  SET_CONTENT_INFO_OVERRIDE: 65,
  /**
   * Extended information about the loaded content. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_GAME_INFO_EXT: 66,
  /**
   * Core options in format v2, with categories. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_CORE_OPTIONS_V2: 67,
  /** Translated core options in format v2. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  SET_CORE_OPTIONS_V2_INTL: 68,
  /**
   * A callback the frontend calls to refresh which options are visible. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_CORE_OPTIONS_UPDATE_DISPLAY_CALLBACK: 69,
  /**
   * The core sets one of its own options' values. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_VARIABLE: 70,
  /**
   * How the frontend paces frames (fast-forward, slow motion, vsync). Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_THROTTLE_STATE: 71,
  /**
   * Why states are saved: answered with the `savestateContext` option (see {@link SavestateContextValue}); asking is
   * recorded as `LibretroCore.savestateContextAsked`.
   */
  GET_SAVESTATE_CONTEXT: 72,
  /**
   * Which context-negotiation interface version the frontend supports. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_HW_RENDER_CONTEXT_NEGOTIATION_INTERFACE_SUPPORT: 73,
  /**
   * Whether the platform allows just-in-time compilation. Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  GET_JIT_CAPABLE: 74,
  /** Microphone input. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  GET_MICROPHONE_INTERFACE: 75,
  /** The device's battery state. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  GET_DEVICE_POWER: 77,
  /**
   * The core's own packet-based netplay (the frontend would carry its packets). Refused (returns false; listed in
   * `ProbeReport.refusedEnvironmentCalls`).
   */
  SET_NETPACKET_INTERFACE: 78,
  /** Where the frontend keeps playlists. Refused (returns false; listed in `ProbeReport.refusedEnvironmentCalls`). */
  GET_PLAYLIST_DIRECTORY: 79,
} as const;

/** The name of an environment call number (experimental bit stripped), for messages. */
export function envName(cmd: number): string {
  const base = cmd & ~ENV_EXPERIMENTAL;
  if (cmd & ENV_PRIVATE) return `private environment call ${cmd}`;
  if (cmd === (Env.SET_SERIALIZATION_QUIRKS | ENV_EXPERIMENTAL)) return 'RETRO_ENVIRONMENT_SET_HW_SHARED_CONTEXT';
  for (const [name, value] of Object.entries(Env)) if (value === base) return `RETRO_ENVIRONMENT_${name}`;
  return `RETRO_ENVIRONMENT_${base}`;
}

/** `RETRO_DEVICE_JOYPAD`. */
export const DEVICE_JOYPAD = 1;
/** `RETRO_DEVICE_ID_JOYPAD_MASK`: the whole bitmask in one `input_state` call. */
export const DEVICE_ID_JOYPAD_MASK = 256;

/** `RETRO_MEMORY_SAVE_RAM`. */
export const MEMORY_SAVE_RAM = 0;
/** `RETRO_MEMORY_RTC`. */
export const MEMORY_RTC = 1;
/** `RETRO_MEMORY_SYSTEM_RAM`. */
export const MEMORY_SYSTEM_RAM = 2;
/** `RETRO_MEMORY_VIDEO_RAM`. */
export const MEMORY_VIDEO_RAM = 3;

/** `RETRO_SERIALIZATION_QUIRK_*` bits a core reports through `SET_SERIALIZATION_QUIRKS`. */
export const SerializationQuirk = {
  /** Bit 0: the core's states are incomplete (some state is not saved), so a reload may diverge. */
  INCOMPLETE: 1 << 0,
  /** Bit 1: the core must have run at least one frame before its state can be saved or loaded. */
  MUST_INITIALIZE: 1 << 1,
  /** Bit 2: the core's state size may change while it runs (this frontend keeps `stateSlack` bytes spare). */
  CORE_VARIABLE_SIZE: 1 << 2,
  /** Bit 3: the frontend supports a variable state size (set by a frontend, not by a core). */
  FRONT_VARIABLE_SIZE: 1 << 3,
  /** Bit 4: a state loads only in the same session of the same core instance. */
  SINGLE_SESSION: 1 << 4,
  /** Bit 5: states depend on the host's byte order: peers must share endianness. */
  ENDIAN_DEPENDENT: 1 << 5,
  /** Bit 6: states depend on the host platform (OS, architecture): peers must share it. */
  PLATFORM_DEPENDENT: 1 << 6,
} as const;

/** `RETRO_SAVESTATE_CONTEXT_*` values answered to `GET_SAVESTATE_CONTEXT`. */
export const SavestateContextValue = {
  /** 0: an ordinary savestate, written to disk and loaded later, possibly elsewhere: the core saves everything. */
  normal: 0,
  /** 1: run-ahead: this very instance loads it, never written or sent, so it may hold pointers into the core. */
  'runahead-same-instance': 1,
  /** 2: run-ahead in a second instance of the same core binary: no pointers, but the core may skip whatever slows saving. */
  'runahead-same-binary': 2,
  /** 3 (this frontend's default): rollback netplay: sent over the network, never written to disk, so the core may skip whatever is not needed to resume. */
  'rollback-netplay': 3,
} as const;

/** `RETRO_PIXEL_FORMAT_*`. */
export const PixelFormatValue = { '0rgb1555': 0, xrgb8888: 1, rgb565: 2 } as const;

// The answers of a headless, deterministic frontend to a core's environment calls.
import { ENV_EXPERIMENTAL, ENV_PRIVATE, Env, envName } from './abi.js';
import { koffi, NativeBuffer, type Pointer } from './ffi.js';
import { type CoreVariable, type LogSink, type PixelFormat, parseVariableDeclaration } from './options.js';

const PIXEL_FORMATS: readonly PixelFormat[] = ['0rgb1555', 'xrgb8888', 'rgb565'];
const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** What the environment answers with. */
export interface EnvironmentSetup {
  readonly ports: number;
  readonly systemDir: string;
  readonly saveDir: string;
  readonly corePath: string;
  readonly options: Readonly<Record<string, string>>;
  readonly savestateContext: number;
  readonly log: LogSink | undefined;
}

/**
 * State the environment callback keeps for one core instance. Answered: pixel format, system /
 * save / core-assets directories, libretro path, log, core options through `SET_VARIABLES` /
 * `GET_VARIABLE` (core options version 0), can-dupe, input bitmasks, max users, language
 * (English), savestate context, serialization quirks, no-game support, shutdown, and hints that
 * change nothing headless. Everything else is refused (returns false) and listed in `refused`:
 * hardware rendering, rumble, sensors, camera, location, perf counters, VFS, LEDs, MIDI,
 * microphone, disk control, keyboard / frame-time / audio callbacks, throttle state...
 */
export class Environment {
  /** Pixel format the core chose (`SET_PIXEL_FORMAT`); libretro's default is 0RGB1555. */
  pixelFormat: PixelFormat = '0rgb1555';
  /** Variables the core declared, by key. */
  readonly variables = new Map<string, CoreVariable>();
  /** Serialization quirks the core reported (`RETRO_SERIALIZATION_QUIRK_*` bits). */
  quirks = 0;
  /** Whether the core asked for the savestate context (so it may adapt its states). */
  savestateContextAsked = false;
  /** Environment calls refused, by name, in order of first refusal. */
  readonly refused: string[] = [];
  /** Whether the core asked for hardware rendering (which a headless frontend refuses). */
  wantsHardwareRender = false;
  /** Whether the core called `SHUTDOWN`. */
  shutdown = false;
  /** Whether the core can run without content. */
  supportsNoGame = false;
  /** Changed geometry/timing reported by the core (`SET_SYSTEM_AV_INFO`/`SET_GEOMETRY`). */
  avInfoChanged = false;

  private readonly strings = new Map<string, NativeBuffer>();
  private variablesChanged = false;
  private readonly logCallback: bigint;

  constructor(private readonly setup: EnvironmentSetup) {
    const sink = setup.log;
    this.logCallback = koffi.register(
      (level: number, fmt: string | null) => {
        if (sink !== undefined) sink(LOG_LEVELS[level] ?? 'info', (fmt ?? '').trimEnd());
      },
      koffi.pointer(koffi.type('netplay_retro_log_printf_t')),
    );
  }

  /** A C string that lives as long as this environment (one per distinct text). */
  private cString(text: string): Pointer {
    let b = this.strings.get(text);
    if (b === undefined) {
      b = NativeBuffer.cString(text);
      this.strings.set(text, b);
    }
    return b.ptr;
  }

  /** The value of core option `key`: the user's, else the core's default (first value). */
  variableValue(key: string): string | undefined {
    const user = this.setup.options[key];
    if (user !== undefined) return user;
    return this.variables.get(key)?.values[0];
  }

  /** Answers one environment call. */
  handle(cmd: number, data: Pointer | null): boolean {
    const experimental = (cmd & ENV_EXPERIMENTAL) !== 0;
    if (cmd & ENV_PRIVATE) return this.refuse(cmd);
    const base = cmd & ~ENV_EXPERIMENTAL;
    const p = data ?? 0n;
    switch (base) {
      case Env.GET_CAN_DUPE:
        if (p) koffi.encode(p, 'bool', true);
        return true;
      case Env.GET_OVERSCAN:
        if (p) koffi.encode(p, 'bool', false);
        return true;
      case Env.SET_PIXEL_FORMAT: {
        const f = p ? (koffi.decode(p, 'int') as number) : -1;
        const name = PIXEL_FORMATS[f];
        if (name === undefined) return false;
        this.pixelFormat = name;
        return true;
      }
      case Env.GET_SYSTEM_DIRECTORY:
        if (p) koffi.encode(p, 'void *', this.cString(this.setup.systemDir));
        return true;
      case Env.GET_SAVE_DIRECTORY:
      case Env.GET_CORE_ASSETS_DIRECTORY:
        if (p) koffi.encode(p, 'void *', this.cString(this.setup.saveDir));
        return true;
      case Env.GET_LIBRETRO_PATH:
        if (p) koffi.encode(p, 'void *', this.cString(this.setup.corePath));
        return true;
      case Env.GET_LOG_INTERFACE:
        if (p) koffi.encode(p, 'void *', this.logCallback);
        return true;
      case Env.GET_CORE_OPTIONS_VERSION:
        // Version 0: the core falls back to SET_VARIABLES, the one format this frontend parses.
        if (p) koffi.encode(p, 'unsigned int', 0);
        return true;
      case Env.SET_VARIABLES:
        if (p) this.declareVariables(p);
        return true;
      case Env.GET_VARIABLE: {
        if (!p) return false;
        const key = koffi.decode(p, 'const char *') as string | null;
        const value = key === null ? undefined : this.variableValue(key);
        if (value === undefined) {
          koffi.encode(p, 8, 'void *', null);
          return false;
        }
        koffi.encode(p, 8, 'void *', this.cString(value));
        return true;
      }
      case Env.GET_VARIABLE_UPDATE:
        if (p) koffi.encode(p, 'bool', this.variablesChanged);
        this.variablesChanged = false;
        return true;
      case Env.GET_INPUT_BITMASKS:
        return true;
      case Env.GET_INPUT_MAX_USERS:
        if (p) koffi.encode(p, 'unsigned int', this.setup.ports);
        return true;
      case Env.GET_LANGUAGE:
        if (p) koffi.encode(p, 'unsigned int', 0); // English, the same on every peer
        return true;
      case Env.GET_FASTFORWARDING:
        if (p) koffi.encode(p, 'bool', false);
        return true;
      case Env.GET_SAVESTATE_CONTEXT:
        this.savestateContextAsked = true;
        if (p) koffi.encode(p, 'int', this.setup.savestateContext);
        return true;
      case Env.SET_SERIALIZATION_QUIRKS:
        if (experimental) return this.refuse(cmd); // 44 | experimental is SET_HW_SHARED_CONTEXT
        if (p) this.quirks = Number(koffi.decode(p, 'uint64_t'));
        return true;
      case Env.SET_SUPPORT_NO_GAME:
        this.supportsNoGame = p ? (koffi.decode(p, 'bool') as boolean) : false;
        return true;
      case Env.SHUTDOWN:
        this.shutdown = true;
        return true;
      case Env.SET_SYSTEM_AV_INFO:
      case Env.SET_GEOMETRY:
        this.avInfoChanged = true;
        return true;
      case Env.SET_HW_RENDER:
        this.wantsHardwareRender = true;
        return this.refuse(cmd);
      // Accepted and ignored: descriptions, hints and metadata that change nothing headless.
      case Env.SET_ROTATION:
      case Env.SET_MESSAGE:
      case Env.SET_MESSAGE_EXT:
      case Env.SET_PERFORMANCE_LEVEL:
      case Env.SET_INPUT_DESCRIPTORS:
      case Env.SET_SUBSYSTEM_INFO:
      case Env.SET_CONTROLLER_INFO:
      case Env.SET_MEMORY_MAPS:
      case Env.SET_SUPPORT_ACHIEVEMENTS:
      case Env.SET_CONTENT_INFO_OVERRIDE:
      case Env.SET_CORE_OPTIONS_DISPLAY:
      case Env.SET_MINIMUM_AUDIO_LATENCY:
        return true;
      default:
        return this.refuse(cmd);
    }
  }

  private declareVariables(p: Pointer): void {
    for (let i = 0; i < 4096; i++) {
      const key = koffi.decode(p, i * 16, 'const char *') as string | null;
      if (key === null) break;
      const value = (koffi.decode(p, i * 16 + 8, 'const char *') as string | null) ?? '';
      this.variables.set(key, parseVariableDeclaration(key, value));
    }
    this.variablesChanged = true;
  }

  private refuse(cmd: number): boolean {
    const name = envName(cmd);
    if (!this.refused.includes(name)) this.refused.push(name);
    return false;
  }

  /** Frees the C strings and the log callback. */
  dispose(): void {
    for (const b of this.strings.values()) b.free();
    this.strings.clear();
    koffi.unregister(this.logCallback);
  }
}

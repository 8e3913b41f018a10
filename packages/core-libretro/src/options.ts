import type { SavestateContextValue } from './abi.js';
import { LibretroError } from './errors.js';

/** The pixel formats a core may choose for its video. */
export type PixelFormat = '0rgb1555' | 'xrgb8888' | 'rgb565';

/** One video frame from the core. `data` is a view into the core's memory, valid only during the sink call. */
export interface VideoFrame {
  /** Pixels, `pitch` bytes per row, `height` rows. */
  readonly data: Uint8Array;
  /** Width of this frame in pixels (may change from frame to frame). */
  readonly width: number;
  /** Height of this frame in pixels (may change from frame to frame). */
  readonly height: number;
  /** Bytes per row. */
  readonly pitch: number;
  /** How the pixels are packed: the format the core chose with `SET_PIXEL_FORMAT` (default `0rgb1555`, 2 bytes per pixel; `xrgb8888` 4). */
  readonly format: PixelFormat;
}

/** Receives each frame the core draws (not called for duplicated frames). */
export type VideoSink = (frame: VideoFrame) => void;
/**
 * Receives the audio of a frame: interleaved stereo signed 16-bit samples (`frames` × 2 values),
 * a view valid only during the call.
 */
export type AudioSink = (samples: Int16Array, frames: number) => void;
/** Receives the core's log lines (the format string only: variadic arguments are not decoded). */
export type LogSink = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;

/** What `GET_SAVESTATE_CONTEXT` answers: `rollback-netplay` (the default) lets a core drop pointers and host-only data from its states. */
export type SavestateContext = keyof typeof SavestateContextValue;

/** Options of {@link LibretroCore.load}. */
export interface LibretroCoreOptions {
  /** Path of the libretro core (`.so`); see `resolveLibretroCore` for names like `'nestopia'`. */
  readonly core: string;
  /** The content (ROM): a path, or its bytes. */
  readonly content: string | Uint8Array;
  /** A file name for content given as bytes (cores look at the extension); default `content.bin`. */
  readonly contentName?: string;
  /** Input ports (players), 1..8; default 2. Each port is a RetroPad (`RETRO_DEVICE_JOYPAD`). */
  readonly ports?: number;
  /** Answer to `GET_SYSTEM_DIRECTORY` (BIOS files); default: the private temporary folder. */
  readonly systemDir?: string;
  /** Answer to `GET_SAVE_DIRECTORY`; default: the private temporary folder. SRAM is never read from or written there by this frontend: see `nvram`. */
  readonly saveDir?: string;
  /** Core options (`GET_VARIABLE`), checked against what the core declares: unknown keys or values throw `bad-option`. */
  readonly options?: Readonly<Record<string, string>>;
  /** Initial save RAM (`RETRO_MEMORY_SAVE_RAM`), copied in before the power-on state is taken; every peer must give the same bytes. */
  readonly nvram?: Uint8Array;
  /**
   * A state (from `powerOnState()` or `saveInto` of another instance of the same core and
   * content) to start from instead of this instance's own power-on. Cores that keep host facts in
   * their states (Gambatte's wall-clock `rtcbase`) agree across peers only when every peer starts
   * from one shared state. `reset()` returns to it.
   */
  readonly startState?: Uint8Array;
  /** What `GET_SAVESTATE_CONTEXT` answers; default `rollback-netplay`. */
  readonly savestateContext?: SavestateContext;
  /** Extra payload capacity over the size the core reports at load, for cores whose state size varies; default max(1 KiB, 1/8 of the state). */
  readonly stateSlack?: number;
  /** Called with each frame the core draws, during `advance()`; default: none (frames are not read). */
  readonly video?: VideoSink;
  /** Called with the audio the core produces, during `advance()`; default: none (audio is dropped). */
  readonly audio?: AudioSink;
  /** Called with each line the core logs through `GET_LOG_INTERFACE`; default: none (lines are dropped). */
  readonly log?: LogSink;
}

const KNOWN = new Set([
  'core',
  'content',
  'contentName',
  'ports',
  'systemDir',
  'saveDir',
  'options',
  'nvram',
  'startState',
  'savestateContext',
  'stateSlack',
  'video',
  'audio',
  'log',
]);
const CONTEXTS = new Set(['normal', 'runahead-same-instance', 'runahead-same-binary', 'rollback-netplay']);

/** Checks the shape of `LibretroCore.load` options before anything is loaded. @throws LibretroError `bad-option` */
export function validateOptions(o: LibretroCoreOptions): void {
  const bad = (msg: string): never => {
    throw new LibretroError('bad-option', msg);
  };
  if (o === null || typeof o !== 'object') bad('options must be an object');
  for (const k of Object.keys(o)) if (!KNOWN.has(k)) bad(`unknown option "${k}"`);
  if (typeof o.core !== 'string' || o.core.length === 0) bad('core must be a non-empty path');
  if (!(typeof o.content === 'string' && o.content.length > 0) && !(o.content instanceof Uint8Array))
    bad('content must be a path or a Uint8Array');
  if (o.content instanceof Uint8Array && o.content.length === 0) bad('content bytes are empty');
  if (o.contentName !== undefined && (typeof o.contentName !== 'string' || !/^[^/\\\0]{1,200}$/.test(o.contentName)))
    bad('contentName must be a plain file name');
  if (o.ports !== undefined && !(Number.isInteger(o.ports) && o.ports >= 1 && o.ports <= 8))
    bad(`ports must be 1..8, got ${String(o.ports)}`);
  for (const k of ['systemDir', 'saveDir'] as const) {
    const v = o[k];
    if (v !== undefined && (typeof v !== 'string' || v.length === 0 || v.includes('\0'))) bad(`${k} must be a path`);
  }
  if (o.options !== undefined) {
    if (o.options === null || typeof o.options !== 'object') bad('options.options must be a record of strings');
    for (const [k, v] of Object.entries(o.options)) {
      if (typeof v !== 'string' || v.includes('\0') || k.includes('\0')) bad(`core option "${k}" must be a string`);
    }
  }
  if (o.nvram !== undefined && !(o.nvram instanceof Uint8Array)) bad('nvram must be a Uint8Array');
  if (o.startState !== undefined && !(o.startState instanceof Uint8Array)) bad('startState must be a Uint8Array');
  if (o.savestateContext !== undefined && !CONTEXTS.has(o.savestateContext))
    bad(`savestateContext must be one of ${[...CONTEXTS].join(', ')}`);
  if (o.stateSlack !== undefined && !(Number.isInteger(o.stateSlack) && o.stateSlack >= 0 && o.stateSlack <= 1 << 26))
    bad('stateSlack must be an integer 0..64 MiB');
  for (const k of ['video', 'audio', 'log'] as const) {
    if (o[k] !== undefined && typeof o[k] !== 'function') bad(`${k} must be a function`);
  }
}

/** A core option the core declared through `SET_VARIABLES`: its description and allowed values, the first being the default. */
export interface CoreVariable {
  /** The option's key (e.g. `nestopia_palette`), as `options` and `GET_VARIABLE` name it. */
  readonly key: string;
  /** The human-readable text before the `;` of the declaration (empty when there is none). */
  readonly description: string;
  /** The allowed values in the core's order; the first is the default. Empty if the core listed none. */
  readonly values: readonly string[];
}

/** Parses a `retro_variable` value as declared by `SET_VARIABLES`: `"Description; a|b|c"`. */
export function parseVariableDeclaration(key: string, value: string): CoreVariable {
  const semi = value.indexOf(';');
  const description = semi < 0 ? '' : value.slice(0, semi).trim();
  const list = (semi < 0 ? value : value.slice(semi + 1)).trim();
  return { key, description, values: list.length === 0 ? [] : list.split('|') };
}

/**
 * Checks user core options against the declared variables.
 * @throws LibretroError `bad-option` naming the unknown key or the value not allowed
 */
export function checkCoreOptions(
  options: Readonly<Record<string, string>>,
  declared: ReadonlyMap<string, CoreVariable>,
  coreFile: string,
): void {
  for (const [k, v] of Object.entries(options)) {
    const d = declared.get(k);
    if (d === undefined)
      throw new LibretroError(
        'bad-option',
        `core option "${k}" is not one the core declares (${[...declared.keys()].join(', ') || 'none'})`,
        coreFile,
      );
    if (!d.values.includes(v))
      throw new LibretroError(
        'bad-option',
        `core option "${k}" = "${v}" is not one of ${d.values.join('|')}`,
        coreFile,
      );
  }
}

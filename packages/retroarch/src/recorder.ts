import { crc32 } from '@netplay/protocol';
import type { RetroArchClientEvent } from './client-events.js';
import { RetroArchError } from './errors.js';

/** The `format` value of a recording's first line. */
export const RECORDING_FORMAT = 'netplay-retroarch-record';
/** The recording format version this package writes and reads. */
export const RECORDING_VERSION = 1;

/** First line of a recording: who and what was recorded. */
export interface RecordingHeader {
  /** Always {@link RECORDING_FORMAT}: marks the file as a recording of this package. */
  readonly format: typeof RECORDING_FORMAT;
  /** The format version ({@link RECORDING_VERSION} when written by this package); `parseRecording` refuses others. */
  readonly version: number;
  /** The host's nick (NICK). */
  readonly hostNick: string;
  /** The host's core name (INFO), e.g. `Nestopia`. */
  readonly core: string;
  /** The host's core version (INFO), byte for byte. */
  readonly coreVersion: string;
  /** CRC-32 of the host's content (INFO), unsigned. */
  readonly contentCrc: number;
  /** The host's frame at SYNC. */
  readonly frame: number;
  /** Device type per port (SYNC). */
  readonly devices: readonly number[];
}

/** One line after the header. */
export type RecordingEntry =
  | {
      /** `'savestate'`: the host sent a LOAD_SAVESTATE (the state itself is not recorded). */
      readonly t: 'savestate';
      /** The frame the state belongs to. */
      readonly f: number;
      /** The uncompressed state's size in bytes. */
      readonly size: number;
      /** CRC-32 of the uncompressed state, unsigned. */
      readonly crc32: number;
    }
  | {
      /** `'input'`: one client's INPUT for one frame. */
      readonly t: 'input';
      /** The frame the input is for. */
      readonly f: number;
      /** The client number whose input it is. */
      readonly c: number;
      /** The input words, 32-bit unsigned each (a joypad's is its RetroPad mask). */
      readonly w: readonly number[];
    }
  | {
      /** `'noinput'`: the host reached a frame with no other input (NOINPUT). */
      readonly t: 'noinput';
      /** The frame reached. */
      readonly f: number;
    }
  | {
      /** `'crc'`: the host's CRC of its state. */
      readonly t: 'crc';
      /** The frame whose starting state it covers. */
      readonly f: number;
      /** The CRC-32, unsigned. */
      readonly crc: number;
    }
  | {
      /** `'mode'`: a client started or stopped playing (MODE). */
      readonly t: 'mode';
      /** The first frame the change applies to. */
      readonly f: number;
      /** The client number. */
      readonly c: number;
      /** Whether it plays from `f` on (else it spectates). */
      readonly playing: boolean;
      /** Bitmap of the devices (ports 0..15) it drives. */
      readonly devices: number;
      /** Its nick. */
      readonly nick: string;
    }
  | {
      /** `'end'`: the last line of a recording that ended cleanly. */
      readonly t: 'end';
      /** How many distinct host frames (INPUT / NOINPUT) were recorded. */
      readonly frames: number;
    };

/** A parsed recording. */
export interface Recording {
  /** The first line: who and what was recorded. */
  readonly header: RecordingHeader;
  /** Every following line, in file order (the `end` line last when present). */
  readonly entries: readonly RecordingEntry[];
}

/**
 * Turns a spectating client's events into recording lines (JSON lines, one object per line; see
 * the README for the format). Sans-I/O: `write` receives each line (without the newline). `done`
 * becomes true once `frames` distinct host frames (INPUT / NOINPUT) were recorded.
 */
export class RetroArchRecorder {
  private frames = 0;
  private lastFrame = -1;
  private started = false;
  private ended = false;

  constructor(
    private readonly write: (line: string) => void,
    private readonly maxFrames: number = Number.POSITIVE_INFINITY,
  ) {}

  /** Frames recorded so far. */
  get recordedFrames(): number {
    return this.frames;
  }

  /** True once the frame budget is reached (or {@link end} was called). */
  get done(): boolean {
    return this.ended || this.frames >= this.maxFrames;
  }

  /** Feeds one client event. */
  onEvent(e: RetroArchClientEvent): void {
    if (this.ended) return;
    if (e.type === 'synced') {
      const { session } = e;
      const header: RecordingHeader = {
        format: RECORDING_FORMAT,
        version: RECORDING_VERSION,
        hostNick: session.hostNick,
        core: session.hostInfo.coreName,
        coreVersion: session.hostInfo.coreVersion,
        contentCrc: session.hostInfo.contentCrc,
        frame: session.sync.frame,
        devices: session.sync.devices,
      };
      this.write(JSON.stringify(header));
      this.started = true;
      return;
    }
    if (!this.started || this.done) return;
    switch (e.type) {
      case 'savestate':
        this.line({ t: 'savestate', f: e.frame, size: e.state.length, crc32: crc32(e.state) });
        return;
      case 'input':
        this.line({ t: 'input', f: e.frame, c: e.client, w: Array.from(e.words) });
        this.frameSeen(e.frame);
        return;
      case 'noInput':
        this.line({ t: 'noinput', f: e.frame });
        this.frameSeen(e.frame);
        return;
      case 'crc':
        this.line({ t: 'crc', f: e.frame, crc: e.crc });
        return;
      case 'mode':
        this.line({ t: 'mode', f: e.frame, c: e.client, playing: e.playing, devices: e.devices, nick: e.nick });
        return;
      default:
        return;
    }
  }

  /** Writes the closing `end` line (once). */
  end(): void {
    if (this.ended) return;
    if (this.started) this.line({ t: 'end', frames: this.frames });
    this.ended = true;
  }

  private line(entry: RecordingEntry): void {
    this.write(JSON.stringify(entry));
  }

  private frameSeen(frame: number): void {
    if (frame > this.lastFrame) {
      this.lastFrame = frame;
      this.frames++;
    }
  }
}

function isU32(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;
}

function bad(line: number, what: string): RetroArchError {
  return new RetroArchError('protocol', `recording line ${line}: ${what}`);
}

/**
 * Parses a recording written by {@link RetroArchRecorder}. Validates every line and throws
 * `RetroArchError('protocol')` naming the line on anything malformed.
 */
export function parseRecording(text: string): Recording {
  const lines = text.split('\n').filter((l) => l.length > 0);
  const parse = (l: string, i: number): Record<string, unknown> => {
    try {
      const v: unknown = JSON.parse(l);
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(i + 1, 'not an object');
      return v as Record<string, unknown>;
    } catch (e) {
      if (e instanceof RetroArchError) throw e;
      throw bad(i + 1, 'not JSON');
    }
  };
  if (lines.length === 0) throw bad(1, 'empty recording');
  const h = parse(lines[0]!, 0);
  if (h.format !== RECORDING_FORMAT || h.version !== RECORDING_VERSION) throw bad(1, 'not a version-1 recording');
  if (
    typeof h.hostNick !== 'string' ||
    typeof h.core !== 'string' ||
    typeof h.coreVersion !== 'string' ||
    !isU32(h.contentCrc) ||
    !isU32(h.frame) ||
    !Array.isArray(h.devices) ||
    !h.devices.every(isU32)
  ) {
    throw bad(1, 'malformed header');
  }
  const header = h as unknown as RecordingHeader;
  const entries: RecordingEntry[] = [];
  for (let i = 1; i < lines.length; i++) {
    const e = parse(lines[i]!, i);
    const ok = (() => {
      switch (e.t) {
        case 'savestate':
          return isU32(e.f) && isU32(e.size) && isU32(e.crc32);
        case 'input':
          return isU32(e.f) && isU32(e.c) && Array.isArray(e.w) && e.w.every(isU32);
        case 'noinput':
          return isU32(e.f);
        case 'crc':
          return isU32(e.f) && isU32(e.crc);
        case 'mode':
          return (
            isU32(e.f) && isU32(e.c) && typeof e.playing === 'boolean' && isU32(e.devices) && typeof e.nick === 'string'
          );
        case 'end':
          return isU32(e.frames);
        default:
          return false;
      }
    })();
    if (!ok) throw bad(i + 1, `malformed entry`);
    entries.push(e as unknown as RecordingEntry);
  }
  return { header, entries };
}

import { crc32 } from '@netplay/protocol';
import type { RetroArchClientEvent } from './client.js';
import { RetroArchError } from './errors.js';

/** The `format` value of a recording's first line. */
export const RECORDING_FORMAT = 'netplay-retroarch-record';
/** The recording format version this package writes and reads. */
export const RECORDING_VERSION = 1;

/** First line of a recording: who and what was recorded. */
export interface RecordingHeader {
  readonly format: typeof RECORDING_FORMAT;
  readonly version: number;
  readonly hostNick: string;
  readonly core: string;
  readonly coreVersion: string;
  readonly contentCrc: number;
  /** The host's frame at SYNC. */
  readonly frame: number;
  /** Device type per port (SYNC). */
  readonly devices: readonly number[];
}

/** One line after the header. */
export type RecordingEntry =
  | { readonly t: 'savestate'; readonly f: number; readonly size: number; readonly crc32: number }
  | { readonly t: 'input'; readonly f: number; readonly c: number; readonly w: readonly number[] }
  | { readonly t: 'noinput'; readonly f: number }
  | { readonly t: 'crc'; readonly f: number; readonly crc: number }
  | {
      readonly t: 'mode';
      readonly f: number;
      readonly c: number;
      readonly playing: boolean;
      readonly devices: number;
      readonly nick: string;
    }
  | { readonly t: 'end'; readonly frames: number };

/** A parsed recording. */
export interface Recording {
  readonly header: RecordingHeader;
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

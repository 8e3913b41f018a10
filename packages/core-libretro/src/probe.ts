// Trying a core in a child process first: a core that aborts or segfaults takes its process down,
// and in-process that would be the host.
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LibretroError, type LibretroErrorCode } from './errors.js';

/** What `probeLibretroCore` loads: the serializable part of `LibretroCoreOptions`. */
export interface ProbeOptions {
  /** Path of the libretro core (`.so`), as {@link LibretroCoreOptions.core}. */
  readonly core: string;
  /** The content (ROM): a path, or its bytes (sent to the child as base64). */
  readonly content: string | Uint8Array;
  /** A file name for content given as bytes (cores look at the extension); default `content.bin`. */
  readonly contentName?: string;
  /** Input ports (players), 1..8; default 2. */
  readonly ports?: number;
  /** Core options, checked against what the core declares, as {@link LibretroCoreOptions.options}. */
  readonly options?: Readonly<Record<string, string>>;
  /** Answer to `GET_SYSTEM_DIRECTORY` (BIOS files); default: the child's private temporary folder. */
  readonly systemDir?: string;
  /** Answer to `GET_SAVE_DIRECTORY`; default: the child's private temporary folder. */
  readonly saveDir?: string;
  /** Frames to run before the save/load check; default 60. */
  readonly frames?: number;
  /** How long the child may take; default 30 s. */
  readonly timeoutMs?: number;
}

/** What the child process found. */
export interface ProbeReport {
  /** The core's name, as {@link LibretroCoreInfo.libraryName}. */
  readonly libraryName: string;
  /** The core's version string, exactly as reported (see {@link LibretroCoreInfo.libraryVersion}). */
  readonly libraryVersion: string;
  /** Bytes of one snapshot of this core and content: the header plus the core's state size and slack ({@link LibretroCore.stateBytes}). */
  readonly stateBytes: number;
  /** The core's frame counter when the probe ended: `frames` run, then a save, a frame, a reload and the frame again. */
  readonly frames: number;
  /** Environment calls the core made that were refused, by libretro name, in order of first refusal. */
  readonly refusedEnvironmentCalls: readonly string[];
  /** {@link SerializationQuirk} bits the core reported (0 when it reported none). */
  readonly serializationQuirks: number;
  /** Whether the core asked `GET_SAVESTATE_CONTEXT` (it may then shape its states for netplay). */
  readonly savestateContextAsked: boolean;
  /** Whether save, advance, load, advance gave the same checksum twice (a one-frame rollback). */
  readonly reloadAgrees: boolean;
}

/** The message between parent and child, as JSON. */
export interface ProbeRequest extends Omit<ProbeOptions, 'content' | 'timeoutMs'> {
  readonly contentPath?: string;
  readonly contentBase64?: string;
  /** Folder for the child's private copy, deleted by the parent even when the child crashes. */
  readonly tmpDir: string;
}

/**
 * Loads the core with its content in a child Node process, runs `frames` frames and a one-frame
 * rollback, and reports. A core that crashes or hangs there costs the child, not this process.
 * @throws LibretroError `core-crashed` naming the core (with the signal or exit status), or the
 *   error the child met (`missing-core`, `content-rejected`, ...)
 */
export function probeLibretroCore(o: ProbeOptions): ProbeReport {
  const { content, timeoutMs = 30_000, ...rest } = o;
  const tmpDir = mkdtempSync(join(tmpdir(), 'netplay-libretro-probe-'));
  const request: ProbeRequest =
    typeof content === 'string'
      ? { ...rest, tmpDir, contentPath: content }
      : {
          ...rest,
          tmpDir,
          contentBase64: Buffer.from(content.buffer, content.byteOffset, content.length).toString('base64'),
        };
  const here = import.meta.url;
  const source = here.endsWith('.ts');
  const child = fileURLToPath(new URL(source ? './probe-child.ts' : './probe-child.js', here));
  const args = source ? ['--conditions=@netplay/source', '--import', 'tsx', child] : [child];
  let r: SpawnSyncReturns<string>;
  try {
    r = spawnSync(process.execPath, args, {
      input: JSON.stringify(request),
      encoding: 'utf8',
      timeout: timeoutMs,
      maxBuffer: 1 << 20,
    });
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
  const shown = typeof content === 'string' ? content : (o.contentName ?? 'content.bin');
  const lastLine = r.stdout?.trim().split('\n').pop() ?? '';
  let parsed: { report?: ProbeReport; error?: { code: LibretroErrorCode; message: string; file?: string } } | undefined;
  try {
    parsed = lastLine.startsWith('{') ? JSON.parse(lastLine) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed?.error) {
    const e = new LibretroError(parsed.error.code, parsed.error.message.replace(/^[a-z-]+: /, ''), parsed.error.file);
    throw e;
  }
  if (r.status === 0 && parsed?.report) return parsed.report;
  const how =
    r.error !== undefined && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT'
      ? `did not finish within ${timeoutMs} ms`
      : r.signal
        ? `was killed by ${r.signal}`
        : `exited with status ${r.status}`;
  const stderr = (r.stderr ?? '').trim().split('\n').slice(-3).join(' | ');
  throw new LibretroError(
    'core-crashed',
    `the probe process running ${o.core} with ${shown} ${how}${stderr ? ` (${stderr})` : ''}`,
    o.core,
  );
}

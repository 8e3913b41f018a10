import { writeFile } from 'node:fs/promises';
import { crc32 } from '@netplay/protocol';
import { CliError, ExitCode } from './exit-codes.js';

/** CRC-32 of each final frame's state (every input known and used), as one peer saw them. */
export class FinalStates {
  readonly hashes = new Map<number, number>();
  /** The last frame recorded. */
  last = -1;

  constructor(
    /** The peer's name in the report. */
    readonly name: string,
  ) {}

  /** Records frames `last + 1 .. upTo` whose states `stateOf` still holds. */
  record(upTo: number, stateOf: (frame: number) => Uint8Array | undefined): void {
    for (let f = this.last + 1; f <= upTo; f++) {
      const st = stateOf(f);
      if (st !== undefined) this.hashes.set(f, crc32(st));
      this.last = f;
    }
  }
}

/** What {@link LockstepFinals} reads of a core: its frame counter and its state. */
export interface HashableCore {
  readonly frame: number;
  readonly stateBytes: number;
  saveInto(target: Uint8Array): number;
}

/**
 * Lockstep finals: the state after each frame is hashed when the frame runs (the session's `frame`
 * event, under the core's frame counter as the finals files key it) and held back until the session
 * reports the frame final (its `final` event). A P2P lockstep client's frames become final only once
 * the host has run them too, so a client cut off mid-game never records a frame the host ran
 * differently; frames still pending when the game ends are not final and are never recorded.
 * Feed it `host.on('frame', ({ frame }) => f.ran(frame))` and `host.on('final', ({ frame }) =>
 * f.final(frame))` (likewise on a client).
 */
export class LockstepFinals {
  /** Hashes by scheduler frame: [the core's frame counter, CRC-32 of the state]. */
  private readonly pending = new Map<number, readonly [number, number]>();
  private readonly buffer: Uint8Array;
  private finalUpTo = -1;

  constructor(
    readonly finals: FinalStates,
    private readonly core: HashableCore,
  ) {
    this.buffer = new Uint8Array(core.stateBytes);
  }

  /** Scheduler frame `frame` just ran on the core. */
  ran(frame: number): void {
    const crc = crc32(this.buffer.subarray(0, this.core.saveInto(this.buffer)));
    const at = this.core.frame;
    if (frame <= this.finalUpTo) this.commit(at, crc);
    else this.pending.set(frame, [at, crc]);
  }

  /** Scheduler frames up to `upTo` are final. */
  final(upTo: number): void {
    if (upTo <= this.finalUpTo) return;
    this.finalUpTo = upTo;
    for (const [frame, [at, crc]] of this.pending) {
      if (frame > upTo) continue;
      this.commit(at, crc);
      this.pending.delete(frame);
    }
  }

  /** Frames that ran but are not final (yet). */
  get pendingFrames(): number {
    return this.pending.size;
  }

  private commit(at: number, crc: number): void {
    this.finals.hashes.set(at, crc);
    if (at > this.finals.last) this.finals.last = at;
  }
}

/** The first line of a finals file (see {@link formatFinals}): its format and version. */
export const FINALS_HEADER = '# netplay finals 1: FRAME CRC32 (of the state of each final frame)';

/**
 * A peer's final-state hashes as text (the file `netplay join --finals FILE` writes): the line
 * {@link FINALS_HEADER}, a comment line `# nick "NAME"` (the nick as a JSON string), then one line `FRAME CRC32` per final frame in
 * ascending frame order: the frame in decimal and the CRC-32 of that frame's state (the same hash
 * `netplay demo` compares and the browser demo's `window.netplay.finals` holds) as 8 lowercase hex
 * digits. Every line ends with `\n`; readers skip lines that start with `#`.
 */
export function formatFinals(finals: FinalStates): string {
  const frames = [...finals.hashes.keys()].sort((a, b) => a - b);
  const lines = [FINALS_HEADER, `# nick ${JSON.stringify(finals.name)}`];
  for (const f of frames) lines.push(`${f} ${finals.hashes.get(f)!.toString(16).padStart(8, '0')}`);
  return `${lines.join('\n')}\n`;
}

/** The outcome of {@link checkAgreement}. */
export interface Agreement {
  /** Whether every peer holds the same hash at `frame` and no common earlier frame differs. */
  readonly agree: boolean;
  /** The last frame final on every peer (-1: none). */
  readonly frame: number;
  /** Each peer's hash at `frame` (undefined: missing). */
  readonly hashes: readonly { readonly name: string; readonly crc: number | undefined }[];
  /** Earlier frames compared with the first peer's, and how many of them differ. */
  readonly compared: number;
  readonly differing: number;
}

/** Compares the final states of every peer: at the last frame all have, and at every shared frame. */
export function checkAgreement(peers: readonly FinalStates[]): Agreement {
  if (peers.length === 0) return { agree: false, frame: -1, hashes: [], compared: 0, differing: 0 };
  let frame = Number.POSITIVE_INFINITY;
  for (const p of peers) {
    let max = -1;
    for (const f of p.hashes.keys()) if (f > max) max = f;
    frame = Math.min(frame, max);
  }
  const hashes = peers.map((p) => ({ name: p.name, crc: p.hashes.get(frame) }));
  let compared = 0;
  let differing = 0;
  const first = peers[0]!;
  for (const [f, crc] of first.hashes) {
    for (const other of peers.slice(1)) {
      const h = other.hashes.get(f);
      if (h === undefined) continue;
      compared++;
      if (h !== crc) differing++;
    }
  }
  const agree = frame >= 0 && hashes.every((h) => h.crc !== undefined && h.crc === hashes[0]!.crc) && differing === 0;
  return { agree, frame, hashes, compared, differing };
}

/** The closing report of an agreement check, one line per peer. */
export function formatAgreement(a: Agreement): string {
  const lines = [`State hash (CRC-32) at frame ${a.frame}, the last frame final on every peer:`];
  for (const h of a.hashes)
    lines.push(`  ${h.name.padEnd(10)} ${h.crc === undefined ? 'missing' : h.crc.toString(16).padStart(8, '0')}`);
  lines.push(`${a.compared} earlier final states compared with ${a.hashes[0]?.name ?? '-'}'s: ${a.differing} differ.`);
  lines.push(a.agree ? 'OK: all peers agree.' : 'FAIL: the peers do not agree.');
  return lines.join('\n');
}

/** Writes `text` to the `--finals` file; a failure is a usage error, as for `record --out`. */
export async function writeFinalsFile(path: string, text: string): Promise<void> {
  try {
    await writeFile(path, text);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new CliError(ExitCode.Usage, `cannot write --finals ${path}: ${reason}`);
  }
}

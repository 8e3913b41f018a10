import { RETROARCH_MAX_DEVICES } from '@netplay/protocol';
import type { RetroArchClientEvent } from './client-events.js';
import { RetroArchError } from './errors.js';
import { RetroArchNetplayState } from './netplay-state.js';
import type { RetroArchCore } from './retroarch-core.js';

/** Options of a {@link RetroArchClientEmulator}. */
export interface RetroArchClientEmulatorOptions {
  /** The core (a `LibretroCore` fits) with the same game as the host. */
  readonly core: RetroArchCore;
  /** Asks the host for a savestate (the shell wires it to `RetroArchClient.requestSavestate`). */
  readonly requestSavestate: () => void;
  /** Ask for a savestate on a CRC mismatch, as RetroArch does. Default true. */
  readonly requestOnMismatch?: boolean;
  /**
   * After loading a savestate that follows a CRC mismatch of ours, run one frame and load the state
   * again, so that a core's state outside its savestate that counts `retro_run` calls (Nestopia's
   * turbo pulse) moves one frame against the host's: successive repairs walk through every phase.
   * A RetroArch client gets a new phase on every load by chance (it replays from the loaded frame
   * to the frame it had reached); without this a lockstep client keeps its phase, and a repair can
   * never hold. Default true.
   */
  readonly shiftOnRepair?: boolean;
  /** Frames of input and of our CRCs kept (a host CRC older than this is not checked). Default 600. */
  readonly history?: number;
  /** Receives every event synchronously. */
  readonly onEvent?: (event: RetroArchClientEmulatorEvent) => void;
}

/** What a {@link RetroArchClientEmulator} reports. */
export type RetroArchClientEmulatorEvent =
  /** A host CRC was compared with ours for the same frame. */
  | {
      /** `'crcChecked'`: a CRC comparison was made; `host !== ours` is a desync. */
      readonly type: 'crcChecked';
      /** The frame whose starting state both CRCs cover. */
      readonly frame: number;
      /** The CRC-32 the host sent, unsigned. */
      readonly host: number;
      /** The CRC-32 of our own padded state at the start of the same frame, unsigned. */
      readonly ours: number;
    }
  /** The host's savestate of `frame` was loaded. */
  | {
      /** `'stateLoaded'`: the core now holds the host's state. */
      readonly type: 'stateLoaded';
      /** The frame the state belongs to; the emulator runs on from it. */
      readonly frame: number;
      /** Size of the uncompressed state loaded, in bytes. */
      readonly bytes: number;
    }
  /** The core refused the host's savestate (`core-state`): the emulator waits for another and asks for one. */
  | {
      /** `'stateError'`: loading failed; a REQUEST_SAVESTATE follows. */
      readonly type: 'stateError';
      /** The frame of the refused state. */
      readonly frame: number;
      /** `core-state`, with the core's own message. */
      readonly error: RetroArchError;
    };

/** Counters of a {@link RetroArchClientEmulator}. */
export interface RetroArchClientEmulatorStats {
  /** Frames run (a frame run again after a savestate counts again). */
  frames: number;
  /** Host CRCs compared with ours (one `crcChecked` event each). */
  crcsChecked: number;
  /** Comparisons where the host's CRC differed from ours: desyncs seen. */
  crcMismatches: number;
  /** Host CRCs of frames we had no CRC for (before our first savestate, or older than `history`). */
  crcsSkipped: number;
  /** Host savestates loaded into the core (SYNC's first one, and every one after a request). */
  savestatesLoaded: number;
  /** REQUEST_SAVESTATEs sent (after a mismatch or a refused state; at most one outstanding). */
  savestateRequests: number;
  /** Host savestates the core refused (`stateError` events). */
  stateErrors: number;
  /** Savestate loads after a mismatch of ours that ran one extra frame (`shiftOnRepair`). */
  repairShifts: number;
}

const NONE = -1;
const CLIENTS = 32;
const WORDS = 4;

/**
 * Emulates a RetroArch 1.14 session next to a {@link RetroArchClient}, sans-I/O: feed it every
 * client event ({@link onClientEvent}) and every INPUT of ours ({@link onInputSent}). It loads the
 * host's savestates (SYNC is followed by one; a request brings another), runs frame F once every
 * playing client's input for F is in (the host's, other players' as the host forwards them, and
 * ours), and compares every CRC the host sends with the CRC-32 of its own padded state at the
 * start of that frame. A mismatch is counted and, like RetroArch, answered with
 * REQUEST_SAVESTATE (one outstanding at a time). Joypads only (one word per device; at most
 * `WORDS` (4) devices per client); devices beyond the core's ports are ignored.
 */
export class RetroArchClientEmulator {
  /** Live counters, updated in place as events are handled (read them any time; do not write). */
  readonly stats: RetroArchClientEmulatorStats = {
    frames: 0,
    crcsChecked: 0,
    crcMismatches: 0,
    crcsSkipped: 0,
    savestatesLoaded: 0,
    savestateRequests: 0,
    stateErrors: 0,
    repairShifts: 0,
  };
  private readonly core: RetroArchCore;
  private readonly ring: number;
  private readonly words: Uint32Array;
  private readonly tags: Int32Array;
  private readonly ourCrc: Uint32Array;
  private readonly ourCrcTag: Int32Array;
  private readonly pendingCrc = new Map<number, number>();
  private readonly clientDevices = new Uint32Array(CLIENTS);
  private readonly playingFrom = new Float64Array(CLIENTS).fill(Number.POSITIVE_INFINITY);
  private state: RetroArchNetplayState | undefined;
  private haveState = false;
  private requested = false;
  /** A check of ours mismatched and no savestate has been loaded since. */
  private outOfSync = false;
  private self = -1;
  private serverFrame = 0;
  private hostPlays = false;

  constructor(private readonly options: RetroArchClientEmulatorOptions) {
    this.core = options.core;
    this.ring = options.history ?? 600;
    this.words = new Uint32Array(this.ring * CLIENTS * WORDS);
    this.tags = new Int32Array(this.ring * CLIENTS).fill(NONE);
    this.ourCrc = new Uint32Array(this.ring);
    this.ourCrcTag = new Int32Array(this.ring).fill(NONE);
  }

  /** The next frame the core runs (meaningful once a savestate is loaded). */
  get frame(): number {
    return this.core.frame;
  }

  /** Whether a savestate of the host has been loaded (before it, nothing runs). */
  get running(): boolean {
    return this.haveState;
  }

  /** Feeds one event of the {@link RetroArchClient} (call it from the client's `onEvent`). */
  onClientEvent(e: RetroArchClientEvent): void {
    switch (e.type) {
      case 'synced': {
        const s = e.session.sync;
        this.self = s.client;
        this.serverFrame = s.frame;
        for (let d = 0; d < RETROARCH_MAX_DEVICES; d++) {
          const map = s.deviceClients[d] ?? 0;
          for (let c = 0; c < CLIENTS; c++) {
            if (map & (1 << c)) {
              this.clientDevices[c]! |= 1 << d;
              this.playingFrom[c] = 0;
            }
          }
        }
        this.hostPlays = this.clientDevices[0]! !== 0;
        return;
      }
      case 'savestate':
        this.load(e.frame, e.state);
        break;
      case 'input':
        this.store(e.client, e.frame, e.words);
        if (e.client === 0 && e.frame + 1 > this.serverFrame) this.serverFrame = e.frame + 1;
        break;
      case 'noInput':
        if (e.frame + 1 > this.serverFrame) this.serverFrame = e.frame + 1;
        break;
      case 'crc':
        this.onHostCrc(e.frame, e.crc >>> 0);
        break;
      case 'mode':
        if (e.client >= 0 && e.client < CLIENTS) {
          if (e.you) this.self = e.client;
          this.clientDevices[e.client] = e.playing ? e.devices : 0;
          this.playingFrom[e.client] = e.playing ? e.frame : Number.POSITIVE_INFINITY;
          if (e.client === 0) this.hostPlays = e.playing;
        }
        break;
      default:
        return;
    }
    this.pump();
  }

  /** Feeds one INPUT of ours (call it from the client's `onInputSent`). */
  onInputSent(frame: number, words: Uint32Array): void {
    if (this.self >= 0) this.store(this.self, frame, words);
    this.pump();
  }

  /** Runs every frame whose inputs are all in; returns the number run. */
  pump(): number {
    let n = 0;
    while (this.haveState && this.ready(this.core.frame)) {
      this.step();
      n++;
    }
    return n;
  }

  private store(client: number, frame: number, words: ArrayLike<number>): void {
    if (client < 0 || client >= CLIENTS || frame < 0) return;
    const slot = (frame % this.ring) * CLIENTS + client;
    this.tags[slot] = frame;
    const at = slot * WORDS;
    for (let i = 0; i < WORDS; i++) this.words[at + i] = i < words.length ? words[i]! : 0;
  }

  private has(client: number, frame: number): boolean {
    return this.tags[(frame % this.ring) * CLIENTS + client] === frame;
  }

  private ready(f: number): boolean {
    if (f >= this.serverFrame && !this.hostPlays) return false;
    for (let c = 0; c < CLIENTS; c++) {
      if (this.clientDevices[c] !== 0 && this.playingFrom[c]! <= f && !this.has(c, f)) return false;
    }
    return true;
  }

  private step(): void {
    const f = this.core.frame;
    const st = this.state;
    if (st !== undefined) {
      const slot = f % this.ring;
      this.ourCrc[slot] = st.crc();
      this.ourCrcTag[slot] = f;
      const host = this.pendingCrc.get(f);
      if (host !== undefined) {
        this.pendingCrc.delete(f);
        this.compare(f, host, this.ourCrc[slot]!);
      }
    }
    const ports = Math.min(this.core.ports, RETROARCH_MAX_DEVICES);
    for (let d = 0; d < ports; d++) {
      let word = 0;
      for (let c = 0; c < CLIENTS; c++) {
        const devices = this.clientDevices[c]!;
        if ((devices & (1 << d)) === 0 || this.playingFrom[c]! > f) continue;
        const index = popcount(devices & ((1 << d) - 1));
        if (index < WORDS) word |= this.words[((f % this.ring) * CLIENTS + c) * WORDS + index]!;
      }
      this.core.setInputMask(d, word & 0xffff);
    }
    this.core.advance();
    this.stats.frames++;
  }

  private onHostCrc(frame: number, crc: number): void {
    const slot = frame % this.ring;
    if (this.ourCrcTag[slot] === frame) {
      this.compare(frame, crc, this.ourCrc[slot]!);
    } else if (this.haveState && frame >= this.core.frame) {
      this.pendingCrc.set(frame, crc);
      if (this.pendingCrc.size > this.ring) {
        for (const k of this.pendingCrc.keys()) {
          this.pendingCrc.delete(k);
          break;
        }
      }
    } else {
      this.stats.crcsSkipped++;
    }
  }

  private compare(frame: number, host: number, ours: number): void {
    this.stats.crcsChecked++;
    this.options.onEvent?.({ type: 'crcChecked', frame, host, ours });
    if (host === ours) {
      this.outOfSync = false;
      return;
    }
    this.outOfSync = true;
    this.stats.crcMismatches++;
    if ((this.options.requestOnMismatch ?? true) && !this.requested) this.request();
  }

  private request(): void {
    this.requested = true;
    this.stats.savestateRequests++;
    this.options.requestSavestate();
  }

  private load(frame: number, state: Uint8Array): void {
    this.requested = false;
    try {
      this.core.loadRaw(state, frame);
      if (this.outOfSync && (this.options.shiftOnRepair ?? true)) {
        // One frame more than the host ran, then the same state again (see shiftOnRepair).
        this.core.advance();
        this.core.loadRaw(state, frame);
        this.stats.repairShifts++;
      }
    } catch (e) {
      const error = new RetroArchError(
        'core-state',
        `the core refused the host's savestate of frame ${frame} (${state.length} bytes): ${e instanceof Error ? e.message : String(e)}`,
      );
      this.haveState = false;
      this.stats.stateErrors++;
      this.options.onEvent?.({ type: 'stateError', frame, error });
      this.request();
      return;
    }
    if (this.state === undefined || this.state.size !== state.length) {
      this.state = new RetroArchNetplayState(this.core, state.length);
    }
    // Our CRCs of frames from here on were of the old timeline.
    this.ourCrcTag.fill(NONE);
    this.haveState = true;
    this.outOfSync = false;
    this.stats.savestatesLoaded++;
    this.options.onEvent?.({ type: 'stateLoaded', frame, bytes: state.length });
  }
}

function popcount(x: number): number {
  let n = 0;
  for (let v = x >>> 0; v !== 0; v &= v - 1) n++;
  return n;
}

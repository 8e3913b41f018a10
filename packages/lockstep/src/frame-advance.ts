import { DecodeError, EncodeError } from '@netplay/protocol';
import { type ChannelSpec, Prng } from '@netplay/transport';
import { LockstepError } from './errors.js';
import {
  decodeFaMessage,
  encodeFaAdvance,
  encodeFaEvent,
  encodeFaLatencyInfo,
  encodeFaPing,
  encodeFaPong,
  type FrameAdvanceEvent,
} from './frame-advance-wire.js';
import { PingHistory, type PingHistoryOptions } from './latency.js';
import type { Envelope, FrameRequest, LockstepScheduler } from './types.js';

/** Channels of the frame-advance mode: events and advances reliable and ordered (seed 004), pings apart. */
export const FRAME_ADVANCE_CHANNELS: readonly ChannelSpec[] = Object.freeze([
  { name: 'sched', kind: 'reliable' },
  { name: 'ping', kind: 'unreliable' },
]);

/** Options of {@link FrameAdvancePeer}. */
export interface FrameAdvanceOptions {
  /** This peer's client id, 0..65535: unique, known to every peer (the event-order tie-breaker). */
  readonly id: number;
  /** The port this peer's local input drives (-1 for none). */
  readonly port: number;
  /** Ids of the other peers. */
  readonly peers: readonly number[];
  /** Ports of the core. */
  readonly ports: number;
  /** Input bytes per port. */
  readonly inputBytes: number;
  /** Frame duration in ms (seed 004: 20 ms Amiga PAL frames). */
  readonly frameMs: number;
  /** Time frame 0 starts on this peer's clock (every peer starts a frame at the same time; default 0). */
  readonly startMs?: number;
  /** Seed of the PRNG that draws the events' random order keys. */
  readonly seed: number;
  /** Extra delay in ms added to the latency estimate (seed 004: "a configurable delay"; default 0). */
  readonly extraDelayMs?: number;
  /** Use the largest one-way estimate of the whole session, so every player gets the same latency (default false). */
  readonly equalize?: boolean;
  /** Ms between pings to each peer (default 100). */
  readonly pingIntervalMs?: number;
  /** Ping history options (size, percentile, initial estimate). */
  readonly history?: PingHistoryOptions;
  /** Known one-way times (ms) per peer id, used until pings measure them (seed 004's "complete knowledge"). */
  readonly initialOneWayMs?: Readonly<Record<number, number>>;
}

interface Remote {
  readonly history: PingHistory;
  advanced: number;
  maxOneWay: number;
}

/**
 * FS-UAE's peer-to-peer frame-advance scheduler (seed 004). An input event made at time t is
 * scheduled for the earliest frame whose start every peer can receive it by: the first frame
 * starting at or after t + (largest one-way estimate to any peer) + extra delay. Each peer tells
 * every other, with an advance message, once it will schedule nothing more for a frame; a frame
 * runs when every peer's advance for it arrived. Events of a frame apply in the order of
 * (random key, client id), then payload (as `compareFsUaeInputEvents` of @netplay/protocol). One-way times come from a ping history per peer, taken at a
 * high percentile (conservative).
 */
export class FrameAdvancePeer implements LockstepScheduler {
  readonly id: number;
  readonly port: number;
  readonly outbox: Envelope[] = [];
  /** Messages dropped because they did not decode or broke the protocol. */
  dropped = 0;
  private readonly ports: number;
  private readonly inputBytes: number;
  private readonly frameMs: number;
  private readonly startMs: number;
  private readonly extraDelayMs: number;
  private readonly equalize: boolean;
  private readonly pingIntervalMs: number;
  private readonly prng: Prng;
  private readonly remotes = new Map<number, Remote>();
  private readonly events = new Map<number, FrameAdvanceEvent[]>();
  private readonly inputs: Uint8Array;
  private readonly local: Uint8Array;
  private readonly sentLocal: Uint8Array;
  private next = 0;
  private promised = -1;
  private pingSeq = 0;
  private nextPingAt: number;

  constructor(options: FrameAdvanceOptions) {
    const { ports, inputBytes, frameMs } = options;
    if (!Number.isInteger(ports) || ports < 1 || ports > 255)
      throw new LockstepError('bad-argument', `ports must be 1..255, got ${ports}`);
    if (!Number.isInteger(inputBytes) || inputBytes < 1 || inputBytes > 1024)
      throw new LockstepError('bad-argument', `inputBytes must be 1..1024, got ${inputBytes}`);
    if (!(frameMs > 0)) throw new LockstepError('bad-argument', `frameMs must be > 0, got ${frameMs}`);
    if (!Number.isInteger(options.port) || options.port < -1 || options.port >= ports)
      throw new LockstepError('bad-argument', `port ${options.port} is not -1..${ports - 1}`);
    if (!Number.isInteger(options.id) || options.id < 0 || options.id > 0xffff)
      throw new LockstepError('bad-argument', `id must be 0..65535 (an FS-UAE client id), got ${options.id}`);
    this.id = options.id;
    this.port = options.port;
    this.ports = ports;
    this.inputBytes = inputBytes;
    this.frameMs = frameMs;
    this.startMs = options.startMs ?? 0;
    this.extraDelayMs = options.extraDelayMs ?? 0;
    if (!(this.extraDelayMs >= 0)) throw new LockstepError('bad-argument', 'extraDelayMs must be >= 0');
    this.equalize = options.equalize === true;
    this.pingIntervalMs = options.pingIntervalMs ?? 100;
    if (!(this.pingIntervalMs > 0)) throw new LockstepError('bad-argument', 'pingIntervalMs must be > 0');
    this.prng = new Prng(options.seed);
    this.nextPingAt = this.startMs - 1e9;
    this.inputs = new Uint8Array(ports * inputBytes);
    this.local = new Uint8Array(inputBytes);
    this.sentLocal = new Uint8Array(inputBytes);
    for (const p of options.peers) {
      if (p === this.id) throw new LockstepError('bad-argument', 'a peer cannot list itself');
      const initial = options.initialOneWayMs?.[p];
      const history = new PingHistory({
        ...options.history,
        ...(initial !== undefined ? { initialOneWayMs: initial } : {}),
      });
      this.remotes.set(p, { history, advanced: -1, maxOneWay: 0 });
    }
  }

  get nextFrame(): number {
    return this.next;
  }

  /** The frame this peer has promised to schedule nothing more for (its last advance message). */
  get promisedFrame(): number {
    return this.promised;
  }

  /** The one-way estimate to `peer` in ms. */
  oneWayMs(peer: number): number {
    const r = this.remotes.get(peer);
    if (!r) throw new LockstepError('bad-argument', `unknown peer ${peer}`);
    return r.history.oneWayMs();
  }

  /** The delay an input of this peer gets before every peer can have it: largest estimate (or the session's, equalized) + extra. */
  delayMs(): number {
    let d = 0;
    for (const r of this.remotes.values()) {
      d = Math.max(d, r.history.oneWayMs());
      if (this.equalize) d = Math.max(d, r.maxOneWay);
    }
    return d + this.extraDelayMs;
  }

  /** The frame an input made at `now` would be scheduled for. */
  targetFrame(now: number): number {
    return Math.max(this.promised + 1, this.bound(now) + 1);
  }

  receive(from: number, channel: string, data: Uint8Array, now: number): void {
    const r = this.remotes.get(from);
    if (!r) {
      this.dropped++;
      return;
    }
    let m: ReturnType<typeof decodeFaMessage>;
    try {
      m = decodeFaMessage(data, this.inputBytes);
    } catch (e) {
      if (e instanceof DecodeError) {
        this.dropped++;
        return;
      }
      throw e;
    }
    const sched = channel === 'sched';
    if (m.type === 'event' && sched) {
      const e = m.event;
      // An event must come before its sender's advance for that frame, for a port that exists.
      if (e.frame <= r.advanced || e.frame < this.next || e.port >= this.ports || e.client !== from) {
        this.dropped++;
        return;
      }
      this.addEvent(e);
    } else if (m.type === 'advance' && sched) {
      if (m.frame > r.advanced) r.advanced = m.frame;
    } else if (m.type === 'ping' && !sched) {
      try {
        this.outbox.push({ to: from, channel: 'ping', data: encodeFaPong(m.seq, m.sentAtUs, now) });
      } catch (e) {
        if (!(e instanceof EncodeError)) throw e;
        this.dropped++;
      }
    } else if (m.type === 'pong' && !sched) {
      const rtt = now - m.pingSentAtUs / 1000;
      if (rtt >= 0) r.history.add(rtt);
    } else if (m.type === 'latency' && !sched) {
      r.maxOneWay = m.maxOneWayMs;
    } else this.dropped++;
  }

  setLocalInput(input: Uint8Array, now: number): void {
    if (input.length !== this.inputBytes) throw new LockstepError('bad-argument', 'input size');
    this.local.set(input);
    if (this.port < 0) return;
    let changed = false;
    for (let i = 0; i < input.length; i++) if (input[i] !== this.sentLocal[i]) changed = true;
    if (!changed) return;
    this.sentLocal.set(input);
    this.tick(now);
    const e: FrameAdvanceEvent = {
      frame: this.promised + 1,
      key: this.prng.nextU32(),
      client: this.id,
      port: this.port,
      input: input.slice(),
    };
    this.addEvent(e);
    const data = encodeFaEvent(e);
    for (const p of this.remotes.keys()) this.outbox.push({ to: p, channel: 'sched', data });
  }

  tick(now: number): void {
    const bound = this.bound(now);
    if (bound > this.promised) {
      this.promised = bound;
      const data = encodeFaAdvance(bound);
      for (const p of this.remotes.keys()) this.outbox.push({ to: p, channel: 'sched', data });
    }
    if (now >= this.nextPingAt) {
      this.nextPingAt = now + this.pingIntervalMs;
      const data = encodeFaPing(this.pingSeq++, now);
      const info = encodeFaLatencyInfo(this.ownMax());
      for (const p of this.remotes.keys()) {
        this.outbox.push({ to: p, channel: 'ping', data });
        this.outbox.push({ to: p, channel: 'ping', data: info });
      }
    }
  }

  dueAt(): number {
    return this.startMs + this.next * this.frameMs;
  }

  nextWakeAt(_now: number): number {
    const advanceAt = this.startMs + (this.promised + 1) * this.frameMs - this.delayMs();
    return Math.min(advanceAt, this.nextPingAt);
  }

  poll(now: number): FrameRequest | undefined {
    if (now < this.dueAt()) return undefined;
    this.tick(now);
    const f = this.next;
    if (this.promised < f) return undefined;
    for (const r of this.remotes.values()) if (r.advanced < f) return undefined;
    const list = this.events.get(f);
    if (list) {
      list.sort(compareEvents);
      for (const e of list) this.inputs.set(e.input, e.port * this.inputBytes);
      this.events.delete(f);
    }
    this.next++;
    return { frame: f, inputs: this.inputs, command: 0 };
  }

  private bound(now: number): number {
    // The last frame an input made now can no longer reach everyone in time for.
    // Computed so that `now >= startMs + (bound + 1) * frameMs - delay` never holds afterwards,
    // the same expression nextWakeAt uses (no float disagreement, no zero-delay wake loop).
    const d = this.delayMs();
    let b = Math.floor((now - this.startMs + d) / this.frameMs);
    while (this.startMs + (b + 1) * this.frameMs - d <= now) b++;
    return b;
  }

  private ownMax(): number {
    let d = 0;
    for (const r of this.remotes.values()) d = Math.max(d, r.history.oneWayMs());
    return d;
  }

  private addEvent(e: FrameAdvanceEvent): void {
    let list = this.events.get(e.frame);
    if (!list) {
      list = [];
      this.events.set(e.frame, list);
    }
    list.push(e);
  }
}

/** (random key, client id), then port and input bytes: the order of `compareFsUaeInputEvents`. */
function compareEvents(a: FrameAdvanceEvent, b: FrameAdvanceEvent): number {
  if (a.key !== b.key) return a.key - b.key;
  if (a.client !== b.client) return a.client - b.client;
  if (a.port !== b.port) return a.port - b.port;
  const n = Math.min(a.input.length, b.input.length);
  for (let i = 0; i < n; i++) if (a.input[i] !== b.input[i]) return a.input[i]! - b.input[i]!;
  return a.input.length - b.input.length;
}

import {
  DecodeError,
  decodeFceuClientText,
  decodeFceuServerInit,
  decodeFceuServerTcpMessage,
  decodeFceuUdpFrame,
  decodeFceuUdpInput,
  EncodeError,
  encodeFceuClientText,
  encodeFceuServerInit,
  encodeFceuServerText,
  encodeFceuTcpFrame,
  encodeFceuUdpFrame,
  encodeFceuUdpInput,
  FCEU_TCP_FRAME_SIZE,
  FCEU_UDP_FRAME_SIZE,
  FCEU_UDP_INPUT_SIZE,
  type FceuFrameData,
  fceuServerTextSize,
  isFceuCommand,
} from '@netplay/protocol';
import { applyDelta, DeltaError, pageDelta } from '@netplay/state';
import type { ChannelSpec } from '@netplay/transport';
import { LockstepError } from './errors.js';
import type { Envelope, FrameRequest, LockstepScheduler, StatefulScheduler } from './types.js';

/**
 * Channels of the client-server mode. Frame data travels twice, as FCE Ultra sends it over TCP
 * and UDP: reliably (`frame`) and unreliably (`frame-u`, whichever arrives first wins).
 */
export const CLIENT_SERVER_CHANNELS: readonly ChannelSpec[] = Object.freeze([
  { name: 'frame', kind: 'reliable' },
  { name: 'frame-u', kind: 'unreliable' },
  { name: 'input', kind: 'unreliable' },
  { name: 'control', kind: 'reliable' },
  { name: 'chat', kind: 'reliable' },
  { name: 'sync', kind: 'reliable' },
]);

/** Options shared by {@link ClientServerServer} and {@link ClientServerClient}. */
export interface ClientServerOptions {
  /** This peer's id. */
  readonly id: number;
  /** Ports (players) of the core. */
  readonly ports: number;
  /** Input bytes per port. */
  readonly inputBytes: number;
  /** Frame duration in ms (e.g. 1000/60). */
  readonly frameMs: number;
  /** Time frame 0 is due (server only; default 0). */
  readonly startMs?: number;
  /** Also send frame data unreliably (default true), as FCE Ultra does over UDP. */
  readonly unreliableCopy?: boolean;
  /** State layout hash written into late-join deltas and checked by the joiner (default 0). */
  readonly layoutHash?: bigint;
  /** Page size of late-join deltas (default 4096). */
  readonly pageSize?: number;
}

/**
 * Whether a core shape uses FCE Ultra's own wire formats (seed 002: four 1-byte controllers and a
 * command byte). Other shapes use the generic layout documented in the README.
 */
export function isFceuShape(ports: number, inputBytes: number): boolean {
  return ports <= 4 && inputBytes === 1;
}

function checkShape(o: ClientServerOptions): void {
  if (!Number.isInteger(o.ports) || o.ports < 1 || o.ports > 255)
    throw new LockstepError('bad-argument', `ports must be 1..255, got ${o.ports}`);
  if (!Number.isInteger(o.inputBytes) || o.inputBytes < 1 || o.inputBytes > 1024)
    throw new LockstepError('bad-argument', `inputBytes must be 1..1024, got ${o.inputBytes}`);
  if (!(o.frameMs > 0)) throw new LockstepError('bad-argument', `frameMs must be > 0, got ${o.frameMs}`);
}

/** A chat line as the server relays it. */
export interface ChatLine {
  /** Peer id of the author. */
  readonly from: number;
  readonly text: string;
}

const GENERIC_FRAME_HEADER = 5;

function putU32(t: Uint8Array, o: number, v: number): void {
  t[o] = v >>> 24;
  t[o + 1] = v >>> 16;
  t[o + 2] = v >>> 8;
  t[o + 3] = v;
}

function getU32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

/** Chat text as the FCE Ultra codec accepts it: Latin-1 without NUL, at most 255 characters. */
function cleanText(text: string): string {
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    out += c === 0 || c > 0xff ? '?' : ch;
    if (out.length >= 200) break;
  }
  return out;
}

/**
 * The FCE Ultra server (seed 002): every frame it collates the latest input of every client (the
 * UDP rule: the packet with the highest counter wins) and its own, adds at most one pending
 * command, runs the frame and broadcasts its data. It never waits for clients. It relays chat.
 */
export class ClientServerServer implements LockstepScheduler, StatefulScheduler {
  readonly id: number;
  readonly outbox: Envelope[] = [];
  /** Chat lines seen, in order. */
  readonly chat: ChatLine[] = [];
  /** Messages dropped because they did not decode or broke the protocol. */
  dropped = 0;
  private readonly ports: number;
  private readonly inputBytes: number;
  private readonly frameMs: number;
  private readonly startMs: number;
  private readonly fceu: boolean;
  private readonly udpCopy: boolean;
  private readonly magic: number;
  private localPort: number;
  private next = 0;
  private readonly inputs: Uint8Array;
  private readonly local: Uint8Array;
  private readonly clients = new Map<number, { port: number; counter: number }>();
  private readonly commands: number[] = [];
  private readonly frameData: FceuFrameData = { controllers: new Uint8Array(4), command: 0 };
  private readonly layoutHash: bigint;
  private readonly pageSize: number;
  private initialState: Uint8Array | undefined;
  private readonly lateJoiners: number[] = [];

  constructor(
    options: ClientServerOptions & {
      /** The server's own player port, or -1 for a server without a player (default 0). */
      readonly port?: number;
      /** The UDP magic number (FCE Ultra: as random as possible; pass one from a seeded PRNG). */
      readonly magic?: number;
    },
  ) {
    checkShape(options);
    this.id = options.id;
    this.ports = options.ports;
    this.inputBytes = options.inputBytes;
    this.frameMs = options.frameMs;
    this.startMs = options.startMs ?? 0;
    this.fceu = isFceuShape(options.ports, options.inputBytes);
    this.udpCopy = options.unreliableCopy !== false;
    this.magic = (options.magic ?? 0x4e504c53) >>> 0;
    this.localPort = options.port ?? 0;
    this.layoutHash = options.layoutHash ?? 0n;
    this.pageSize = options.pageSize ?? 4096;
    if (this.localPort >= this.ports) throw new LockstepError('bad-argument', `port ${this.localPort} >= ports`);
    this.inputs = new Uint8Array(this.ports * this.inputBytes);
    this.local = new Uint8Array(this.inputBytes);
  }

  get port(): number {
    return this.localPort;
  }

  get nextFrame(): number {
    return this.next;
  }

  /** Accepts peer `peer` as the player on `port` and sends it the init message. */
  addClient(peer: number, port: number): void {
    if (!Number.isInteger(port) || port < 0 || port >= this.ports || port === this.localPort)
      throw new LockstepError('bad-argument', `port ${port} is not a free player port`);
    for (const c of this.clients.values())
      if (c.port === port) throw new LockstepError('bad-argument', `port ${port} is taken`);
    this.clients.set(peer, { port, counter: -1 });
    let data: Uint8Array;
    if (this.fceu) {
      data = new Uint8Array(12);
      encodeFceuServerInit({ udpPort: 0, player: port, magic: this.magic }, data);
    } else {
      data = new Uint8Array(8);
      putU32(data, 0, port);
      putU32(data, 4, this.magic);
    }
    this.outbox.push({ to: peer, channel: 'control', data });
    // A client added once the game runs gets the state at the start of the next frame (a page
    // delta against the power-on state) and every frame from there.
    if (this.next > 0) this.lateJoiners.push(peer);
  }

  wantsState(frame: number): boolean {
    return (frame === 0 && this.initialState === undefined) || (frame === this.next && this.lateJoiners.length > 0);
  }

  storeState(frame: number, state: Uint8Array): void {
    if (frame === 0 && this.initialState === undefined) this.initialState = state;
    if (this.lateJoiners.length === 0 || frame !== this.next || !this.initialState) return;
    const delta = pageDelta(this.initialState, state, { layoutHash: this.layoutHash, pageSize: this.pageSize });
    const data = new Uint8Array(4 + delta.length);
    putU32(data, 0, frame);
    data.set(delta, 4);
    for (const peer of this.lateJoiners.splice(0))
      if (this.clients.has(peer)) this.outbox.push({ to: peer, channel: 'sync', data });
  }

  takeLoad(): undefined {
    return undefined;
  }

  /** Forgets a client; its port reads as neutral from the next frame on. */
  removeClient(peer: number): void {
    const c = this.clients.get(peer);
    if (!c) return;
    this.inputs.fill(0, c.port * this.inputBytes, (c.port + 1) * this.inputBytes);
    this.clients.delete(peer);
  }

  /** Queues a machine command (FCE Ultra command byte); it applies on a coming frame, one per frame. */
  command(code: number): void {
    if (!isFceuCommand(code) || code === 0) throw new LockstepError('bad-argument', `unknown command ${code}`);
    this.commands.push(code);
  }

  /** Sends a chat line from the server's player to every client. */
  say(text: string): void {
    this.relay(this.id, text);
  }

  receive(from: number, channel: string, data: Uint8Array): void {
    const c = this.clients.get(from);
    if (!c) {
      this.dropped++;
      return;
    }
    try {
      if (channel === 'input') {
        let counter: number;
        let input: Uint8Array;
        if (this.fceu) {
          const m = decodeFceuUdpInput(data);
          if (m.magic !== this.magic) {
            this.dropped++;
            return;
          }
          counter = m.counter;
          input = data.subarray(FCEU_UDP_INPUT_SIZE - 1);
        } else {
          if (data.length !== 4 + this.inputBytes) throw new DecodeError('bad-length', 0, 'input size');
          counter = getU32(data, 0);
          input = data.subarray(4);
        }
        // Seed 002: use the packet with the highest counter, and remember it.
        if (counter <= c.counter) return;
        c.counter = counter;
        this.inputs.set(input, c.port * this.inputBytes);
      } else if (channel === 'chat') {
        this.relay(from, decodeFceuClientText(data));
      } else if (channel === 'control') {
        if (data.length !== 1 || !isFceuCommand(data[0]!) || data[0] === 0)
          throw new DecodeError('bad-value', 0, 'command');
        this.commands.push(data[0]!);
      } else this.dropped++;
    } catch (e) {
      if (e instanceof DecodeError) this.dropped++;
      else throw e;
    }
  }

  setLocalInput(input: Uint8Array): void {
    if (input.length !== this.inputBytes) throw new LockstepError('bad-argument', 'input size');
    this.local.set(input);
  }

  tick(): void {}

  dueAt(): number {
    return this.startMs + this.next * this.frameMs;
  }

  nextWakeAt(): number {
    return Infinity;
  }

  poll(now: number): FrameRequest | undefined {
    if (now < this.dueAt()) return undefined;
    if (this.localPort >= 0) this.inputs.set(this.local, this.localPort * this.inputBytes);
    const frame = this.next++;
    const command = this.commands.shift() ?? 0;
    this.broadcastFrame(frame, command);
    return { frame, inputs: this.inputs, command };
  }

  private broadcastFrame(frame: number, command: number): void {
    let reliable: Uint8Array;
    let unreliable: Uint8Array | undefined;
    if (this.fceu) {
      const fd = this.frameData;
      fd.controllers.fill(0);
      fd.controllers.set(this.inputs);
      fd.command = command;
      reliable = new Uint8Array(FCEU_TCP_FRAME_SIZE);
      encodeFceuTcpFrame(frame, fd, reliable);
      if (this.udpCopy) {
        unreliable = new Uint8Array(FCEU_UDP_FRAME_SIZE);
        encodeFceuUdpFrame(this.magic, frame, fd, unreliable);
      }
    } else {
      reliable = new Uint8Array(GENERIC_FRAME_HEADER + this.inputs.length);
      putU32(reliable, 0, frame);
      reliable[4] = command;
      reliable.set(this.inputs, GENERIC_FRAME_HEADER);
      if (this.udpCopy) unreliable = reliable;
    }
    for (const peer of this.clients.keys()) {
      this.outbox.push({ to: peer, channel: 'frame', data: reliable });
      if (unreliable) this.outbox.push({ to: peer, channel: 'frame-u', data: unreliable });
    }
  }

  private relay(from: number, text: string): void {
    const line = `${from}: ${cleanText(text)}`.slice(0, 255);
    this.chat.push({ from, text: line });
    const data = new Uint8Array(fceuServerTextSize(line));
    encodeFceuServerText(line, data);
    for (const peer of this.clients.keys()) this.outbox.push({ to: peer, channel: 'chat', data });
  }
}

/**
 * An FCE Ultra client (seed 002): sends its controller to the server on every change and every
 * frame, and runs frame N only once the server's data for frame N arrived (it blocks). Duplicates
 * are discarded; frames that arrive early are kept until their turn.
 */
export class ClientServerClient implements LockstepScheduler, StatefulScheduler {
  readonly id: number;
  readonly outbox: Envelope[] = [];
  /** Chat lines received from the server, in order (already prefixed with the author's id). */
  readonly chat: string[] = [];
  /** Messages dropped because they did not decode or broke the protocol. */
  dropped = 0;
  private readonly server: number;
  private readonly ports: number;
  private readonly inputBytes: number;
  private readonly frameMs: number;
  private readonly fceu: boolean;
  private localPort = -1;
  private magic = 0;
  private next = 0;
  private counter = 0;
  private lastRunAt = Infinity;
  private readonly local: Uint8Array;
  private readonly early = new Map<number, { inputs: Uint8Array; command: number }>();
  private readonly inputs: Uint8Array;
  private readonly layoutHash: bigint;
  private initialState: Uint8Array | undefined;
  private load: { frame: number; state: Uint8Array } | undefined;
  private synced = false;

  constructor(options: ClientServerOptions & { /** Peer id of the server. */ readonly server: number }) {
    checkShape(options);
    this.id = options.id;
    this.server = options.server;
    this.ports = options.ports;
    this.inputBytes = options.inputBytes;
    this.frameMs = options.frameMs;
    this.fceu = isFceuShape(options.ports, options.inputBytes);
    this.local = new Uint8Array(this.inputBytes);
    this.inputs = new Uint8Array(this.ports * this.inputBytes);
    this.layoutHash = options.layoutHash ?? 0n;
  }

  wantsState(frame: number): boolean {
    return frame === 0 && this.initialState === undefined;
  }

  storeState(frame: number, state: Uint8Array): void {
    if (frame === 0 && this.initialState === undefined) this.initialState = state;
  }

  takeLoad(): { frame: number; state: Uint8Array } | undefined {
    const l = this.load;
    this.load = undefined;
    return l;
  }

  get port(): number {
    return this.localPort;
  }

  get nextFrame(): number {
    return this.next;
  }

  /** Asks the server to apply a machine command on a coming frame. */
  requestCommand(code: number): void {
    if (!isFceuCommand(code) || code === 0) throw new LockstepError('bad-argument', `unknown command ${code}`);
    this.outbox.push({ to: this.server, channel: 'control', data: Uint8Array.of(code) });
  }

  /** Sends a chat line (Latin-1; other characters become `?`; at most 200 characters). */
  say(text: string): void {
    const t = cleanText(text);
    const data = new Uint8Array(t.length + 1);
    encodeFceuClientText(t, data);
    this.outbox.push({ to: this.server, channel: 'chat', data });
  }

  receive(from: number, channel: string, data: Uint8Array, now: number): void {
    if (from !== this.server) {
      this.dropped++;
      return;
    }
    try {
      if (channel === 'frame' || channel === 'frame-u') this.onFrame(channel, data, now);
      else if (channel === 'sync') {
        // Late join: the state at the start of frame S, as a page delta against power-on.
        if (this.synced || this.next !== 0 || !this.initialState || data.length < 4)
          throw new DecodeError('bad-value', 0, 'unexpected sync');
        const frame = getU32(data, 0);
        const state = applyDelta(this.initialState, data.subarray(4), { layoutHash: this.layoutHash });
        this.synced = true;
        this.load = { frame, state };
        this.next = frame;
        for (const f of [...this.early.keys()]) if (f < frame) this.early.delete(f);
      } else if (channel === 'control') {
        if (this.fceu) {
          const init = decodeFceuServerInit(data);
          this.localPort = init.player;
          this.magic = init.magic;
        } else {
          if (data.length !== 8) throw new DecodeError('bad-length', 0, 'init is 8 bytes');
          const port = getU32(data, 0);
          if (port >= this.ports) throw new DecodeError('bad-value', 0, 'port');
          this.localPort = port;
          this.magic = getU32(data, 4);
        }
        this.sendInput();
      } else if (channel === 'chat') {
        const m = decodeFceuServerTcpMessage(data);
        if (m.kind === 'text') this.chat.push(m.text);
        else this.dropped++;
      } else this.dropped++;
    } catch (e) {
      if (e instanceof DecodeError || e instanceof EncodeError || e instanceof DeltaError) this.dropped++;
      else throw e;
    }
  }

  setLocalInput(input: Uint8Array): void {
    if (input.length !== this.inputBytes) throw new LockstepError('bad-argument', 'input size');
    let changed = false;
    for (let i = 0; i < input.length; i++) if (input[i] !== this.local[i]) changed = true;
    this.local.set(input);
    if (changed) this.sendInput();
  }

  tick(): void {}

  dueAt(): number {
    return this.lastRunAt + this.frameMs;
  }

  nextWakeAt(): number {
    return Infinity;
  }

  poll(now: number): FrameRequest | undefined {
    if (this.load) return undefined;
    const f = this.early.get(this.next);
    if (!f) return undefined;
    this.early.delete(this.next);
    this.inputs.set(f.inputs);
    const frame = this.next++;
    this.lastRunAt = now;
    this.sendInput();
    return { frame, inputs: this.inputs, command: f.command };
  }

  private onFrame(channel: string, data: Uint8Array, _now: number): void {
    let frame: number;
    let command: number;
    let inputs: Uint8Array;
    if (this.fceu) {
      let m: { counter: number; frame: FceuFrameData };
      if (channel === 'frame') {
        const t = decodeFceuServerTcpMessage(data);
        if (t.kind !== 'frame') throw new DecodeError('bad-value', 0, 'text on the frame channel');
        m = t;
      } else {
        const u = decodeFceuUdpFrame(data);
        if (u.magic !== this.magic) {
          this.dropped++;
          return;
        }
        m = u;
      }
      frame = m.counter;
      command = m.frame.command;
      inputs = m.frame.controllers.subarray(0, this.ports);
    } else {
      if (data.length !== GENERIC_FRAME_HEADER + this.inputs.length)
        throw new DecodeError('bad-length', 0, 'frame size');
      frame = getU32(data, 0);
      command = data[4]!;
      inputs = data.subarray(GENERIC_FRAME_HEADER);
    }
    // Duplicates (the other channel's copy) and frames already run are discarded.
    if (frame < this.next || this.early.has(frame)) return;
    if (frame > this.next + 1_000_000) throw new DecodeError('bad-value', 0, 'frame too far ahead');
    this.early.set(frame, { inputs: inputs.slice(), command });
  }

  private sendInput(): void {
    if (this.localPort < 0) return;
    const counter = this.counter++;
    let data: Uint8Array;
    if (this.fceu) {
      data = new Uint8Array(FCEU_UDP_INPUT_SIZE);
      encodeFceuUdpInput(this.magic, counter, this.local[0]!, data);
    } else {
      data = new Uint8Array(4 + this.inputBytes);
      putU32(data, 0, counter);
      data.set(this.local, 4);
    }
    this.outbox.push({ to: this.server, channel: 'input', data });
  }
}

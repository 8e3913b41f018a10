import {
  DecodeError,
  decodeRetroArchHeader,
  decodeRetroArchPayload,
  FrameDecoder,
  RETROARCH_HEADER_SIZE,
  RETROARCH_MAX_DEVICES,
  RetroArchCommand,
  RetroArchHeaderMagic,
  type RetroArchMessage,
  retroArchHostHeader,
  retroArchPasswordHash,
} from '@netplay/protocol';
import { type AttemptLimiter, DEFAULT_RATE_LIMITS, RateBudget, type RateLimits } from '@netplay/transport';
import type { RetroArchCoreInfo } from './client-options.js';
import { RetroArchError } from './errors.js';
import { OutputQueue } from './output.js';

/** What a {@link RetroArchHostConnection} is doing. */
export type RetroArchHostState = 'handshake' | 'spectating' | 'playing' | 'closed';

/** Options of a {@link RetroArchHostConnection}. */
export interface RetroArchHostOptions {
  /** Our nick (the host's). Default `netplay-host`. */
  readonly nick?: string;
  /** Core and content identity sent in INFO; a client whose core name differs (case-insensitively) is refused. */
  readonly info: RetroArchCoreInfo;
  /** A password clients must send; needs a {@link salt}. */
  readonly password?: string;
  /** The non-zero password salt sent in our header (the caller draws it: no randomness here). */
  readonly salt?: number;
  /** The client number given to this connection (1..31). Default 1. */
  readonly clientNumber?: number;
  /** The device (port) given to the client when it asks to play. Default 1 (player 2); device 0 is the designated peer's. */
  readonly playerDevice?: number;
  /**
   * SYNC's device → clients bitmaps: who plays each device in the relayed session (RetroArch
   * rejects INPUT from a client it was not told about). Default: device 0 played by client 0.
   */
  readonly deviceClients?: readonly number[];
  /**
   * The live session when SYNC is sent (an emulating host advances frames during the handshake):
   * SYNC's frame and device → clients map. Overrides the constructor's frame and {@link deviceClients}.
   */
  readonly session?: () => {
    /** The host's current frame: SYNC's frame, where the client starts. */
    readonly frame: number;
    /** Per device (port), the bitmap of clients playing it; default: the option's {@link deviceClients}. */
    readonly deviceClients?: readonly number[];
  };
  /** Whether a PLAY may be granted now; false answers MODE_REFUSED reason 2 (no slots). Default: always. */
  readonly canPlay?: () => boolean;
  /** Device type per port sent in SYNC (default: 16 joypads, as RetroArch 1.14 with Nestopia sends). */
  readonly devices?: readonly number[];
  /** Sent as SETTING_ALLOW_PAUSING. Default false. */
  readonly allowPausing?: boolean;
  /** Milliseconds to finish the handshake, counted from {@link RetroArchHostConnection.start}. Default 10 000. */
  readonly handshakeTimeoutMs?: number;
  /**
   * The client's budget of frames and bytes per second (default {@link DEFAULT_RATE_LIMITS}); past
   * it the connection fails with `flood`. `false` disables it.
   */
  readonly rateLimits?: RateLimits | false;
  /**
   * Password attempts: a limiter shared by every connection of a listener and this client's
   * address (its key). A blocked address fails with `too-many-attempts` before its password is checked.
   */
  readonly attempts?: {
    /** The listener's limiter, shared by all its connections (failures counted per address). */
    readonly limiter: AttemptLimiter;
    /** This client's address without port: the limiter's key. */
    readonly address: string;
  };
  /** Receives every event synchronously. */
  readonly onEvent?: (event: RetroArchHostEvent) => void;
  /** Called when output becomes pending. */
  readonly onOutput?: () => void;
}

/** Everything a {@link RetroArchHostConnection} reports. */
export type RetroArchHostEvent =
  /** The client finished the handshake (SYNC sent) and spectates. */
  | {
      /** `'joined'`: the handshake is complete. */
      readonly type: 'joined';
      /** The client's nick, as it sent it in NICK (at most 31 UTF-8 bytes). */
      readonly nick: string;
      /** The client's core and content, from its INFO. */
      readonly info: RetroArchCoreInfo;
    }
  /** The client now plays `device` from `frame` on (MODE sent). */
  | {
      /** `'playing'`: a PLAY was granted. */
      readonly type: 'playing';
      /** The first frame the client's input counts for. */
      readonly frame: number;
      /** The device (port) index the client drives, 0..15. */
      readonly device: number;
    }
  /**
   * A message from the client for the designated peer (INPUT, NOINPUT, CRC, REQUEST_SAVESTATE,
   * LOAD_SAVESTATE, RESET, STALL, PAUSE, RESUME, PLAYER_CHAT, unknown commands): the whole frame as
   * opaque bytes (a view valid during the callback only), and its command and frame number (0 when
   * the payload has none).
   */
  | {
      /** `'relay'`: forward `bytes` unchanged (or run them, for an emulating host). */
      readonly type: 'relay';
      /** The message's `RetroArchCommand` number (unknown numbers included). */
      readonly command: number;
      /** The frame number the payload starts with, or 0 when the command carries none. */
      readonly frame: number;
      /** The whole frame, header included: a view valid during the callback only. */
      readonly bytes: Uint8Array;
    }
  | {
      /** `'closed'`: the connection ended; no event follows. */
      readonly type: 'closed';
      /** Why, when it failed (timeout, wrong password, `flood`, protocol error...); absent after a clean disconnect. */
      readonly error?: RetroArchError;
    };

/** Commands the host handles itself; every other command after the handshake is relayed. */
const LOCAL = new Set<number>([
  RetroArchCommand.Ack,
  RetroArchCommand.Nak,
  RetroArchCommand.Disconnect,
  RetroArchCommand.Play,
  RetroArchCommand.Spectate,
  RetroArchCommand.PingRequest,
  RetroArchCommand.PingResponse,
]);

/** Commands whose first payload word is a frame number. */
const FRAMED = new Set<number>([
  RetroArchCommand.Input,
  RetroArchCommand.NoInput,
  RetroArchCommand.Crc,
  RetroArchCommand.LoadSavestate,
  RetroArchCommand.Reset,
]);

/**
 * The host side of one RetroArch 1.14 connection, sans-I/O: it does the handshake itself
 * (header with salt, NICK, PASSWORD check, INFO, SYNC, settings), answers PLAY with MODE and pings,
 * and otherwise relays frames as opaque bytes. It runs no emulator: the session's frames (the
 * peer's INPUT / NOINPUT, CRC, LOAD_SAVESTATE…) come from a designated peer through {@link relay}, and
 * the client's frames go to that peer as `relay` events. The current frame is the one after the
 * newest INPUT / NOINPUT relayed to the client.
 */
export class RetroArchHostConnection {
  private readonly decoder = new FrameDecoder();
  private readonly out = new OutputQueue();
  private readonly nick: string;
  private readonly clientNumber: number;
  private readonly playerDevice: number;
  private readonly devices: readonly number[];
  private readonly handshakeTimeoutMs: number;
  private _state: RetroArchHostState = 'handshake';
  private step: 'header' | 'nick' | 'password' | 'info' = 'header';
  private startedAt: number | undefined;
  private clientNick = '';
  private nextFrame: number;
  private _error: RetroArchError | undefined;
  private readonly rateLimits: RateLimits | undefined;
  private budget: RateBudget | undefined;
  /** The time of the chunk being read. */
  private now = 0;

  constructor(
    private readonly options: RetroArchHostOptions,
    /** The frame the session is at when the client connects (SYNC's frame). */
    startFrame = 0,
  ) {
    if (
      options.password !== undefined &&
      !(options.salt !== undefined && options.salt >>> 0 === options.salt && options.salt !== 0)
    ) {
      throw new RetroArchError('state', 'a password needs a non-zero u32 salt');
    }
    this.nick = options.nick ?? 'netplay-host';
    this.clientNumber = options.clientNumber ?? 1;
    this.playerDevice = options.playerDevice ?? 1;
    this.devices = options.devices ?? new Array<number>(RETROARCH_MAX_DEVICES).fill(1);
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? 10_000;
    this.nextFrame = startFrame;
    const r = options.rateLimits ?? DEFAULT_RATE_LIMITS;
    this.rateLimits = r === false ? undefined : r;
  }

  /** The transport connected at `now` (ms): the handshake timeout counts from here, even if the client never speaks. */
  start(now: number): void {
    this.startedAt ??= now;
  }

  /** Closes the connection with `error` (the listener's admission: `timeout`, `full`), sending NAK. */
  abort(error: RetroArchError): void {
    this.fail(error, this.step !== 'header');
  }

  /** Where the connection is in its handshake and session. */
  get state(): RetroArchHostState {
    return this._state;
  }

  /** Why the connection failed, once it did. */
  get error(): RetroArchError | undefined {
    return this._error;
  }

  /** The client number given to this connection. */
  get client(): number {
    return this.clientNumber;
  }

  /** The frame after the newest INPUT / NOINPUT relayed to the client. */
  get frame(): number {
    return this.nextFrame;
  }

  /** Returns the bytes to send to the client (a fresh copy), or `undefined`. */
  takeOutput(): Uint8Array | undefined {
    return this.out.take();
  }

  /**
   * Sends whole frames from the designated peer to the client, as they are (after the handshake;
   * earlier they are dropped). INPUT / NOINPUT frame numbers advance {@link frame}.
   * @throws RetroArchError `protocol` when `bytes` is not a sequence of whole frames.
   */
  relay(bytes: Uint8Array): void {
    if (this._state !== 'spectating' && this._state !== 'playing') return;
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = 0; at < bytes.length; ) {
      if (at + 8 > bytes.length) throw new RetroArchError('protocol', 'relayed bytes end inside a frame prefix');
      const command = v.getUint32(at);
      const size = 8 + v.getUint32(at + 4);
      if (at + size > bytes.length) throw new RetroArchError('protocol', 'relayed bytes end inside a frame');
      if ((command === RetroArchCommand.Input || command === RetroArchCommand.NoInput) && size >= 12) {
        const f = v.getUint32(at + 8);
        if (f + 1 > this.nextFrame) this.nextFrame = f + 1;
      }
      at += size;
    }
    this.out.raw(bytes);
    this.pending();
  }

  /** Feeds bytes the client sent. */
  receive(chunk: Uint8Array, now: number): void {
    if (this._state === 'closed') return;
    this.startedAt ??= now;
    this.now = now;
    if (this.rateLimits !== undefined) this.budget ??= new RateBudget(this.rateLimits, now);
    try {
      this.decoder.push(chunk);
      if (this.step === 'header') {
        const raw = this.decoder.readRaw(RETROARCH_HEADER_SIZE);
        if (raw === undefined) return;
        if (!this.charge(RETROARCH_HEADER_SIZE)) return;
        this.onHeader(raw);
        if (this.isClosed()) return;
      }
      const d = this.decoder;
      while (d.readFrame()) {
        if (!this.charge(8 + d.payloadLength)) return;
        this.onFrame(d.command, d.bytes, d.payloadOffset, d.payloadLength);
        if (this.isClosed()) return;
      }
    } catch (e) {
      if (e instanceof DecodeError) {
        this.out.message({ type: 'nak' });
        this.fail(new RetroArchError('protocol', e.message));
        return;
      }
      throw e;
    }
    this.tick(now);
  }

  /** Advances time: fails with `timeout` when the handshake takes too long. */
  tick(now: number): void {
    if (this._state === 'handshake' && this.startedAt !== undefined && now - this.startedAt > this.handshakeTimeoutMs) {
      this.fail(new RetroArchError('timeout', `no handshake within ${this.handshakeTimeoutMs} ms`));
    }
  }

  /** The transport closed. */
  connectionClosed(): void {
    this.fail(new RetroArchError('closed', 'the connection closed'));
  }

  /** Sends DISCONNECT and closes. */
  disconnect(): void {
    if (this._state === 'closed') return;
    this.out.message({ type: 'disconnect' });
    this._state = 'closed';
    this.pending();
    this.emit({ type: 'closed' });
  }

  /** Charges one frame of `bytes` to the client's budget; false (and closed with `flood`) when over it. */
  private charge(bytes: number): boolean {
    if (this.budget === undefined || this.budget.take(bytes, this.now)) return true;
    this.fail(new RetroArchError('flood', this.budget.describe()));
    return false;
  }

  private isClosed(): boolean {
    return this._state === 'closed';
  }

  private pending(): void {
    if (this.out.length > 0) this.options.onOutput?.();
  }

  private emit(e: RetroArchHostEvent): void {
    this.options.onEvent?.(e);
  }

  private fail(error: RetroArchError, nak = false): void {
    if (this._state === 'closed') return;
    if (nak) this.out.message({ type: 'nak' });
    this._error = error;
    this._state = 'closed';
    this.pending();
    this.emit({ type: 'closed', error });
  }

  private onHeader(raw: Uint8Array): void {
    const h = decodeRetroArchHeader(raw, 'client');
    if (h.sender !== 'client' || h.magic !== RetroArchHeaderMagic.Ranp || h.highProtocol < 6 || h.lowProtocol > 6) {
      this.fail(new RetroArchError('bad-header', 'client header is not RANP with protocol 6'));
      return;
    }
    this.out.header(retroArchHostHeader({ salt: this.options.salt ?? 0, protocol: 6 }));
    this.step = 'nick';
    this.pending();
  }

  private onFrame(command: number, bytes: Uint8Array, offset: number, length: number): void {
    if (this._state !== 'handshake' && !LOCAL.has(command)) {
      // Relay as opaque bytes: only the frame number is read, when the command has one.
      const frame =
        FRAMED.has(command) && length >= 4 ? new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getUint32(0) : 0;
      this.emit({ type: 'relay', command, frame, bytes: bytes.subarray(offset - 8, offset + length) });
      return;
    }
    const m = decodeRetroArchPayload(command, bytes, offset, length, 'client');
    if (m.type === 'disconnect') {
      this._state = 'closed';
      this.emit({ type: 'closed' });
      return;
    }
    if (m.type === 'nak') {
      this.fail(new RetroArchError('nak', 'the client sent NAK'));
      return;
    }
    if (m.type === 'pingRequest') {
      this.out.message({ type: 'pingResponse' });
      this.pending();
      return;
    }
    if (m.type === 'pingResponse' || m.type === 'ack') return;
    if (this._state === 'handshake') {
      this.onHandshake(m);
      return;
    }
    if (m.type === 'play') {
      const wanted = m.devices === 0 ? 1 << this.playerDevice : m.devices;
      if (m.slave || wanted !== 1 << this.playerDevice || this.options.canPlay?.() === false) {
        this.out.message({ type: 'modeRefused', reason: m.slave || wanted !== 1 << this.playerDevice ? 4 : 2 });
        this.pending();
        return;
      }
      this._state = 'playing';
      this.out.message({
        type: 'mode',
        frame: this.nextFrame,
        you: true,
        playing: true,
        slave: false,
        client: this.clientNumber,
        devices: wanted,
        shareModes: new Array<number>(RETROARCH_MAX_DEVICES).fill(0),
        nick: this.clientNick,
      });
      this.pending();
      this.emit({ type: 'playing', frame: this.nextFrame, device: this.playerDevice });
      return;
    }
    if (m.type === 'spectate') {
      this._state = 'spectating';
      this.out.message({
        type: 'mode',
        frame: this.nextFrame,
        you: true,
        playing: false,
        slave: false,
        client: this.clientNumber,
        devices: 0,
        shareModes: new Array<number>(RETROARCH_MAX_DEVICES).fill(0),
        nick: this.clientNick,
      });
      this.pending();
    }
  }

  private onHandshake(m: RetroArchMessage): void {
    const info = this.options.info;
    if (this.step === 'nick' && m.type === 'nick') {
      this.clientNick = m.nick;
      this.out.message({ type: 'nick', nick: this.nick });
      if (this.options.password !== undefined) {
        this.step = 'password';
      } else {
        this.out.message({ type: 'info', ...info });
        this.step = 'info';
      }
      this.pending();
      return;
    }
    if (this.step === 'password' && m.type === 'password') {
      const a = this.options.attempts;
      const wait = a?.limiter.waitMs(a.address, this.now) ?? 0;
      if (wait > 0) {
        // Blocked: answered without checking the password.
        this.fail(
          new RetroArchError(
            'too-many-attempts',
            `too many wrong passwords from ${a?.address}: retry in ${Math.ceil(wait)} ms`,
          ),
          true,
        );
        return;
      }
      if (m.hash !== retroArchPasswordHash(this.options.salt ?? 0, this.options.password ?? '')) {
        const next = a?.limiter.fail(a.address, this.now) ?? 0;
        this.fail(
          new RetroArchError(
            'password-rejected',
            next > 0 ? `wrong password (next attempt in ${Math.ceil(next)} ms)` : 'wrong password',
          ),
          true,
        );
        return;
      }
      a?.limiter.succeed(a.address);
      this.out.message({ type: 'info', ...info });
      this.step = 'info';
      this.pending();
      return;
    }
    if (this.step === 'info' && m.type === 'info') {
      if (m.coreName.toLowerCase() !== info.coreName.toLowerCase()) {
        this.fail(new RetroArchError('protocol', `client core ${m.coreName} is not ${info.coreName}`), true);
        return;
      }
      const live = this.options.session?.();
      if (live !== undefined) this.nextFrame = live.frame;
      const map = live?.deviceClients ?? this.options.deviceClients;
      const deviceClients = Array.from(
        { length: RETROARCH_MAX_DEVICES },
        (_, i) => map?.[i] ?? (i === 0 ? 1 : 0), // default: client 0 plays device 0
      );
      this.out.message({
        type: 'sync',
        frame: this.nextFrame,
        paused: false,
        client: this.clientNumber,
        devices: this.devices,
        shareModes: new Array<number>(RETROARCH_MAX_DEVICES).fill(0),
        deviceClients,
        nick: this.clientNick,
        sram: new Uint8Array(0),
      });
      this.out.message({ type: 'settingAllowPausing', allowPausing: this.options.allowPausing ?? false });
      this.out.message({ type: 'settingInputLatencyFrames', min: 0, max: 0 });
      this._state = 'spectating';
      this.pending();
      this.emit({
        type: 'joined',
        nick: this.clientNick,
        info: { contentCrc: m.contentCrc, coreName: m.coreName, coreVersion: m.coreVersion },
      });
      return;
    }
    this.fail(new RetroArchError('protocol', `unexpected ${m.type} during the handshake`), true);
  }
}

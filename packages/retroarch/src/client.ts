import {
  DecodeError,
  decodeRetroArchCrcInto,
  decodeRetroArchHeader,
  decodeRetroArchInputInto,
  decodeRetroArchNoInput,
  decodeRetroArchPayload,
  encodeRetroArchInput,
  FrameDecoder,
  RETROARCH_COMPRESSION_ZLIB,
  RETROARCH_HEADER_SIZE,
  RETROARCH_MAX_INPUT_WORDS,
  RetroArchCommand,
  RetroArchHeaderMagic,
  type RetroArchHostHeader,
  RetroArchInputFrame,
  type RetroArchMessage,
  type RetroArchSyncMessage,
  retroArchClientHeader,
  retroArchInputSize,
  retroArchPasswordHash,
} from '@netplay/protocol';
import { RetroArchError } from './errors.js';
import { OutputQueue } from './output.js';
import { inflateSavestate } from './savestate.js';

/** What a {@link RetroArchClient} is doing. */
export type RetroArchClientState =
  /** Not started: call {@link RetroArchClient.start}. */
  | 'idle'
  /** Header and NICK sent, waiting for the host's header, NICK and INFO, then SYNC. */
  | 'handshake'
  /** Synchronised; receiving the host's frames as a spectator. */
  | 'spectating'
  /** PLAY sent, waiting for MODE or MODE_REFUSED. */
  | 'requesting-play'
  /** Playing: our input is sent for every frame. */
  | 'playing'
  /** Disconnected (cleanly or after an error). */
  | 'closed';

/** Core identity sent in our INFO. */
export interface RetroArchCoreInfo {
  /** CRC-32 of the loaded content (ROM), unsigned 32-bit; RetroArch warns when it differs from its own. */
  readonly contentCrc: number;
  /** The core's library name (at most 31 bytes on the wire, e.g. `Nestopia`); RetroArch refuses a peer whose core name differs (case-insensitively). */
  readonly coreName: string;
  /** The core's version string, byte for byte as the core reports it (at most 31 bytes on the wire); RetroArch only warns on a difference. */
  readonly coreVersion: string;
}

/** Options of a {@link RetroArchClient}. */
export interface RetroArchClientOptions {
  /** Our nick (at most 31 UTF-8 bytes). Default `netplay`. */
  readonly nick?: string;
  /** The password for a host that sends a salt. */
  readonly password?: string;
  /** What to answer the host's INFO with; default: the host's own INFO (same core and content). */
  readonly info?: RetroArchCoreInfo;
  /** Largest uncompressed savestate accepted, in bytes (checked before allocating). Default 16 MiB. */
  readonly maxSavestateBytes?: number;
  /** Milliseconds from {@link RetroArchClient.start} to SYNC before failing with `timeout`. Default 10 000. */
  readonly handshakeTimeoutMs?: number;
  /** Frames of our input sent ahead of the newest host frame while playing. Default 2. */
  readonly inputLead?: number;
  /**
   * Receives every event synchronously, during `receive` / `tick` / API calls. The per-frame
   * `input`, `noInput` and `crc` event objects are reused (nothing is allocated per frame): copy
   * what you keep.
   */
  readonly onEvent?: (event: RetroArchClientEvent) => void;
  /** Called when output becomes pending (so an I/O shell can schedule a flush). */
  readonly onOutput?: () => void;
  /**
   * Receives every whole frame the host sends after the handshake, as raw bytes (a view valid
   * during the call), before it is handled: for relaying a session (see `RetroArchHostConnection.relay`).
   */
  readonly onRawFrame?: (command: number, frame: Uint8Array) => void;
  /** Sees each INPUT of ours as it is queued: the frame and our words (a reused view). */
  readonly onInputSent?: (frame: number, words: Uint32Array) => void;
}

/** The host's INFO, header and SYNC, once the handshake is complete. */
export interface RetroArchSessionInfo {
  /** The host's connection header: protocol version chosen, password salt, platform magic, compression. */
  readonly header: RetroArchHostHeader;
  /** The host's nick, from its NICK. */
  readonly hostNick: string;
  /** The host's core and content, from its INFO. */
  readonly hostInfo: RetroArchCoreInfo;
  /** The host's SYNC: start frame, our client number and (possibly changed) nick, devices, SRAM. */
  readonly sync: RetroArchSyncMessage;
}

/** An INPUT from the host (reused object: valid during the callback only). */
export interface RetroArchInputEvent {
  /** `'input'`: one client's input for one frame arrived (INPUT). */
  type: 'input';
  /** The frame the input is for, in the host's frame numbering. */
  frame: number;
  /** Client number (low 16 bits of the client word). */
  client: number;
  /** The input words (a view into a reused buffer). */
  words: Uint32Array;
}

/** A NOINPUT from the host (reused object: valid during the callback only). */
export interface RetroArchNoInputEvent {
  /** `'noInput'`: the host reached a frame without input from anyone else (NOINPUT). */
  type: 'noInput';
  /** The frame the host has reached. */
  frame: number;
}

/** A CRC from the host (reused object: valid during the callback only). */
export interface RetroArchCrcEvent {
  /** `'crc'`: the host's state checksum for a frame (CRC). */
  type: 'crc';
  /** The frame whose state was checksummed (the state at its start). */
  frame: number;
  /** CRC-32 of the host's serialized state at `frame`, unsigned; a different one here means a desync. */
  crc: number;
}

/** Everything a {@link RetroArchClient} reports. */
export type RetroArchClientEvent =
  | {
      /** `'synced'`: the handshake is complete (SYNC received); the client spectates until it asks to play. */
      readonly type: 'synced';
      /** What the host sent during the handshake. */
      readonly session: RetroArchSessionInfo;
    }
  | {
      /** `'settings'`: the host announced a session setting (one field per message). */
      readonly type: 'settings';
      /** From SETTING_ALLOW_PAUSING: whether players may pause the session. */
      readonly allowPausing?: boolean;
      /** From SETTING_INPUT_LATENCY_FRAMES: the fewest frames of input latency the host wants. */
      readonly latencyMin?: number;
      /** From SETTING_INPUT_LATENCY_FRAMES: the most frames of input latency the host allows. */
      readonly latencyMax?: number;
    }
  | {
      /** `'savestate'`: the host sent its state (LOAD_SAVESTATE); load it to play on from `frame`. */
      readonly type: 'savestate';
      /** The frame the state belongs to (the state at that frame's start). */
      readonly frame: number;
      /** The uncompressed state, at most `maxSavestateBytes`; ours to keep. */
      readonly state: Uint8Array;
    }
  | RetroArchInputEvent
  | RetroArchNoInputEvent
  | RetroArchCrcEvent
  | {
      /** `'mode'`: a connection (ours when `you`) started or stopped playing (MODE). */
      readonly type: 'mode';
      /** Whether the change is about this client. */
      readonly you: boolean;
      /** Whether that client now plays (else it spectates). */
      readonly playing: boolean;
      /** That client's number, 0..31. */
      readonly client: number;
      /** The first frame the new mode applies to. */
      readonly frame: number;
      /** Bitmap of the input devices (ports 0..15) that client now drives; 0 when spectating. */
      readonly devices: number;
      /** That client's nick. */
      readonly nick: string;
    }
  | {
      /** `'modeRefused'`: the host refused our PLAY (MODE_REFUSED); we stay spectating. */
      readonly type: 'modeRefused';
      /** A `RetroArchModeRefusedReason` (0 other, 1 unprivileged, 2 no slots, 3 too fast, 4 not available), or another value as sent. */
      readonly reason: number;
    }
  | {
      /** `'pause'`: a player paused the session (PAUSE); frames stop until `resume`. */
      readonly type: 'pause';
      /** The nick of the player who paused. */
      readonly nick: string;
    }
  | {
      /** `'resume'`: the session runs again (RESUME). */
      readonly type: 'resume';
    }
  | {
      /** `'chat'`: a chat line relayed by the host (PLAYER_CHAT). */
      readonly type: 'chat';
      /** The sender's nick (empty if the host gave none). */
      readonly nick: string;
      /** The line, 1..95 UTF-8 bytes. */
      readonly text: string;
    }
  | {
      /** `'stall'`: the host asks us to wait (STALL) because we run ahead of it. */
      readonly type: 'stall';
      /** How many frames to wait (RetroArch clamps to 60). */
      readonly frames: number;
    }
  | {
      /** `'reset'`: the host reset the core (RESET). */
      readonly type: 'reset';
      /** The frame at which the reset takes effect. */
      readonly frame: number;
    }
  | {
      /** `'message'`: a command this client does not act on (an unknown one included), passed on as decoded. */
      readonly type: 'message';
      /** The decoded message. */
      readonly message: RetroArchMessage;
    }
  | {
      /** `'closed'`: the session ended; no event follows. */
      readonly type: 'closed';
      /** Why, when it failed (timeout, host full, wrong password, protocol error...); absent after a clean disconnect by either side. */
      readonly error?: RetroArchError;
    };

/** Input words per device type (RETRO_DEVICE_* & 0xff), as RetroArch 1.14 counts them. */
export function retroArchDeviceWords(deviceType: number): number {
  switch (deviceType & 0xff) {
    case 1: // joypad
      return 1;
    case 2: // mouse
    case 4: // lightgun
      return 2;
    case 3: // keyboard
      return 5;
    case 5: // analog
      return 3;
    default:
      return 0;
  }
}

/** Number of input words for the devices in `mask`, given SYNC's device types. */
export function retroArchInputWords(devices: readonly number[], mask: number): number {
  let words = 0;
  for (let d = 0; d < devices.length && d < 16; d++) if (mask & (1 << d)) words += retroArchDeviceWords(devices[d]!);
  return words;
}

/**
 * A sans-I/O RetroArch 1.14 (protocol 6) netplay client: feed it the bytes the host sent and the
 * time, take the bytes to send, and receive events. It never reads the clock or touches a socket.
 *
 * Handshake: header + NICK → host header (PASSWORD when salted) → host NICK → host INFO → our INFO →
 * SYNC → settings; then it spectates (LOAD_SAVESTATE inflated, INPUT / NOINPUT / CRC). {@link play}
 * asks to play; once MODE makes us a player, our input ({@link setInput}) is sent for every frame,
 * {@link RetroArchClientOptions.inputLead} frames ahead of the newest host frame. Pings are answered.
 */
export class RetroArchClient {
  private readonly decoder = new FrameDecoder();
  private readonly out = new OutputQueue();
  private readonly inputFrame = new RetroArchInputFrame();
  private readonly wordViews: (Uint32Array | undefined)[] = [];
  private readonly inputEvent: RetroArchInputEvent = { type: 'input', frame: 0, client: 0, words: new Uint32Array(0) };
  private readonly noInputEvent: RetroArchNoInputEvent = { type: 'noInput', frame: 0 };
  private readonly crcEvent: RetroArchCrcEvent = { type: 'crc', frame: 0, crc: 0 };
  private readonly nick: string;
  private readonly maxSavestateBytes: number;
  private readonly handshakeTimeoutMs: number;
  private readonly inputLead: number;
  private _state: RetroArchClientState = 'idle';
  private startedAt = 0;
  private header: RetroArchHostHeader | undefined;
  private hostNick: string | undefined;
  private hostInfo: RetroArchCoreInfo | undefined;
  private passwordSent = false;
  private _session: RetroArchSessionInfo | undefined;
  private zlib = false;
  private readonly ourInput = new Uint32Array(RETROARCH_MAX_INPUT_WORDS);
  private inputWords = 0;
  private _clientNumber = 0;
  private nextInputFrame = 0;
  private _hostFrame = 0;
  private _error: RetroArchError | undefined;

  constructor(private readonly options: RetroArchClientOptions = {}) {
    this.nick = options.nick ?? 'netplay';
    this.maxSavestateBytes = options.maxSavestateBytes ?? 16 * 1024 * 1024;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? 10_000;
    this.inputLead = options.inputLead ?? 2;
  }

  /** The current state. */
  get state(): RetroArchClientState {
    return this._state;
  }

  /** The handshake's result, once synced. */
  get session(): RetroArchSessionInfo | undefined {
    return this._session;
  }

  /** Our client number (from SYNC, then MODE). */
  get clientNumber(): number {
    return this._clientNumber;
  }

  /** The newest frame the host reported (INPUT, NOINPUT, SYNC or a savestate). */
  get hostFrame(): number {
    return this._hostFrame;
  }

  /** The error that closed the session, if any. */
  get error(): RetroArchError | undefined {
    return this._error;
  }

  /** Queues our connection header and NICK. */
  start(now: number): void {
    if (this._state !== 'idle') throw new RetroArchError('state', `start() in state ${this._state}`);
    this._state = 'handshake';
    this.startedAt = now;
    this.out.header(retroArchClientHeader());
    this.out.message({ type: 'nick', nick: this.nick });
    this.pending();
  }

  /**
   * Returns the bytes to send (a fresh copy) and empties the queue; `undefined` when none. The copy
   * is the caller's to keep: hand it to a transport that holds it until written (`net.Socket.write`
   * does not copy). It is the one allocation of the per-frame path, one array per call whatever
   * the number of frames queued (a shell that flushes every frame allocates one per frame).
   */
  takeOutput(): Uint8Array | undefined {
    return this.out.take();
  }

  /** Feeds bytes the host sent, cut anywhere. */
  receive(chunk: Uint8Array, now: number): void {
    if (this._state === 'closed' || this._state === 'idle') return;
    try {
      this.decoder.push(chunk);
      if (this.header === undefined) {
        const raw = this.decoder.readRaw(RETROARCH_HEADER_SIZE);
        if (raw === undefined) return;
        this.onHeader(decodeRetroArchHeader(raw, 'host') as RetroArchHostHeader);
        if (this.isClosed()) return;
      }
      const d = this.decoder;
      const raw = this.options.onRawFrame;
      while (d.readFrame()) {
        if (raw !== undefined && this._state !== 'handshake') {
          raw(d.command, d.bytes.subarray(d.payloadOffset - 8, d.payloadOffset + d.payloadLength));
        }
        this.onFrame(d.command, d.bytes, d.payloadOffset, d.payloadLength);
        if (this.isClosed()) return;
      }
    } catch (e) {
      if (e instanceof DecodeError) {
        this.out.message({ type: 'nak' });
        this.fail(new RetroArchError('protocol', e.message));
        return;
      }
      if (e instanceof RetroArchError) {
        this.fail(e);
        return;
      }
      throw e;
    }
    this.tick(now);
  }

  /** Advances time: fails with `timeout` when the handshake takes too long. */
  tick(now: number): void {
    if (this._state === 'handshake' && now - this.startedAt > this.handshakeTimeoutMs) {
      this.fail(new RetroArchError('timeout', `no SYNC within ${this.handshakeTimeoutMs} ms`));
    }
  }

  /** Tells the client the transport closed (the shell calls this). */
  connectionClosed(): void {
    if (this._state === 'closed') return;
    if (this._state === 'handshake' && this.passwordSent && this.hostInfo === undefined) {
      this.fail(new RetroArchError('password-rejected', 'the host hung up after our password'));
    } else {
      this.fail(new RetroArchError('closed', 'the connection closed'));
    }
  }

  /** Asks to play (PLAY). `devices` is a device mask (0 = any). */
  play(options: { devices?: number; slave?: boolean; shareMode?: number } = {}): void {
    if (this._state !== 'spectating') throw new RetroArchError('state', `play() in state ${this._state}`);
    this.out.message({
      type: 'play',
      slave: options.slave ?? false,
      shareMode: options.shareMode ?? 0,
      devices: options.devices ?? 0,
    });
    this._state = 'requesting-play';
    this.pending();
  }

  /** Goes back to spectating (SPECTATE). */
  spectate(): void {
    if (this._state !== 'playing' && this._state !== 'requesting-play') {
      throw new RetroArchError('state', `spectate() in state ${this._state}`);
    }
    this.out.message({ type: 'spectate' });
    this._state = 'spectating';
    this.pending();
  }

  /** Sets the input words sent for the following frames (words beyond our devices are ignored). */
  setInput(words: ArrayLike<number>): void {
    if (words.length > this.ourInput.length) throw new RetroArchError('state', `${words.length} input words`);
    this.ourInput.fill(0);
    for (let i = 0; i < words.length; i++) this.ourInput[i] = words[i]! >>> 0;
  }

  /** Asks the host for a fresh savestate (REQUEST_SAVESTATE); it answers with LOAD_SAVESTATE. */
  requestSavestate(): void {
    this.requireSynced('requestSavestate');
    this.out.message({ type: 'requestSavestate' });
    this.pending();
  }

  /** Sends a chat line (1..95 UTF-8 bytes). */
  chat(text: string): void {
    this.requireSynced('chat');
    this.out.message({ type: 'playerChat', text });
    this.pending();
  }

  /** Asks the session to pause (PAUSE with our nick). */
  pause(): void {
    this.requireSynced('pause');
    this.out.message({ type: 'pause', nick: this._session?.sync.nick ?? this.nick });
    this.pending();
  }

  /** Resumes a paused session (RESUME). */
  resume(): void {
    this.requireSynced('resume');
    this.out.message({ type: 'resume' });
    this.pending();
  }

  /** Queues DISCONNECT and closes the session cleanly. */
  disconnect(): void {
    if (this._state === 'closed') return;
    if (this._state !== 'idle') this.out.message({ type: 'disconnect' });
    this._state = 'closed';
    this.pending();
    this.emit({ type: 'closed' });
  }

  private isClosed(): boolean {
    return this._state === 'closed';
  }

  private requireSynced(what: string): void {
    if (this._state !== 'spectating' && this._state !== 'requesting-play' && this._state !== 'playing') {
      throw new RetroArchError('state', `${what}() in state ${this._state}`);
    }
  }

  private pending(): void {
    if (this.out.length > 0) this.options.onOutput?.();
  }

  private emit(e: RetroArchClientEvent): void {
    this.options.onEvent?.(e);
  }

  private fail(error: RetroArchError): void {
    if (this._state === 'closed') return;
    this._error = error;
    this._state = 'closed';
    this.pending();
    this.emit({ type: 'closed', error });
  }

  private onHeader(h: RetroArchHostHeader): void {
    if (h.magic === RetroArchHeaderMagic.Full) {
      this.fail(new RetroArchError('host-full', 'the host is full'));
      return;
    }
    if (h.magic === RetroArchHeaderMagic.Deny) {
      this.fail(new RetroArchError('host-denied', 'the host denies us'));
      return;
    }
    if (h.magic !== RetroArchHeaderMagic.Ranp || h.protocol < 5 || h.protocol > 6) {
      this.fail(new RetroArchError('bad-header', `host header magic ${h.magic} protocol ${h.protocol}`));
      return;
    }
    this.header = h;
    this.zlib = (h.compression & RETROARCH_COMPRESSION_ZLIB) !== 0;
    if (h.salt !== 0) {
      if (this.options.password === undefined) {
        this.fail(new RetroArchError('password-required', 'the host asks for a password'));
        return;
      }
      this.out.message({ type: 'password', hash: retroArchPasswordHash(h.salt, this.options.password) });
      this.passwordSent = true;
      this.pending();
    }
  }

  private onFrame(command: number, bytes: Uint8Array, offset: number, length: number): void {
    // Per-frame hot path: INPUT, NOINPUT and CRC decode without allocating.
    if (this._state !== 'handshake') {
      if (command === RetroArchCommand.Input) {
        const f = decodeRetroArchInputInto(this.inputFrame, bytes, offset, length);
        const e = this.inputEvent;
        e.frame = f.frame;
        e.client = f.client & 0xffff;
        // One view per word count, made once: no allocation per frame.
        e.words = this.wordViews[f.count] ??= f.words.subarray(0, f.count);
        this.hostFrameSeen(f.frame);
        this.emit(e);
        return;
      }
      if (command === RetroArchCommand.NoInput) {
        const frame = decodeRetroArchNoInput(bytes, offset, length);
        this.hostFrameSeen(frame);
        this.noInputEvent.frame = frame;
        this.emit(this.noInputEvent);
        return;
      }
      if (command === RetroArchCommand.Crc) {
        this.emit(decodeRetroArchCrcInto(this.crcEvent, bytes, offset, length));
        return;
      }
    }
    const m = decodeRetroArchPayload(command, bytes, offset, length, 'host');
    switch (m.type) {
      case 'nak':
        if (this.passwordSent && this.hostInfo === undefined) {
          this.fail(new RetroArchError('password-rejected', 'the host refused our password'));
          return;
        }
        this.fail(new RetroArchError('nak', 'the host sent NAK'));
        return;
      case 'disconnect':
        this._state = 'closed';
        this.emit({ type: 'closed' });
        return;
      case 'pingRequest':
        this.out.message({ type: 'pingResponse' });
        this.pending();
        return;
      case 'unknown':
        // RetroArch 1.14 skips unknown commands and stays connected; so do we.
        this.emit({ type: 'message', message: m });
        return;
    }
    if (this._state === 'handshake') {
      this.onHandshakeMessage(m);
      return;
    }
    switch (m.type) {
      case 'settingAllowPausing':
        this.emit({ type: 'settings', allowPausing: m.allowPausing });
        return;
      case 'settingInputLatencyFrames':
        this.emit({ type: 'settings', latencyMin: m.min, latencyMax: m.max });
        return;
      case 'loadSavestate': {
        const state = inflateSavestate(m.data, m.uncompressedSize, this.zlib, this.maxSavestateBytes);
        this.hostFrameSeen(m.frame);
        this.emit({ type: 'savestate', frame: m.frame, state });
        return;
      }
      case 'mode':
        if (m.you) {
          if (m.playing) {
            this._clientNumber = m.client;
            this.inputWords = retroArchInputWords(this._session?.sync.devices ?? [], m.devices);
            this.nextInputFrame = m.frame;
            this._state = 'playing';
          } else if (this._state !== 'closed') {
            this._state = 'spectating';
          }
        }
        this.emit({
          type: 'mode',
          you: m.you,
          playing: m.playing,
          client: m.client,
          frame: m.frame,
          devices: m.devices,
          nick: m.nick,
        });
        if (this._state === 'playing' && m.you) this.sendInputUpTo(Math.max(this._hostFrame, m.frame) + this.inputLead);
        return;
      case 'modeRefused':
        if (this._state === 'requesting-play') this._state = 'spectating';
        this.emit({ type: 'modeRefused', reason: m.reason });
        return;
      case 'pause':
        this.emit({ type: 'pause', nick: m.nick });
        return;
      case 'resume':
        this.emit({ type: 'resume' });
        return;
      case 'playerChat':
        this.emit({ type: 'chat', nick: m.nick ?? '', text: m.text });
        return;
      case 'stall':
        this.emit({ type: 'stall', frames: m.frames });
        return;
      case 'reset':
        this.emit({ type: 'reset', frame: m.frame });
        return;
      case 'sync':
      case 'info':
      case 'nick':
        this.fail(new RetroArchError('protocol', `unexpected ${m.type} after the handshake`));
        return;
      default:
        this.emit({ type: 'message', message: m });
        return;
    }
  }

  private onHandshakeMessage(m: RetroArchMessage): void {
    switch (m.type) {
      case 'nick':
        this.hostNick = m.nick;
        return;
      case 'info': {
        this.hostInfo = { contentCrc: m.contentCrc, coreName: m.coreName, coreVersion: m.coreVersion };
        const ours = this.options.info ?? this.hostInfo;
        this.out.message({ type: 'info', ...ours });
        this.pending();
        return;
      }
      case 'sync': {
        if (this.hostInfo === undefined || this.header === undefined) {
          this.fail(new RetroArchError('protocol', 'SYNC before INFO'));
          return;
        }
        const sync: RetroArchSyncMessage = { ...m, sram: m.sram.slice() };
        this._session = { header: this.header, hostNick: this.hostNick ?? '', hostInfo: this.hostInfo, sync };
        this._clientNumber = m.client;
        this._hostFrame = m.frame;
        this._state = 'spectating';
        this.emit({ type: 'synced', session: this._session });
        return;
      }
      default:
        this.fail(new RetroArchError('protocol', `unexpected ${m.type} during the handshake`));
        return;
    }
  }

  private hostFrameSeen(frame: number): void {
    if (frame > this._hostFrame) this._hostFrame = frame;
    if (this._state === 'playing') this.sendInputUpTo(this._hostFrame + this.inputLead);
  }

  private sendInputUpTo(last: number): void {
    const words = this.inputWords;
    const size = retroArchInputSize(words);
    let sent = false;
    while (this.nextInputFrame <= last) {
      const at = this.out.reserve(size);
      encodeRetroArchInput(this.out.bytes, at, this.nextInputFrame >>> 0, this._clientNumber, this.ourInput, words);
      this.options.onInputSent?.(this.nextInputFrame, this.ourInput);
      this.nextInputFrame++;
      sent = true;
    }
    if (sent) this.pending();
  }
}

import {
  DecodeError,
  decodeRetroArchCrcInto,
  decodeRetroArchHeader,
  decodeRetroArchInputInto,
  decodeRetroArchNoInput,
  decodeRetroArchPayload,
  encodeRetroArchInput,
  FrameDecoder,
  RETROARCH_HEADER_SIZE,
  RETROARCH_MAX_INPUT_WORDS,
  RetroArchCommand,
  type RetroArchHostHeader,
  RetroArchInputFrame,
  type RetroArchMessage,
  retroArchClientHeader,
  retroArchInputSize,
} from '@netplay/protocol';
import type {
  RetroArchClientEvent,
  RetroArchCrcEvent,
  RetroArchInputEvent,
  RetroArchNoInputEvent,
  RetroArchSessionInfo,
} from './client-events.js';
import { RetroArchClientHandshake } from './client-handshake.js';
import type { RetroArchClientOptions } from './client-options.js';
import { retroArchInputWords } from './device-words.js';
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
  private readonly handshake: RetroArchClientHandshake;
  private _session: RetroArchSessionInfo | undefined;
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
    this.handshake = new RetroArchClientHandshake(options, (message) => {
      this.out.message(message);
      this.pending();
    });
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
      if (!this.handshake.headerReceived) {
        const raw = this.decoder.readRaw(RETROARCH_HEADER_SIZE);
        if (raw === undefined) return;
        this.handshake.onHeader(decodeRetroArchHeader(raw, 'host') as RetroArchHostHeader);
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
    if (this._state === 'handshake' && this.handshake.passwordUnanswered) {
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
        if (this.handshake.passwordUnanswered) {
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
        const state = inflateSavestate(m.data, m.uncompressedSize, this.handshake.zlib, this.maxSavestateBytes);
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
    const session = this.handshake.onMessage(m);
    if (session === undefined) return;
    this._session = session;
    this._clientNumber = session.sync.client;
    this._hostFrame = session.sync.frame;
    this._state = 'spectating';
    this.emit({ type: 'synced', session });
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

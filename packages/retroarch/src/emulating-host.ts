import {
  encodeRetroArchCrc,
  encodeRetroArchInput,
  encodeRetroArchMessageToBytes,
  RETROARCH_MAX_DEVICES,
  RetroArchCommand,
} from '@netplay/protocol';
import { RetroArchError } from './errors.js';
import type { RetroArchHostConnection, RetroArchHostEvent, RetroArchHostOptions } from './host.js';
import { RetroArchNetplayState } from './netplay-state.js';
import { type RetroArchCore, retroArchCoreInfo } from './retroarch-core.js';
import { zlibStored } from './zlib-stored.js';

/** One client of a {@link RetroArchEmulatingHost}: its connection and a way to send it whole frames. */
export interface RetroArchEmulatedPeer {
  /** The client's sans-I/O host-side connection (give it {@link RetroArchEmulatingHost.hostOptions}). */
  readonly host: RetroArchHostConnection;
  /** Sends whole frames to the client (and flushes). `RetroArchHostSocket` of the Node listener fits. */
  relay(bytes: Uint8Array): void;
}

/** Options of a {@link RetroArchEmulatingHost}. */
export interface RetroArchEmulatingHostOptions {
  /** The core that runs the game (a `LibretroCore` fits), powered on or at a loaded state. */
  readonly core: RetroArchCore;
  /** Send a CRC of every frame that is a multiple of this (RetroArch's `netplay_check_frames`). Default 600; 0 = never. */
  readonly checkFrames?: number;
  /**
   * The host's own input on device 0 (player 1) for `frame`: a RetroArch joypad word (RetroPad
   * bits). Called once per frame, in frame order. Default: nothing pressed.
   */
  readonly localInput?: (frame: number) => number;
  /**
   * The state size RetroArch clients expect (they measure the core's serialize size when they load
   * the content). Default: the core's serialize size when the host is made, right for a core at
   * power-on; give it when the core starts from a later state.
   */
  readonly stateSize?: number;
  /** How many frames ahead of the host a player's input may arrive before it is dropped as a flood. Default 600. */
  readonly maxInputAhead?: number;
  /** Receives every event synchronously. */
  readonly onEvent?: (event: RetroArchEmulatingHostEvent) => void;
}

/** What a {@link RetroArchEmulatingHost} reports. */
export type RetroArchEmulatingHostEvent =
  /** A client asked for a savestate (REQUEST_SAVESTATE: RetroArch sends it after a CRC mismatch). */
  | {
      /** `'savestateRequest'`: a fresh savestate goes to every client at the next frame. */
      readonly type: 'savestateRequest';
      /** The asking client's number. */
      readonly client: number;
      /** The host's current frame when the request arrived. */
      readonly frame: number;
    }
  /** LOAD_SAVESTATE of `frame` went to `clients` (a new client's first state, or after a request). */
  | {
      /** `'savestateSent'`: a LOAD_SAVESTATE went out. */
      readonly type: 'savestateSent';
      /** The frame the state belongs to (the state at its start). */
      readonly frame: number;
      /** The client numbers it went to. */
      readonly clients: readonly number[];
    }
  /** The CRC of the state at the start of `frame` went to every client. */
  | {
      /** `'crc'`: a CRC went out (every `checkFrames` frames). */
      readonly type: 'crc';
      /** The frame whose starting state it covers. */
      readonly frame: number;
      /** CRC-32 of the core's `retro_serialize` bytes, unsigned. */
      readonly crc: number;
    }
  /** A client was dropped for what it sent (the host runs on). */
  | {
      /** `'peerError'`: one client was disconnected. */
      readonly type: 'peerError';
      /** The dropped client's number (-1 for a connection the host had not registered). */
      readonly client: number;
      /** What it did wrong (`core-state` for a savestate of its own, `protocol`, a flood...). */
      readonly error: RetroArchError;
    };

/** Counters of a {@link RetroArchEmulatingHost}. */
export interface RetroArchEmulatingHostStats {
  /** Frames run. */
  frames: number;
  /** CRC messages sent (each to every client counts once). */
  crcsSent: number;
  /** LOAD_SAVESTATE messages produced (each counts once, however many clients it went to). */
  savestatesSent: number;
  /** REQUEST_SAVESTATEs received from clients. */
  savestateRequests: number;
}

interface PeerState {
  readonly peer: RetroArchEmulatedPeer;
  readonly client: number;
  needsState: boolean;
}

interface Player {
  readonly peer: PeerState;
  readonly from: number;
  readonly nick: string;
}

const NO_FRAME = -1;

/**
 * A RetroArch 1.14 (protocol 6) host that runs the game itself, sans-I/O: the core runs on the
 * host, which is the session's clock and its canonical frame. It answers each client's SYNC with
 * the live frame and sends a real savestate (LOAD_SAVESTATE) before that frame's input, runs frame
 * F once the player's input for F is in (lockstep on the host; RetroArch clients predict and roll
 * back), sends its own INPUT (client 0, device 0) and the player's (device 1) to every other
 * client, the CRC-32 of the `retro_serialize` bytes at the start of every `checkFrames`-th frame
 * (what RetroArch's clients compare), and a fresh savestate to everyone at the next frame when a
 * client asks (REQUEST_SAVESTATE).
 *
 * Wire it to connections: give each {@link RetroArchHostConnection} {@link hostOptions}, pass its
 * events to {@link onPeerEvent}, and call {@link runUntil} with the frame the clock allows.
 * One remote player (device 1); further clients spectate. A client's own LOAD_SAVESTATE is refused
 * (the client is dropped with `core-state`): the host's state is the session's.
 */
export class RetroArchEmulatingHost {
  /** Live counters, updated in place as the game runs (read them any time; do not write). */
  readonly stats: RetroArchEmulatingHostStats = { frames: 0, crcsSent: 0, savestatesSent: 0, savestateRequests: 0 };
  private readonly core: RetroArchCore;
  private readonly checkFrames: number;
  private readonly localInput: (frame: number) => number;
  private readonly ring: number;
  private readonly peers = new Map<RetroArchHostConnection, PeerState>();
  private player: Player | undefined;
  private readonly inputWord: Uint32Array;
  private readonly inputTag: Int32Array;
  private readonly state: RetroArchNetplayState;
  private readonly frameBuf = new Uint8Array(64);
  private readonly word = [0];
  private savestateForAll = false;

  constructor(private readonly options: RetroArchEmulatingHostOptions) {
    this.core = options.core;
    this.checkFrames = options.checkFrames ?? 600;
    this.localInput = options.localInput ?? (() => 0);
    this.ring = (options.maxInputAhead ?? 600) + 1;
    this.inputWord = new Uint32Array(this.ring);
    this.inputTag = new Int32Array(this.ring).fill(NO_FRAME);
    this.state = new RetroArchNetplayState(this.core, options.stateSize);
    if (this.core.ports < 2) throw new RetroArchError('state', 'the core needs 2 ports (host and one player)');
  }

  /** The frame the host runs next (the core's frame). */
  get frame(): number {
    return this.core.frame;
  }

  /** Client number of the remote player, if one plays. */
  get playerClient(): number | undefined {
    return this.player?.peer.client;
  }

  /** What each connection needs: INFO from the core, SYNC at the live frame and device map, PLAY while the seat is free. */
  hostOptions(): Pick<RetroArchHostOptions, 'info' | 'session' | 'canPlay' | 'playerDevice'> {
    return {
      info: retroArchCoreInfo(this.core),
      playerDevice: 1,
      session: () => ({ frame: this.core.frame, deviceClients: this.deviceClients() }),
      canPlay: () => this.player === undefined,
    };
  }

  /** SYNC's device → clients bitmaps: device 0 the host (client 0), device 1 the player. */
  deviceClients(): number[] {
    const map = new Array<number>(RETROARCH_MAX_DEVICES).fill(0);
    map[0] = 1;
    if (this.player !== undefined) map[1] = 1 << this.player.peer.client;
    return map;
  }

  /** Feeds one connection's event (the listener's `onEvent`). */
  onPeerEvent(peer: RetroArchEmulatedPeer, e: RetroArchHostEvent): void {
    const conn = peer.host;
    switch (e.type) {
      case 'joined':
        this.peers.set(conn, { peer, client: conn.client, needsState: true });
        return;
      case 'playing': {
        const p = this.peers.get(conn);
        if (p === undefined) return;
        this.player = { peer: p, from: e.frame, nick: '' };
        this.broadcastMode(p, e.frame, true);
        return;
      }
      case 'relay':
        this.onClientFrame(conn, e.command, e.frame, e.bytes);
        return;
      case 'closed':
        this.drop(conn);
        return;
    }
  }

  /**
   * Runs frames until the core reaches `target` or a frame waits for the player's input; returns
   * the number of frames run. Before a frame, savestates due are sent.
   */
  runUntil(target: number): number {
    let n = 0;
    while (this.core.frame < target && this.step()) n++;
    return n;
  }

  private drop(conn: RetroArchHostConnection): void {
    const p = this.peers.get(conn);
    this.peers.delete(conn);
    if (p !== undefined && this.player?.peer === p) {
      this.player = undefined;
      this.inputTag.fill(NO_FRAME);
      this.broadcastMode(p, this.core.frame, false);
    }
  }

  private broadcastMode(p: PeerState, frame: number, playing: boolean): void {
    const bytes = encodeRetroArchMessageToBytes({
      type: 'mode',
      frame,
      you: false,
      playing,
      slave: false,
      client: p.client,
      devices: playing ? 1 << 1 : 0,
      shareModes: new Array<number>(RETROARCH_MAX_DEVICES).fill(0),
      nick: '',
    });
    for (const q of this.peers.values()) if (q !== p) q.peer.relay(bytes);
  }

  private fail(conn: RetroArchHostConnection, error: RetroArchError): void {
    const p = this.peers.get(conn);
    this.options.onEvent?.({ type: 'peerError', client: p?.client ?? -1, error });
    conn.abort(error);
  }

  private onClientFrame(conn: RetroArchHostConnection, command: number, frame: number, bytes: Uint8Array): void {
    const p = this.peers.get(conn);
    if (p === undefined) return;
    if (command === RetroArchCommand.RequestSavestate) {
      this.stats.savestateRequests++;
      this.savestateForAll = true;
      this.options.onEvent?.({ type: 'savestateRequest', client: p.client, frame: this.core.frame });
      return;
    }
    if (command === RetroArchCommand.LoadSavestate) {
      this.fail(conn, new RetroArchError('core-state', `client ${p.client} sent a savestate; this host keeps its own`));
      return;
    }
    if (command !== RetroArchCommand.Input || this.player?.peer !== p) return; // chat, CRC, stray input: ignored
    if (bytes.length < 20) {
      this.fail(
        conn,
        new RetroArchError('protocol', `INPUT of ${bytes.length - 8} payload bytes from client ${p.client}`),
      );
      return;
    }
    const now = this.core.frame;
    if (frame < this.player.from || frame < now) return; // before its MODE, or a frame already run
    if (frame >= now + this.ring) {
      this.fail(
        conn,
        new RetroArchError('flood', `input for frame ${frame}, more than ${this.ring - 1} frames ahead of ${now}`),
      );
      return;
    }
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const slot = frame % this.ring;
    this.inputWord[slot] = v.getUint32(16);
    this.inputTag[slot] = frame;
  }

  private sendSavestates(frame: number): void {
    const to: PeerState[] = [];
    for (const p of this.peers.values()) if (p.needsState || this.savestateForAll) to.push(p);
    this.savestateForAll = false;
    if (to.length === 0) return;
    const n = this.state.capture();
    const bytes = encodeRetroArchMessageToBytes({
      type: 'loadSavestate',
      frame,
      uncompressedSize: n,
      data: zlibStored(this.state.bytes.subarray(0, n)),
    });
    for (const p of to) {
      p.needsState = false;
      p.peer.relay(bytes);
    }
    this.stats.savestatesSent++;
    this.options.onEvent?.({ type: 'savestateSent', frame, clients: to.map((p) => p.client) });
  }

  private step(): boolean {
    const f = this.core.frame;
    this.sendSavestates(f);
    const pl = this.player;
    let playerWord = 0;
    if (pl !== undefined && f >= pl.from) {
      const slot = f % this.ring;
      if (this.inputTag[slot] !== f) return false;
      playerWord = this.inputWord[slot]!;
    }
    const local = this.localInput(f) >>> 0;
    const buf = this.frameBuf;
    this.word[0] = local;
    let len = encodeRetroArchInput(buf, 0, f, 0, this.word, 1);
    let crcLen = 0;
    let crc = 0;
    if (this.checkFrames > 0 && f % this.checkFrames === 0) {
      crc = this.state.crc();
      crcLen = encodeRetroArchCrc(buf, len, f, crc);
    }
    const withCrc = buf.subarray(0, len + crcLen);
    const playerFrom = len + crcLen;
    if (pl !== undefined && f >= pl.from) {
      this.word[0] = playerWord;
      len = encodeRetroArchInput(buf, playerFrom, f, pl.peer.client, this.word, 1);
    } else len = 0;
    const playerInput = buf.subarray(playerFrom, playerFrom + len);
    for (const p of this.peers.values()) {
      p.peer.relay(withCrc);
      if (len > 0 && p !== pl?.peer) p.peer.relay(playerInput);
    }
    if (crcLen > 0) {
      this.stats.crcsSent++;
      this.options.onEvent?.({ type: 'crc', frame: f, crc });
    }
    this.core.setInputMask(0, local & 0xffff);
    this.core.setInputMask(1, playerWord & 0xffff);
    this.core.advance();
    this.stats.frames++;
    return true;
  }
}

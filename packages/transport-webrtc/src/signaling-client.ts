import { Emitter, type Handler, type Unsubscribe } from '@netplay/transport';
import type { PeerSignal } from './rtc.js';
import {
  type ClientMessage,
  encodeMessage,
  parseServerMessage,
  type ServerMessage,
  SignalingError,
} from './signal-protocol.js';

/** The `WebSocket` surface the signaling client uses (the browser's, or `ws`'s in Node). */
export interface SignalingSocket {
  /** The WebSocket state (0 connecting, 1 open, 2 closing, 3 closed); part of the shape for compatibility, the client itself tracks open/closed through the events. */
  readonly readyState: number;
  /** Called once the socket is open. */
  onopen: ((ev: unknown) => void) | null;
  /** Called once when the socket closed, with the close code and reason. */
  onclose: ((ev: { readonly code: number; readonly reason: string }) => void) | null;
  /** Called on a socket error (a `close` follows). */
  onerror: ((ev: unknown) => void) | null;
  /** Called for every message (signaling messages are JSON text). */
  onmessage: ((ev: { readonly data: unknown }) => void) | null;
  /** Sends one text message. */
  send(data: string): void;
  /** Closes the socket with a close code and reason. */
  close(code?: number, reason?: string): void;
}

/** A `WebSocket` constructor. */
export type SignalingSocketConstructor = new (url: string) => SignalingSocket;

/** Events of a {@link SignalingClient}. */
export interface SignalingEventMap {
  /** A signal from another peer of the room. */
  signal: {
    /** The sending peer's name in the room, as the server named it (reply to it with `send(from, …)`). */
    readonly from: string;
    /** The offer, answer or ICE candidate it sent, already checked by `parseSignal`. */
    readonly signal: PeerSignal;
    /** The sender's IP as the signaling server saw it (servers of this package stamp it). */
    readonly address?: string;
  };
  /** The name of a peer that entered the room (it is in {@link SignalingClient.peers} from now on). */
  'peer-joined': string;
  /** The name of a peer that left the room or lost its signaling socket (removed from {@link SignalingClient.peers}). */
  'peer-left': string;
  /** A refusal the server sent (non-fatal ones leave the client joined). */
  refused: SignalingError;
  /** The signaling socket closed; no event follows. */
  close: SignalingError;
}

/** Options of {@link SignalingClient.join}. */
export interface SignalingClientOptions {
  /** `ws://` or `wss://` URL of the signaling server. */
  readonly url: string;
  /** The room to join. */
  readonly room: string;
  /** This peer's name in the room (unique within it). */
  readonly peer: string;
  /** `WebSocket` constructor (default: the global one; in Node, `ws`'s: see `/node`). */
  readonly WebSocket?: SignalingSocketConstructor;
  /** Longest wait for `joined`, in ms (default 5000). */
  readonly timeoutMs?: number;
}

/**
 * A peer's connection to the signaling server, joined to one room: it sends signals to named peers
 * and emits those it receives. Browser-safe (the `WebSocket` is injected or global). Several
 * WebRTC connections can share one client (a host listening, a mesh peer connecting to many).
 */
export class SignalingClient {
  private readonly emitter = new Emitter<SignalingEventMap>();
  private readonly present = new Set<string>();
  private closed = false;

  private constructor(
    private readonly socket: SignalingSocket,
    /** The room joined. */
    readonly room: string,
    /** This peer's name. */
    readonly peer: string,
  ) {}

  /** The other peers in the room now. */
  get peers(): readonly string[] {
    return [...this.present];
  }

  /** Whether the socket is still open. */
  get isOpen(): boolean {
    return !this.closed;
  }

  /**
   * Opens a socket to the server and joins `room` as `peer`. Rejects with a {@link SignalingError}
   * (`room-full`, `name-taken`, `limit`, `timeout`, `closed`, ...).
   */
  static join(options: SignalingClientOptions): Promise<SignalingClient> {
    const Ctor = options.WebSocket ?? (globalThis as { WebSocket?: SignalingSocketConstructor }).WebSocket;
    if (typeof Ctor !== 'function') {
      return Promise.reject(
        new SignalingError('closed', 'no WebSocket: pass one (in Node use @netplay/transport-webrtc/node)'),
      );
    }
    return new Promise((resolve, reject) => {
      let socket: SignalingSocket;
      try {
        socket = new Ctor(options.url);
      } catch (e) {
        reject(new SignalingError('closed', `cannot open ${options.url}: ${(e as Error).message}`));
        return;
      }
      let client: SignalingClient | undefined;
      const timer = setTimeout(() => {
        if (client) return;
        socket.onclose = null;
        socket.close(4000, 'join timeout');
        reject(new SignalingError('timeout', `no answer to join within ${options.timeoutMs ?? 5000} ms`));
      }, options.timeoutMs ?? 5000);
      socket.onopen = () => {
        socket.send(encodeMessage({ v: 1, type: 'join', room: options.room, peer: options.peer }));
      };
      socket.onerror = () => {};
      socket.onclose = (ev) => {
        clearTimeout(timer);
        if (client) client.onSocketClose(ev.code, ev.reason);
        else
          reject(
            new SignalingError('closed', `signaling socket closed (${ev.code}${ev.reason ? `: ${ev.reason}` : ''})`),
          );
      };
      socket.onmessage = (ev) => {
        let msg: ServerMessage;
        try {
          if (typeof ev.data !== 'string') throw new SignalingError('bad-json', 'binary message from the server');
          msg = parseServerMessage(ev.data);
        } catch (e) {
          const error = e instanceof SignalingError ? e : new SignalingError('bad-message', String(e));
          if (client) client.fail(error);
          else {
            clearTimeout(timer);
            socket.onclose = null;
            socket.close(4002, 'bad server message');
            reject(error);
          }
          return;
        }
        if (client) {
          client.onMessage(msg);
          return;
        }
        if (msg.type === 'joined') {
          clearTimeout(timer);
          client = new SignalingClient(socket, msg.room, msg.peer);
          for (const p of msg.peers) client.present.add(p);
          resolve(client);
        } else if (msg.type === 'refused') {
          clearTimeout(timer);
          socket.onclose = null;
          socket.close(1000, 'refused');
          reject(new SignalingError(msg.code, msg.reason));
        }
      };
    });
  }

  /** Subscribes to an event (see {@link SignalingEventMap}); returns the unsubscribe function. */
  on<K extends keyof SignalingEventMap>(type: K, handler: Handler<SignalingEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  /** Sends `signal` to peer `to` of the room (dropped once closed). */
  send(to: string, signal: PeerSignal): void {
    if (this.closed) return;
    this.write({ v: 1, type: 'signal', to, signal });
  }

  /** Leaves the room and closes the socket. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.write({ v: 1, type: 'leave' });
    this.socket.close(1000, 'leave');
    this.onSocketClose(1000, 'left');
  }

  private write(msg: ClientMessage): void {
    try {
      this.socket.send(encodeMessage(msg));
    } catch {
      // The close event follows.
    }
  }

  private onMessage(msg: ServerMessage): void {
    switch (msg.type) {
      case 'signal':
        this.emitter.emit(
          'signal',
          msg.address === undefined
            ? { from: msg.from, signal: msg.signal }
            : { from: msg.from, signal: msg.signal, address: msg.address },
        );
        return;
      case 'peer-joined':
        this.present.add(msg.peer);
        this.emitter.emit('peer-joined', msg.peer);
        return;
      case 'peer-left':
        this.present.delete(msg.peer);
        this.emitter.emit('peer-left', msg.peer);
        return;
      case 'refused': {
        const error = new SignalingError(msg.code, msg.reason);
        if (msg.fatal) this.fail(error);
        else this.emitter.emit('refused', error);
        return;
      }
      case 'joined':
        this.fail(new SignalingError('bad-message', 'a second joined message'));
    }
  }

  private fail(error: SignalingError): void {
    if (this.closed) return;
    this.socket.close(4002, error.code);
    this.finish(error);
  }

  private onSocketClose(code: number, reason: string): void {
    this.finish(new SignalingError('closed', `signaling socket closed (${code}${reason ? `: ${reason}` : ''})`));
  }

  private finish(error: SignalingError): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.onmessage = null;
    this.socket.onclose = null;
    try {
      this.emitter.emit('close', error);
    } finally {
      this.emitter.clear();
    }
  }
}

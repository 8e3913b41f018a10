import { TransportError } from '@netplay/transport';
import type { WsConnection } from './connection.js';
import type { FrameCharge } from './rate-guard.js';
import type { WsSocket } from './socket.js';

/**
 * The part of the WHATWG `WebSocket` (browsers, Deno, Node ≥ 22, and `ws`'s client class) that
 * netplay-ws uses. Declared here so the package needs no DOM type library.
 */
export interface WebSocketLike {
  /** How binary messages are delivered; {@link attachBrowserSocket} sets it to `'arraybuffer'` (a `Blob` could not be read synchronously). */
  binaryType: string;
  /** Bytes passed to `send` that the socket has not yet handed to the network; the connection polls it for back-pressure (`highWaterBytes`, `maxBufferedBytes`). */
  readonly bufferedAmount: number;
  /** Called once the socket is open. */
  onopen: ((event: unknown) => void) | null;
  /** Called for every message (`data` an `ArrayBuffer` with `binaryType = 'arraybuffer'`). */
  onmessage: ((event: { readonly data: unknown }) => void) | null;
  /** Called once when the socket closed, with the close code and reason. */
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null;
  /** Called on a socket error (a `close` follows). */
  onerror: ((event: unknown) => void) | null;
  /** Sends one binary message. */
  send(data: Uint8Array): void;
  /** Closes the socket with a close code and reason. */
  close(code?: number, reason?: string): void;
}

/** A `WebSocket` constructor: `globalThis.WebSocket` in browsers. */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** Wraps a WHATWG WebSocket as the core's {@link WsSocket}. */
export function browserSocket(ws: WebSocketLike): WsSocket {
  return {
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    send(frame) {
      ws.send(frame);
    },
    close(code, reason) {
      ws.close(code, reason);
    },
    terminate() {
      // Browsers cannot drop a socket without the closing handshake; close() is the best there is.
      try {
        ws.close();
      } catch {
        // already closed
      }
    },
  };
}

/**
 * Feeds the events of a WHATWG WebSocket into `conn`. `charge` (see `frameCharge`) is run on every
 * received message first; when it refuses, the message is dropped.
 */
export function attachBrowserSocket(ws: WebSocketLike, conn: WsConnection, charge?: FrameCharge): void {
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => conn.socketOpened();
  ws.onmessage = (event) => {
    const data = event.data;
    if (
      charge &&
      !charge(typeof data === 'string' ? data.length : ((data as { byteLength?: number }).byteLength ?? 0))
    ) {
      return;
    }
    if (data instanceof ArrayBuffer) conn.socketFrame(new Uint8Array(data));
    else if (ArrayBuffer.isView(data)) conn.socketFrame(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    else if (typeof data === 'string') conn.socketText();
    else conn.socketError(new TransportError('protocol', 'a binary message arrived in an unsupported form'));
  };
  // Browsers give no detail on errors; the close event (code 1006) that follows says what happened.
  ws.onerror = () => {};
  ws.onclose = (event) => conn.socketClosed(event.code, event.reason);
}

import { TransportError, validateChannels } from '@netplay/transport';
import { attachBrowserSocket, browserSocket, type WebSocketConstructor, type WebSocketLike } from './browser-socket.js';
import { WsConnection } from './connection.js';
import { resolveOptions, type WsConnectionOptions } from './options.js';
import { frameCharge } from './rate-guard.js';

/** Options of {@link connect}. */
export interface ConnectOptions extends WsConnectionOptions {
  /**
   * The WebSocket class to use (default `globalThis.WebSocket`). Node 20 has none: use
   * `connect` from `@netplay/transport-ws/server` there, or pass `ws`'s `WebSocket`.
   */
  readonly WebSocket?: WebSocketConstructor;
}

/**
 * Opens a netplay-ws connection to `url` (`ws://` or `wss://`) with the native WebSocket. Works in
 * browsers and anywhere a WHATWG WebSocket exists; uses no Node API.
 *
 * Returns at once, in state `connecting`; messages sent before `open` are queued. The connection
 * emits `open` after the handshake, or `close` with code `refused` (channel mismatch, listener
 * full, nobody listening) or `timeout` (no handshake within `timeouts.connectMs`).
 *
 * ```ts
 * const conn = connect('wss://example.org/netplay', { channels: [{ name: 'input', kind: 'reliable' }] });
 * conn.on('message', ({ channel, data }) => console.log(channel, data));
 * await waitOpen(conn);
 * conn.send('input', new Uint8Array([1, 2]));
 * ```
 * @throws TransportError `invalid-argument` for a bad channel list, option or URL, or when no WebSocket class exists.
 */
export function connect(url: string, options: ConnectOptions): WsConnection {
  const Ctor = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket ?? undefined;
  if (!Ctor) {
    throw new TransportError(
      'invalid-argument',
      'no global WebSocket: pass options.WebSocket, or use connect from @netplay/transport-ws/server in Node',
    );
  }
  const resolved = resolveOptions(options, validateChannels(options.channels)); // fail before opening a socket
  let ws: WebSocketLike;
  try {
    ws = new Ctor(url);
  } catch (e) {
    throw new TransportError('invalid-argument', `cannot open a WebSocket to "${url}"`, { cause: e });
  }
  let conn: WsConnection;
  try {
    conn = new WsConnection(browserSocket(ws), 'client', url, options);
  } catch (e) {
    ws.close();
    throw e;
  }
  attachBrowserSocket(ws, conn, frameCharge(conn, resolved.rateLimits, resolved.clock));
  return conn;
}

/**
 * Resolves when `conn` is open; rejects with the close event's `TransportError` (or a `closed`
 * error) if it closes first.
 */
export function waitOpen(conn: WsConnection): Promise<void> {
  if (conn.state === 'open') return Promise.resolve();
  if (conn.state === 'closed') return Promise.reject(new TransportError('closed', 'the connection is closed'));
  return new Promise((resolve, reject) => {
    const offOpen = conn.on('open', () => {
      offOpen();
      offClose();
      resolve();
    });
    const offClose = conn.on('close', (e) => {
      offOpen();
      offClose();
      reject(e.error ?? new TransportError('closed', `closed before open: ${e.reason}`));
    });
  });
}

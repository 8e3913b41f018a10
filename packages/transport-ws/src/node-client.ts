import { TransportError, validateChannels } from '@netplay/transport';
import { WebSocket } from 'ws';
import { WsConnection } from './connection.js';
import { attachNodeSocket, nodeSocket } from './node-socket.js';
import type { WsConnectionOptions } from './options.js';
import { resolveOptions, wsMaxPayload } from './options.js';
import { frameCharge } from './rate-guard.js';

/**
 * Node client: opens a netplay-ws connection to `url` with `ws`'s WebSocket class (Node 20 has
 * no global WebSocket). Same behaviour as the browser-safe `connect`, plus `ws`'s `maxPayload`
 * so an oversized message from the server is refused before it is buffered.
 */
export function connectNode(url: string, options: WsConnectionOptions): WsConnection {
  const resolved = resolveOptions(options, validateChannels(options.channels));
  let ws: WebSocket;
  try {
    ws = new WebSocket(url, {
      perMessageDeflate: false,
      maxPayload: wsMaxPayload(resolved),
    });
  } catch (e) {
    throw new TransportError('invalid-argument', `cannot open a WebSocket to "${url}"`, { cause: e });
  }
  const conn = new WsConnection(nodeSocket(ws), 'client', url, options);
  attachNodeSocket(ws, conn, frameCharge(conn, resolved.rateLimits, resolved.clock));
  return conn;
}

import { type ConnectionState, TransportError } from '@netplay/transport';
import type { WebSocket } from 'ws';
import type { WsConnection } from './connection.js';
import type { FrameCharge } from './rate-guard.js';
import type { WsSocket } from './socket.js';

/** Wraps a `ws` WebSocket (server or client side) as the core's {@link WsSocket}. */
export function nodeSocket(ws: WebSocket): WsSocket {
  return {
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    send(frame) {
      ws.send(frame, { binary: true });
    },
    close(code, reason) {
      ws.close(code, reason);
    },
    terminate() {
      ws.terminate();
    },
  };
}

/** Maps an error emitted by a `ws` socket to a {@link TransportError}. */
export function mapWsError(error: unknown, state: ConnectionState): TransportError {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
    return new TransportError('too-large', `a message exceeded the maximum payload: ${message}`, { cause: error });
  }
  if (typeof code === 'string' && code.startsWith('WS_ERR_')) {
    return new TransportError('protocol', `bad WebSocket frame: ${message}`, { cause: error });
  }
  if (state === 'connecting') {
    return new TransportError('refused', `could not connect: ${message}`, { cause: error });
  }
  return new TransportError('io', `socket error: ${message}`, { cause: error });
}

/**
 * Feeds the events of a `ws` WebSocket into `conn`. `charge` (see `frameCharge`) is run on every
 * received message first; when it refuses, the message is dropped and the socket stops reading.
 */
export function attachNodeSocket(ws: WebSocket, conn: WsConnection, charge?: FrameCharge): void {
  ws.binaryType = 'nodebuffer';
  ws.on('open', () => conn.socketOpened());
  ws.on('message', (data, isBinary) => {
    if (charge && !charge(messageBytes(data))) {
      ws.pause(); // the close frame still goes out; the flood is no longer parsed
      return;
    }
    if (!isBinary) {
      conn.socketText();
      return;
    }
    if (Array.isArray(data)) conn.socketFrame(Buffer.concat(data));
    else if (data instanceof ArrayBuffer) conn.socketFrame(new Uint8Array(data));
    else conn.socketFrame(data);
  });
  ws.on('error', (error) => conn.socketError(mapWsError(error, conn.state)));
  ws.on('close', (code, reason) => conn.socketClosed(code, reason.toString('utf8')));
}

function messageBytes(data: Buffer | ArrayBuffer | Buffer[]): number {
  if (!Array.isArray(data)) return data.byteLength;
  let n = 0;
  for (const b of data) n += b.byteLength;
  return n;
}

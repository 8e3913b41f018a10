import type { CloseCode } from '@netplay/transport';
import { TransportError } from '@netplay/transport';

/**
 * WebSocket close codes netplay-ws sends. All are allowed in a browser's `WebSocket.close()`
 * (1000 or 3000–4999), so both ends can send every one of them.
 */
export const WsCloseCode = Object.freeze({
  /** `close(reason)` was called; the reason is the WebSocket close reason. */
  normal: 1000,
  /** The sender heard nothing from its peer for `disconnectMs`. */
  timeout: 4000,
  /** The handshake was refused: channel mismatch, unsupported version, listener full or closing. */
  refused: 4001,
  /** The peer broke the frame protocol (bad frame, unknown channel, text frame, ...). */
  protocol: 4002,
  /** The peer sent a message larger than the agreed limit. */
  tooLarge: 4003,
  /** The peer went over its message or byte budget (`rateLimits`); the reason starts with `flood`. */
  flood: 4004,
} as const);

/** How a received WebSocket close maps onto the contract's close event. */
export interface MappedClose {
  /**
   * The contract's close code to report: `remote` for a normal close (1000, 1001, 1005) or a
   * `flood` (4004) after the handshake; `refused` for those before it, for 4001 and 1013, and for a
   * drop (1006) before it; `timeout` for 4000; `error` for anything else.
   */
  readonly code: CloseCode;
  /** The error to attach to the close event, naming the WebSocket code or reason; absent for a clean `remote` close. */
  readonly error?: TransportError;
}

/**
 * Maps a WebSocket close code received from the peer (or 1006 for a connection that dropped
 * without a close frame) to a contract {@link CloseCode} and error. `opened` says whether the
 * handshake had completed.
 */
export function mapRemoteClose(wsCode: number, reason: string, opened: boolean): MappedClose {
  const why = reason === '' ? `WebSocket close code ${wsCode}` : reason;
  switch (wsCode) {
    case WsCloseCode.normal:
    case 1001:
    case 1005:
      return opened
        ? { code: 'remote' }
        : { code: 'refused', error: new TransportError('refused', `the server closed during the handshake: ${why}`) };
    case WsCloseCode.flood:
      // The convention of @netplay/transport: the flooding peer sees `remote` with the `flood: …` reason.
      return opened
        ? { code: 'remote' }
        : { code: 'refused', error: new TransportError('refused', `the server closed during the handshake: ${why}`) };
    case WsCloseCode.timeout:
      return { code: 'timeout', error: new TransportError('timeout', `the peer timed out: ${why}`) };
    case WsCloseCode.refused:
    case 1013:
      return { code: 'refused', error: new TransportError('refused', why) };
    case WsCloseCode.tooLarge:
    case 1009:
      return { code: 'error', error: new TransportError('too-large', `the peer refused an oversized message: ${why}`) };
    case 1006:
      return opened
        ? { code: 'error', error: new TransportError('io', 'the connection dropped without a close frame') }
        : {
            code: 'refused',
            error: new TransportError('refused', 'could not connect (no server or connection dropped)'),
          };
    default:
      return { code: 'error', error: new TransportError('protocol', `the peer closed with code ${wsCode}: ${why}`) };
  }
}

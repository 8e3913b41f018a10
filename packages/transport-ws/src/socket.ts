/**
 * The abstract socket under a {@link WsConnection}: what the connection core needs from a
 * WebSocket. Adapters exist for the browser's native `WebSocket` (`browser-socket.ts`) and for
 * `ws` in Node (`node-socket.ts`); tests drive the core with a fake.
 *
 * Input flows the other way: the adapter calls the core's `socketOpened`, `socketFrame`,
 * `socketText`, `socketError` and `socketClosed` methods.
 */
export interface WsSocket {
  /** Bytes accepted by `send` that the socket has not written to the network yet. */
  readonly bufferedAmount: number;
  /** Sends one binary WebSocket message. The socket may keep `frame`; the core never reuses it. */
  send(frame: Uint8Array): void;
  /** Starts the closing handshake with `code` and `reason` (at most 123 UTF-8 bytes). */
  close(code: number, reason: string): void;
  /** Drops the connection at once, without a closing handshake (browsers: same as `close`). */
  terminate(): void;
}

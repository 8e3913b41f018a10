import { type Socket, connect as tcpConnect } from 'node:net';

/** A WebSocket upgrade request, complete. */
export const UPGRADE_REQUEST =
  'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';

/** Half of one: the headers never end. */
export const HALF_REQUEST = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n';

/** A raw TCP client socket and whether / when it was closed by the server. */
export interface RawClient {
  readonly socket: Socket;
  closed: boolean;
  /** Bytes the server sent. */
  received: string;
}

/** Opens a TCP connection to `port` on 127.0.0.1 from `localAddress`; resolves once connected (or failed). */
export function rawClient(port: number, localAddress = '127.0.0.1', send = ''): Promise<RawClient> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port, localAddress });
    const c: RawClient = { socket, closed: false, received: '' };
    socket.setNoDelay(true);
    socket.on('data', (d) => {
      if (c.received.length < 4096) c.received += d.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      c.closed = true;
      resolve(c);
    });
    socket.on('connect', () => {
      if (send !== '') socket.write(send);
      resolve(c);
    });
  });
}

/**
 * A masked client→server binary frame header announcing `length` payload bytes (FIN set unless
 * `fin` is false; `opcode` 2 binary, 0 continuation).
 */
export function frameHeader(length: number, fin = true, opcode = 2): Uint8Array {
  const b0 = (fin ? 0x80 : 0) | opcode;
  const mask = [1, 2, 3, 4];
  if (length < 126) return Uint8Array.from([b0, 0x80 | length, ...mask]);
  if (length < 65536) return Uint8Array.from([b0, 0x80 | 126, length >> 8, length & 0xff, ...mask]);
  const hi = Math.floor(length / 2 ** 32);
  const lo = length >>> 0;
  return Uint8Array.from([
    b0,
    0x80 | 127,
    hi >>> 24,
    (hi >>> 16) & 0xff,
    (hi >>> 8) & 0xff,
    hi & 0xff,
    lo >>> 24,
    (lo >>> 16) & 0xff,
    (lo >>> 8) & 0xff,
    lo & 0xff,
    ...mask,
  ]);
}

/** Upgrades a raw socket to WebSocket by hand; resolves true once the server answered 101. */
export async function rawUpgrade(port: number, localAddress = '127.0.0.1'): Promise<RawClient> {
  const c = await rawClient(port, localAddress, UPGRADE_REQUEST);
  const deadline = Date.now() + 5000;
  while (!c.received.includes('\r\n\r\n') && !c.closed && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 5));
  }
  if (!c.received.startsWith('HTTP/1.1 101')) throw new Error(`upgrade failed: ${c.received.slice(0, 40)}`);
  return c;
}

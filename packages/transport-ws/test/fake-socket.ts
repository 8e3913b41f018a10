import type { ChannelSpec, Clock, TransportError } from '@netplay/transport';
import { WsConnection, type WsConnectionOptions, type WsServerHooks, type WsSocket } from '../src/index.js';

/**
 * One end of an in-memory WebSocket for driving {@link WsConnection} deterministically: `send`
 * only queues; the test decides when bytes move with {@link FakeLink.pump}, so `bufferedAmount`
 * (the queued bytes) is under the test's control.
 */
export class FakeSocket implements WsSocket {
  readonly queue: Uint8Array[] = [];
  bufferedAmount = 0;
  conn!: WsConnection;
  peer!: FakeSocket;
  closing: { code: number; reason: string } | undefined;
  gone = false;
  sent = 0;

  send(frame: Uint8Array): void {
    if (this.gone || this.closing) return;
    this.queue.push(frame);
    this.bufferedAmount += frame.length;
    this.sent++;
  }

  close(code: number, reason: string): void {
    if (this.gone || this.closing) return;
    this.closing = { code, reason };
  }

  terminate(): void {
    if (this.gone) return;
    this.queue.length = 0;
    this.bufferedAmount = 0;
    this.finish(1006, '');
  }

  /** Both ends learn that the socket closed. */
  finish(code: number, reason: string): void {
    if (this.gone) return;
    this.gone = true;
    this.peer.gone = true;
    this.peer.queue.length = 0;
    this.peer.bufferedAmount = 0;
    this.conn.socketClosed(code, reason);
    this.peer.conn.socketClosed(code, reason);
  }

  /** Delivers up to `maxBytes` of queued frames (whole frames only) to the peer; returns bytes moved. */
  deliver(maxBytes = Number.POSITIVE_INFINITY): number {
    let moved = 0;
    while (this.queue.length > 0 && !this.gone) {
      const f = this.queue[0]!;
      if (moved + f.length > maxBytes) break;
      this.queue.shift();
      this.bufferedAmount -= f.length;
      moved += f.length;
      this.peer.conn.socketFrame(f);
    }
    if (this.queue.length === 0 && this.closing && !this.gone) this.finish(this.closing.code, this.closing.reason);
    return moved;
  }
}

/** A client/server pair of {@link WsConnection}s over two {@link FakeSocket}s. */
export interface FakeLink {
  readonly client: WsConnection;
  readonly server: WsConnection;
  readonly clientSocket: FakeSocket;
  readonly serverSocket: FakeSocket;
  readonly serverErrors: TransportError[];
  accepted: boolean;
  /** Delivers everything queued in both directions until nothing moves (bounded). */
  pump(): void;
}

export function fakeLink(
  clock: Clock,
  clientOptions: Omit<WsConnectionOptions, 'clock'> & { channels: readonly ChannelSpec[] },
  serverOptions: Omit<WsConnectionOptions, 'clock'> & { channels: readonly ChannelSpec[] } = clientOptions,
  open = true,
): FakeLink {
  const clientSocket = new FakeSocket();
  const serverSocket = new FakeSocket();
  clientSocket.peer = serverSocket;
  serverSocket.peer = clientSocket;
  const serverErrors: TransportError[] = [];
  const link: FakeLink = {
    clientSocket,
    serverSocket,
    serverErrors,
    accepted: false,
    client: undefined as unknown as WsConnection,
    server: undefined as unknown as WsConnection,
    pump() {
      for (let i = 0; i < 10_000; i++) {
        if (clientSocket.deliver() + serverSocket.deliver() === 0) return;
      }
      throw new Error('pump did not settle');
    },
  };
  const hooks: WsServerHooks = {
    accepted: () => {
      link.accepted = true;
    },
    rejected: (_c, e) => {
      serverErrors.push(e);
    },
    closed: () => {},
  };
  const client = new WsConnection(clientSocket, 'client', 'fake-server', { ...clientOptions, clock });
  const server = new WsConnection(serverSocket, 'server', 'fake-client', { ...serverOptions, clock }, hooks);
  clientSocket.conn = client;
  serverSocket.conn = server;
  Object.assign(link, { client, server });
  if (open) {
    client.socketOpened();
    link.pump();
  }
  return link;
}

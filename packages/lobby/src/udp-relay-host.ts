import { createSocket, type Socket } from 'node:dgram';
import { type Clock, systemClock, type Timer } from '@netplay/transport';
import { UDP_CLIENT_HEADER_BYTES, UDP_HOST_HEADER_BYTES, UDP_HOST_MAGIC } from './udp-relay.js';

/** Options of {@link hostUdpThroughRelay}. */
export interface UdpRelayHostOptions {
  /** The relay's room port: host name and port. */
  readonly relayHost: string;
  /** The room's UDP port on the relay (the `port` of the relay's `udp` control message). */
  readonly relayPort: number;
  /** The room key the relay gave on the control socket. */
  readonly key: Uint8Array;
  /** The host's own UDP listener. */
  readonly targetHost: string;
  /** The UDP port of the host's own listener. */
  readonly targetPort: number;
  /** Keepalive period (default 5 s) and how long a silent client's local socket lives (default 30 s). */
  readonly keepaliveMs?: number;
  /** How long a relayed client's local socket lives without traffic from that client, in ms (default 30 000); then it is closed. */
  readonly idleMs?: number;
  /** Time source for keepalives and the idle rule (default the system clock); tests pass a `ManualClock`. */
  readonly clock?: Clock;
}

/** The host side of a UDP relay room; see {@link hostUdpThroughRelay}. */
export interface UdpRelayHost {
  /** Clients with a local socket now. */
  readonly clients: number;
  /** Stops keepalives and closes the relay socket and every client's local socket. Idempotent. */
  close(): void;
}

/**
 * Bridges a relay's UDP room port to the host's own UDP listener: one socket to the relay (it
 * registers and keeps alive with id-0 datagrams), and per relayed client a local socket to the
 * listener, so the listener sees each client as its own 127.0.0.1 peer.
 */
export async function hostUdpThroughRelay(options: UdpRelayHostOptions): Promise<UdpRelayHost> {
  const up = createSocket(options.relayHost.includes(':') ? 'udp6' : 'udp4');
  up.on('error', () => {});
  await new Promise<void>((resolve) => up.bind(0, resolve));
  const header = Buffer.alloc(UDP_HOST_HEADER_BYTES);
  Buffer.from(UDP_HOST_MAGIC).copy(header, 0);
  Buffer.from(options.key).copy(header, 4);
  const toRelay = (id: number, payload: Buffer) => {
    const out = Buffer.allocUnsafe(UDP_HOST_HEADER_BYTES + payload.length);
    header.copy(out, 0);
    out.writeUInt16BE(id, 20);
    payload.copy(out, UDP_HOST_HEADER_BYTES);
    up.send(out, options.relayPort, options.relayHost);
  };
  const clock = options.clock ?? systemClock;
  const locals = new Map<number, { socket: Socket; last: number }>();
  let closed = false;
  up.on('message', (msg) => {
    if (msg.length < UDP_CLIENT_HEADER_BYTES) return;
    const id = msg.readUInt16BE(0);
    let l = locals.get(id);
    if (!l) {
      const socket = createSocket(options.targetHost.includes(':') ? 'udp6' : 'udp4');
      socket.on('error', () => {});
      socket.on('message', (reply) => toRelay(id, reply));
      l = { socket, last: clock.now() };
      locals.set(id, l);
    }
    l.last = clock.now();
    l.socket.send(msg.subarray(UDP_CLIENT_HEADER_BYTES), options.targetPort, options.targetHost);
  });
  const keepalive = () => toRelay(0, Buffer.alloc(0));
  keepalive();
  const idleMs = options.idleMs ?? 30_000;
  const keepaliveMs = options.keepaliveMs ?? 5000;
  let timer: Timer;
  const everyKeepalive = () => {
    keepalive();
    const now = clock.now();
    for (const [id, l] of locals) {
      if (now - l.last < idleMs) continue;
      l.socket.close();
      locals.delete(id);
    }
    timer = clock.setTimer(keepaliveMs, everyKeepalive);
  };
  timer = clock.setTimer(keepaliveMs, everyKeepalive);
  return {
    get clients() {
      return locals.size;
    },
    close() {
      if (closed) return;
      closed = true;
      timer.cancel();
      for (const l of locals.values()) l.socket.close();
      locals.clear();
      up.close();
    },
  };
}

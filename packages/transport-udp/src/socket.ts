import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { lookup as dnsLookup } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP, isIPv6 } from 'node:net';
import {
  type ChannelSpec,
  type Clock,
  type Connection,
  type Handler,
  type Listener,
  type ListenerEventMap,
  systemClock,
  TransportError,
  type Unsubscribe,
} from '@netplay/transport';
import { formatAddress, parseAddress } from './address.js';
import { resolveConfig, type UdpConfigOptions } from './config.js';
import { newDropCounters } from './counters.js';
import { UdpPeer } from './peer.js';
import { SendSlab } from './send-slab.js';
import { type ServerOptions, UdpServerCore } from './server.js';

/** Options of {@link listenUdp}. */
export interface UdpListenOptions extends UdpConfigOptions, ServerOptions {
  /** The channels every session has, in order; a client must declare the same list (names and kinds, compared by hash) or is refused. */
  readonly channels: readonly ChannelSpec[];
  /** Address to bind (default `127.0.0.1`; use `0.0.0.0` or `::` to accept remote peers). */
  readonly host?: string;
  /** Port to bind (default 0: any free port; read it from {@link UdpListener.port}). */
  readonly port?: number;
  /** Clock (default the system clock). */
  readonly clock?: Clock;
}

/** Options of {@link connectUdp}. */
export interface UdpConnectOptions extends UdpConfigOptions {
  /** The channels of the connection, in order: must equal the listener's list, else `connectUdp` rejects with `refused`. */
  readonly channels: readonly ChannelSpec[];
  /** The server's host (an IP literal or a name resolved with the system resolver). */
  readonly host: string;
  /** The listener's UDP port (1–65535); required, no default. */
  readonly port: number;
  /** Clock (default the system clock). */
  readonly clock?: Clock;
}

function bind(socket: Socket, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) =>
      reject(new TransportError('io', `cannot bind ${formatAddress(host, port)}: ${e.message}`, { cause: e }));
    socket.once('error', onError);
    socket.bind(port, host, () => {
      socket.off('error', onError);
      resolve();
    });
  });
}

/**
 * Defers a session's flush to the end of the current operation. `process.nextTick` allocates less
 * per call than `queueMicrotask` (which wraps every callback in an async resource).
 */
function defer(fn: () => void): void {
  process.nextTick(fn);
}

/**
 * The listener's `lookup`: it only ever sends to IP literals (the addresses datagrams came from),
 * so it answers at once. `dgram` then sends within `send()` instead of after a `dns.lookup`
 * round through `process.nextTick` for every datagram.
 */
function literalLookup(
  address: string,
  family: number,
  callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
): void {
  if (isIP(address) === 0)
    dnsLookup(address, family, callback); // a host name to bind to
  else callback(null, address, isIPv6(address) ? 6 : 4);
}

/** Connects a UDP socket to the server (resolves once connected; rejects with `io`). */
function connectSocket(socket: Socket, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) =>
      reject(new TransportError('io', `cannot connect to ${formatAddress(host, port)}: ${e.message}`, { cause: e }));
    socket.once('error', onError);
    socket.connect(port, host, () => {
      socket.off('error', onError);
      resolve();
    });
  });
}

function tune(socket: Socket): void {
  try {
    socket.setRecvBufferSize(4 << 20);
    socket.setSendBufferSize(4 << 20);
  } catch {
    // The OS may cap buffer sizes; the defaults still work.
  }
}

/**
 * A UDP listener: one `node:dgram` socket and a {@link UdpServerCore}. Implements the `Listener`
 * contract; `drops` counts spoofed and malformed datagrams.
 */
export class UdpListener implements Listener {
  /** Resolves once the socket is closed (after `close()` and the sessions finished closing). */
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  private socketClosed = false;
  private closing = false;

  /** @internal Use {@link listenUdp}. */
  constructor(
    /** The sans-I/O server this listener feeds its datagrams to: its `pending` sessions, `reassembly` budget, `handshakeReplies` and `config` are readable here. */
    readonly core: UdpServerCore,
    private readonly socket: Socket,
    /** The bound port. */
    readonly port: number,
  ) {
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    socket.on('close', () => {
      this.socketClosed = true;
      this.resolveClosed();
    });
  }

  get localAddress(): string {
    return this.core.localAddress;
  }

  get connections(): readonly Connection[] {
    return this.core.connections;
  }

  /** Dropped datagrams by cause. */
  get drops() {
    return this.core.drops;
  }

  on<K extends keyof ListenerEventMap>(type: K, handler: Handler<ListenerEventMap, K>): Unsubscribe {
    return this.core.on(type, handler);
  }

  /** Closes every session (they finish their close handshake), then the socket. */
  close(reason?: string): void {
    this.closing = true;
    this.core.close(reason);
    this.drained();
  }

  /** @internal Called when the last session has finished. */
  drained(): void {
    if (this.closing && !this.socketClosed && this.core.sessionCount === 0) {
      this.socketClosed = true;
      this.socket.close();
    }
  }
}

/** Binds a UDP socket and starts accepting connections. */
export async function listenUdp(options: UdpListenOptions): Promise<UdpListener> {
  const config = resolveConfig(options);
  const host = options.host ?? '127.0.0.1';
  const socket = createSocket({
    type: isIPv6(host) ? 'udp6' : 'udp4',
    ipv6Only: isIPv6(host),
    lookup: literalLookup as never, // Node calls it as (host, family, callback)
  });
  await bind(socket, options.port ?? 0, host);
  tune(socket);
  const port = socket.address().port;
  const slab = new SendSlab(socket);
  const parsed = new Map<string, { host: string; port: number }>();
  let listener: UdpListener | undefined;
  const core = new UdpServerCore(
    {
      clock: options.clock ?? systemClock,
      random: (n) => new Uint8Array(randomBytes(n)),
      output: (datagram, address) => {
        let to = parsed.get(address);
        if (!to) {
          // Cache parsed destinations (bounded: unverified addresses come and go).
          if (parsed.size >= 4096) parsed.clear();
          to = parseAddress(address);
          parsed.set(address, to);
        }
        // Sessions lend their datagram for the call only; `dgram` usually hands it to the kernel
        // within `send()` (literalLookup), but may queue it by reference: it goes from a slab.
        const at = slab.put(datagram);
        socket.send(slab.buffer, at, datagram.length, to.port, to.host);
      },
      onDrained: () => listener?.drained(),
      defer,
    },
    config,
    options.channels,
    formatAddress(host, port),
    options,
  );
  // Address keys by IP and port, so a datagram from a known peer builds no string.
  const keys = new Map<string, Map<number, string>>();
  let keyCount = 0;
  socket.on('message', (msg, rinfo) => {
    let byPort = keys.get(rinfo.address);
    let key = byPort?.get(rinfo.port);
    if (key === undefined) {
      // Bounded: unverified addresses come and go.
      if (keyCount >= 4096) {
        keys.clear();
        keyCount = 0;
        byPort = undefined;
      }
      key = rinfo.family === 'IPv6' ? `[${rinfo.address}]:${rinfo.port}` : `${rinfo.address}:${rinfo.port}`;
      if (!byPort) {
        byPort = new Map();
        keys.set(rinfo.address, byPort);
      }
      byPort.set(rinfo.port, key);
      keyCount++;
    }
    core.input(msg, key);
  });
  listener = new UdpListener(core, socket, port);
  socket.on('error', (e) => core.reportError(new TransportError('io', `socket error: ${e.message}`, { cause: e })));
  return listener;
}

/**
 * Connects to a UDP listener and resolves with the open connection, or rejects with the
 * `TransportError` that ended the attempt (`refused`, `timeout`, `io`). The connection's socket is
 * closed when the connection has finished closing.
 */
export async function connectUdp(options: UdpConnectOptions): Promise<UdpPeer> {
  const config = resolveConfig(options);
  let host = options.host;
  if (!isIP(host)) {
    try {
      host = (await lookup(host)).address;
    } catch (e) {
      throw new TransportError('io', `cannot resolve ${options.host}`, { cause: e });
    }
  }
  const v6 = isIPv6(host);
  const socket = createSocket({ type: v6 ? 'udp6' : 'udp4' });
  await bind(socket, 0, v6 ? '::' : '0.0.0.0');
  // A connected socket sends without an address lookup per datagram (within `send()`), and the
  // kernel drops datagrams from other sources before they reach us.
  await connectSocket(socket, options.port, host);
  tune(socket);
  const slab = new SendSlab(socket);
  const drops = newDropCounters();
  let closed = false;
  let dead = false;
  // Close the socket only after the last datagrams (e.g. a CloseAck) have left.
  const closeSocket = () => {
    if (closed || !dead) return;
    if (socket.getSendQueueCount() > 0) {
      setTimeout(closeSocket, 1);
      return;
    }
    closed = true;
    socket.close();
  };
  const peer = UdpPeer.client(
    {
      clock: options.clock ?? systemClock,
      output: (datagram) => {
        if (closed) return;
        // The peer lends its datagram for the call only; `dgram` usually hands it to the kernel
        // within `send()`, but may queue it by reference: it goes from a slab.
        const at = slab.put(datagram);
        socket.send(slab.buffer, at, datagram.length);
      },
      drops,
      random: (n) => new Uint8Array(randomBytes(n)),
      onDead: () => {
        dead = true;
        closeSocket();
      },
      defer,
    },
    config,
    options.channels,
    formatAddress(host, options.port),
  );
  socket.on('message', (msg, rinfo) => {
    if (rinfo.port !== options.port || rinfo.address !== host) drops.unknownAddress++;
    else peer.input(msg);
  });
  socket.on('error', () => {
    // Errors such as ICMP port unreachable surface as silence, then a timeout.
  });
  return new Promise<UdpPeer>((resolve, reject) => {
    if (peer.state === 'open') resolve(peer);
    const offOpen = peer.on('open', () => {
      offClose();
      resolve(peer);
    });
    const offClose = peer.on('close', (e) => {
      offOpen();
      reject(e.error ?? new TransportError('closed', `closed while connecting: ${e.reason}`));
    });
  });
}

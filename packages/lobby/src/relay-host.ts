import { WebSocket } from 'ws';
import { LobbyError } from './errors.js';
import type { RelayControlMessage } from './relay.js';
import { hostUdpThroughRelay, type UdpRelayHost } from './udp-relay-host.js';

/** Options of {@link hostThroughRelay}. */
export interface RelayHostOptions {
  /** The relay's WebSocket base (`ws://lobby:port`; join info's relay URL without the path works too). */
  readonly relayUrl: string;
  /** The id of the room to relay (the lobby's answer to the announce). */
  readonly room: string;
  /** The room token from announcing. */
  readonly token: string;
  /** The host's own netplay-ws listener (e.g. `ws://127.0.0.1:5001`), reached from this machine. */
  readonly target: string;
  /** The host's own UDP listener (transport-udp), to be reached through the relay's UDP room port too. */
  readonly udpTarget?: {
    /** The listener's address as reached from this machine (e.g. `127.0.0.1`). */
    readonly host: string;
    /** The listener's UDP port. */
    readonly port: number;
  };
  /** Most bytes held per link while the local listener is not open yet (default 1 MiB). */
  readonly maxQueuedBytes?: number;
}

/** A host's registration with a relay; see {@link hostThroughRelay}. */
export interface RelayHost {
  /** Links open now. */
  readonly links: number;
  /** Resolves once the relay confirmed the registration; rejects with a {@link LobbyError}. */
  readonly registered: Promise<void>;
  /** The UDP bridge, once the relay opened the room's UDP port (with `udpTarget`). */
  readonly udp: UdpRelayHost | undefined;
  /** Closes the registration and every link. */
  close(): void;
  /** Called when the control socket closes (relay down, replaced…). */
  onClose?: (code: number, reason: string) => void;
}

/**
 * Registers a host with the lobby's relay and, for every client the relay announces, opens a link
 * to the relay and a WebSocket to the host's own listener (`target`) and copies messages between
 * them. The host's netplay-ws listener sees each relayed client as a local connection (from
 * 127.0.0.1 when the target is loopback: per-address caps then count every relayed client as one
 * address).
 */
export function hostThroughRelay(options: RelayHostOptions): RelayHost {
  const base = options.relayUrl.replace(/\/relay\/.*$/, '').replace(/\/+$/, '');
  const q = (extra: string) =>
    `room=${encodeURIComponent(options.room)}&token=${encodeURIComponent(options.token)}${extra}`;
  const control = new WebSocket(`${base}/relay/host?${q(options.udpTarget ? '&udp=1' : '')}`, {
    perMessageDeflate: false,
  });
  let udp: UdpRelayHost | undefined;
  let udpStarting: Promise<void> = Promise.resolve();
  let closed = false;
  const sockets = new Set<WebSocket>();
  const maxQueued = options.maxQueuedBytes ?? 1 << 20;
  let links = 0;
  let resolveReg!: () => void;
  let rejectReg!: (e: LobbyError) => void;
  const registered = new Promise<void>((res, rej) => {
    resolveReg = res;
    rejectReg = rej;
  });
  registered.catch(() => {});
  const host: RelayHost = {
    get links() {
      return links;
    },
    registered,
    get udp() {
      return udp;
    },
    close() {
      closed = true;
      udp?.close();
      control.close(1000, 'host closed');
      for (const s of sockets) s.close(1000, 'host closed');
    },
  };
  control.on('error', () => {});
  control.on('close', (code, reason) => {
    udp?.close();
    rejectReg(new LobbyError('io', `relay closed the registration: ${code} ${reason.toString()}`));
    for (const s of sockets) s.close(1000, 'relay registration closed');
    host.onClose?.(code, reason.toString());
  });
  control.on('message', (data, isBinary) => {
    if (isBinary) return;
    let msg: RelayControlMessage;
    try {
      msg = JSON.parse(data.toString()) as RelayControlMessage;
    } catch {
      return;
    }
    if (msg.type === 'registered') void udpStarting.then(resolveReg, rejectReg);
    else if (
      msg.type === 'udp' &&
      options.udpTarget &&
      typeof msg.port === 'number' &&
      /^[0-9a-f]{32}$/.test(msg.key)
    ) {
      const target = options.udpTarget;
      udpStarting = hostUdpThroughRelay({
        relayHost: new URL(base).hostname.replace(/^\[|\]$/g, ''),
        relayPort: msg.port,
        key: Buffer.from(msg.key, 'hex'),
        targetHost: target.host,
        targetPort: target.port,
      }).then(
        (u) => {
          if (closed) u.close();
          else udp = u;
        },
        (e: Error) => {
          throw new LobbyError('io', `UDP relay bridge: ${e.message}`);
        },
      );
    } else if (msg.type === 'client' && typeof msg.client === 'string') openLink(msg.client);
  });

  function openLink(client: string): void {
    const link = new WebSocket(`${base}/relay/link?${q(`&client=${encodeURIComponent(client)}`)}`, {
      perMessageDeflate: false,
    });
    const local = new WebSocket(options.target, { perMessageDeflate: false });
    sockets.add(link);
    sockets.add(local);
    links++;
    const queue: { data: Buffer; binary: boolean }[] = [];
    let queued = 0;
    link.on('message', (data: Buffer, binary) => {
      if (local.readyState === WebSocket.OPEN) {
        local.send(data, { binary });
        return;
      }
      queued += data.length;
      if (queued > maxQueued) link.close(1009, 'relay link queue full');
      else queue.push({ data, binary });
    });
    local.on('open', () => {
      for (const m of queue) local.send(m.data, { binary: m.binary });
      queue.length = 0;
    });
    local.on('message', (data: Buffer, binary) => {
      if (link.readyState === WebSocket.OPEN) link.send(data, { binary });
    });
    let done = false;
    const end = (other: WebSocket) => (code: number, reason: Buffer) => {
      if (done) return;
      done = true;
      links--;
      sockets.delete(link);
      sockets.delete(local);
      const sendable = code === 1000 || (code >= 3000 && code <= 4999);
      if (other.readyState === WebSocket.CONNECTING) other.terminate();
      else other.close(sendable ? code : 1000, reason.toString());
    };
    link.on('close', end(local));
    local.on('close', end(link));
    link.on('error', () => {});
    local.on('error', () => {});
  }
  return host;
}

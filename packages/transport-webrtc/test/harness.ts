import type { ChannelSpec, Connection, RateLimits, Timeouts } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import {
  connectWebRtcNode,
  listenSignaling,
  listenWebRtcNode,
  NodeRTCPeerConnection,
  nodeRtc,
  type SignalingServer,
  type WebRtcConnection,
  type WebRtcConnectionOptions,
  type WebRtcListener,
} from '../src/server.js';
import { cuttableRtc, type LinkSwitch } from './link-shim.js';
import type { RelayPath } from './relay-path.js';

/** A signaling server, a host listening in a room and a guest connected to it, in one process. */
export interface RtcPair {
  readonly server: SignalingServer;
  readonly listener: WebRtcListener;
  readonly client: WebRtcConnection;
  readonly host: Connection;
  readonly link: LinkSwitch;
  dispose(): Promise<void>;
}

let rooms = 0;

/** Starts everything on loopback and resolves once both ends are open. */
export async function makePair(
  channels: readonly ChannelSpec[],
  timeouts: Partial<Timeouts>,
  extra: Partial<WebRtcConnectionOptions> & { rateLimits?: RateLimits | false } = {},
  /** Route every datagram through this impairing relay (the only ICE path). */
  relay?: RelayPath,
): Promise<RtcPair> {
  const server = await listenSignaling({ rateLimits: false });
  const link: LinkSwitch = { cut: false };
  const base = cuttableRtc(NodeRTCPeerConnection, link);
  const rtc = { ...nodeRtc({ bindAddress: '127.0.0.1' }), RTCPeerConnection: relay ? relay.host(base) : base };
  const clientRtc = { ...rtc, RTCPeerConnection: relay ? relay.client(base) : base };
  const room = `room-${process.pid}-${rooms++}`;
  const listener = await listenWebRtcNode({
    signaling: { url: server.url, room, peer: 'host' },
    channels,
    timeouts,
    rtc,
    ...extra,
  });
  let host: Connection | undefined;
  let why = '';
  listener.on('connection', (c) => {
    host ??= c;
  });
  const client = connectWebRtcNode({
    signaling: { url: server.url, room, peer: 'guest' },
    to: 'host',
    channels,
    timeouts,
    rtc: clientRtc,
    ...extra,
  });
  client.on('close', (e) => {
    why = `${e.code}: ${e.reason}`;
  });
  const ok = await pollUntil(
    () => client.state === 'closed' || (client.state === 'open' && host !== undefined),
    10_000,
  );
  if (!ok || client.state !== 'open' || !host) {
    client.close();
    listener.close();
    await server.close();
    await relay?.close();
    throw new Error(`pair did not open (client ${client.state}${why ? `, ${why}` : ''})`);
  }
  return {
    server,
    listener,
    client,
    host,
    link,
    async dispose() {
      client.close('dispose');
      listener.close('dispose');
      await server.close();
      await relay?.close();
    },
  };
}

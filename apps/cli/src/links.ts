import type { LinkOptions } from '@netplay/session';
import type { Clock } from '@netplay/transport';
import {
  connectSession,
  listenSession,
  parseAddress,
  type TransportName,
  type WebRtcTarget,
  webrtcPeerName,
} from './net.js';

/** Direct links a join keeps open at once: one per other player (at most 15), plus room for dialers still authenticating. */
const LINK_SLOTS = 24;

/**
 * The direct links of `netplay join` (rollback with 3 or more players, when the host chooses
 * them): UDP and WebSocket listen on `listenPort` (0: a free port) of every interface and announce
 * `":PORT"` (the host passes on the address it sees this join from); WebRTC takes a second peer
 * name in the session's room of the signaling server and announces it. Dials go the same way.
 */
export function joinLinks(
  transport: TransportName,
  clock: Clock,
  listenPort: number,
  webrtc: (WebRtcTarget & { readonly nick: string }) | undefined,
): LinkOptions {
  if (transport === 'webrtc' && webrtc !== undefined) {
    const peer = `${webrtcPeerName(webrtc.nick)}-l`;
    return {
      listen: async () => {
        const { listener } = await listenSession('webrtc', '', 0, clock, LINK_SLOTS, { ...webrtc, peer });
        return { listener, address: peer };
      },
      connect: (address) => connectSession('webrtc', '', 0, clock, { ...webrtc, to: address }),
    };
  }
  return {
    listen: async () => {
      const { listener, port } = await listenSession(transport, '0.0.0.0', listenPort, clock, LINK_SLOTS);
      return { listener, address: `:${port}` };
    },
    connect: (address) => {
      const { host, port } = parseAddress(address);
      return connectSession(transport, host, port, clock);
    },
  };
}

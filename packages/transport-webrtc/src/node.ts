/**
 * `@netplay/transport-webrtc/node`: the same transport in Node, with node-datachannel's W3C
 * `RTCPeerConnection` and `ws`'s `WebSocket` injected. Re-exports the browser-safe entry.
 * @packageDocumentation
 */
import { RTCPeerConnection } from 'node-datachannel/polyfill';
import { WebSocket } from 'ws';
import type { WebRtcConnection } from './connection.js';
import {
  type ConnectWebRtcOptions,
  connectWebRtc,
  type ListenWebRtcOptions,
  listenWebRtc,
  type WebRtcListener,
} from './peer.js';
import type { RtcConfiguration, RtcPeerConnectionConstructor, RtcSetup } from './rtc.js';
import type { SignalingSocketConstructor } from './signaling-client.js';

export * from './index.js';

/** node-datachannel's `RTCPeerConnection`, typed for this package. */
export const NodeRTCPeerConnection = RTCPeerConnection as unknown as RtcPeerConnectionConstructor;
/** `ws`'s `WebSocket`, typed for the signaling client. */
export const NodeWebSocket = WebSocket as unknown as SignalingSocketConstructor;

/**
 * An {@link RtcSetup} on node-datachannel. `config` is passed through (e.g. `iceServers` with
 * STUN/TURN for real deployments); node-datachannel also takes `bindAddress` (e.g. `'127.0.0.1'`
 * to gather loopback candidates only, as in tests) and `portRangeBegin`/`portRangeEnd`.
 */
export function nodeRtc(config: RtcConfiguration = {}): RtcSetup {
  return { RTCPeerConnection: NodeRTCPeerConnection, config: { iceServers: [], ...config } };
}

/** A loopback-only setup for tests and benchmarks: no ICE servers, candidates on 127.0.0.1. */
export const LOOPBACK_RTC: RtcSetup = nodeRtc({ bindAddress: '127.0.0.1' });

function withNode<T extends ConnectWebRtcOptions | ListenWebRtcOptions>(options: T): T {
  const signaling =
    'url' in options.signaling && !options.signaling.WebSocket
      ? { ...options.signaling, WebSocket: NodeWebSocket }
      : options.signaling;
  return { ...options, rtc: options.rtc ?? nodeRtc(), signaling };
}

/** {@link connectWebRtc} with node-datachannel and `ws` as defaults. */
export function connectWebRtcNode(options: ConnectWebRtcOptions): WebRtcConnection {
  return connectWebRtc(withNode(options));
}

/** {@link listenWebRtc} with node-datachannel and `ws` as defaults. */
export function listenWebRtcNode(options: ListenWebRtcOptions): Promise<WebRtcListener> {
  return listenWebRtc(withNode(options));
}

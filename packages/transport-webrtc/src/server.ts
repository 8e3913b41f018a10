/**
 * `@netplay/transport-webrtc/server`: the Node signaling server (on `ws`). Re-exports the Node entry.
 * @packageDocumentation
 */
export * from './node.js';
export {
  DEFAULT_SIGNALING_RATE_LIMITS,
  listenSignaling,
  SignalingCloseCode,
  type SignalingRouter,
  SignalingServer,
  type SignalingServerOptions,
  type SignalingServerStats,
} from './signaling-server.js';

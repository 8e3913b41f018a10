/**
 * `@netplay/transport-webrtc`: a netplay transport over WebRTC data channels, for browser-to-browser
 * (and browser-to-Node) play without a game server. This entry is browser-safe: it imports no Node
 * module and no npm package; `RTCPeerConnection` and `WebSocket` are the global ones or injected.
 * Node wiring (node-datachannel, `ws`) is in `@netplay/transport-webrtc/node`; the signaling server
 * in `@netplay/transport-webrtc/server`.
 * @packageDocumentation
 */
export {
  WebRtcConnection,
  type WebRtcConnectionStats,
  type WebRtcRole,
  type WebRtcServerHooks,
} from './connection.js';
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_MAX_UNRELIABLE_BYTES,
  type ResolvedOptions,
  resolveOptions,
  type WebRtcConnectionOptions,
} from './options.js';
export {
  type ConnectWebRtcOptions,
  connectWebRtc,
  type ListenWebRtcOptions,
  listenWebRtc,
  type SignalingTarget,
  WebRtcListener,
} from './peer.js';
export {
  chooseRemoteAddress,
  isIpLiteral,
  type RemoteAddressSource,
  type RemoteCandidate,
  type RtcStatsLike,
  type RtcStatsReportLike,
  selectedRemoteCandidate,
} from './remote-address.js';
export type {
  IceServer,
  PeerSignal,
  RtcConfiguration,
  RtcDataChannelInit,
  RtcDataChannelLike,
  RtcIceCandidateInit,
  RtcPeerConnectionConstructor,
  RtcPeerConnectionLike,
  RtcSessionDescription,
  RtcSetup,
} from './rtc.js';
export {
  type ClientMessage,
  encodeMessage,
  MAX_CANDIDATE_CHARS,
  MAX_SDP_CHARS,
  NAME_PATTERN,
  parseClientMessage,
  parseServerMessage,
  parseSignal,
  type ServerMessage,
  SIGNALING_VERSION,
  SignalingError,
  type SignalingErrorCode,
} from './signal-protocol.js';
export {
  SignalingClient,
  type SignalingClientOptions,
  type SignalingEventMap,
  type SignalingSocket,
  type SignalingSocketConstructor,
} from './signaling-client.js';
export {
  CloseKind,
  CONTROL_CHANNEL_ID,
  ControlType,
  FIRST_DATA_CHANNEL_ID,
  FragmentType,
  PING_CHANNEL_ID,
  PROTOCOL_VERSION,
  Reassembler,
} from './wire.js';

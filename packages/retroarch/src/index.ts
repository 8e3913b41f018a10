/**
 * @netplay/retroarch: talk to real RetroArch 1.14 netplay (protocol 6). A sans-I/O client that
 * spectates or plays, and a recorder of a session's input log. The `node:net` shell and the
 * record command are in `@netplay/retroarch/node`.
 * @packageDocumentation
 */
export {
  DEFAULT_MAX_RETROARCH_CONNECTIONS,
  RetroArchAdmission,
  type RetroArchAdmissionOptions,
  type RetroArchArrival,
} from './admission.js';
export { RetroArchClient, type RetroArchClientState } from './client.js';
export type {
  RetroArchClientEvent,
  RetroArchCrcEvent,
  RetroArchInputEvent,
  RetroArchNoInputEvent,
  RetroArchSessionInfo,
} from './client-events.js';
export type { RetroArchClientOptions, RetroArchCoreInfo } from './client-options.js';
export { retroArchDeviceWords, retroArchInputWords } from './device-words.js';
export {
  RetroArchClientEmulator,
  type RetroArchClientEmulatorEvent,
  type RetroArchClientEmulatorOptions,
  type RetroArchClientEmulatorStats,
} from './emulating-client.js';
export {
  type RetroArchEmulatedPeer,
  RetroArchEmulatingHost,
  type RetroArchEmulatingHostEvent,
  type RetroArchEmulatingHostOptions,
  type RetroArchEmulatingHostStats,
} from './emulating-host.js';
export { RetroArchError, type RetroArchErrorCode } from './errors.js';
export {
  RetroArchHostConnection,
  type RetroArchHostEvent,
  type RetroArchHostOptions,
  type RetroArchHostState,
} from './host.js';
export { RetroArchNetplayState } from './netplay-state.js';
export {
  parseRecording,
  RECORDING_FORMAT,
  RECORDING_VERSION,
  type Recording,
  type RecordingEntry,
  type RecordingHeader,
  RetroArchRecorder,
} from './recorder.js';
export {
  type RetroArchRelayAttachment,
  type RetroArchRelaySink,
  RetroArchSessionRelay,
} from './relay.js';
export { type RetroArchCore, retroArchCoreInfo } from './retroarch-core.js';
export { inflateSavestate } from './savestate.js';
export { RetroArchTunnelError, type RetroArchTunnelErrorCode } from './tunnel-errors.js';
export {
  decodeTunnelMessage,
  encodeTunnelMessage,
  isZeroTunnelId,
  NETPLAY_HEADER_MAGIC,
  parseTunnelId,
  parseTunnelRelayAddress,
  TUNNEL_ADDRESS_MAGIC,
  TUNNEL_ADDRESS_REPLY_BYTES,
  TUNNEL_ID_BYTES,
  TUNNEL_LINK_MAGIC,
  TUNNEL_MESSAGE_BYTES,
  TUNNEL_OUTDATED_REPLY,
  TUNNEL_PING_MAGIC,
  TUNNEL_SESSION_MAGIC,
  type TunnelDecodeResult,
  type TunnelMessage,
  tunnelAddressBytes,
  tunnelAddressText,
  tunnelIdHex,
} from './tunnel-protocol.js';
export { zlibStored } from './zlib-stored.js';

/**
 * @netplay/lockstep: delay-based lockstep schedulers after FCE Ultra (client-server), MAMEHub
 * (P2P full mesh) and FS-UAE (P2P frame-advance). Each is a sans-I/O state machine fed messages,
 * local input and time, that releases frames with their complete inputs; {@link LockstepRunner}
 * is the thin shell that binds one to transport connections, a clock and a core.
 * @packageDocumentation
 */
export {
  LockstepBuilder,
  LockstepGame,
  type LockstepMode,
  type LockstepOptions,
  lockstep,
  lockstepChannels,
  type ResolvedLockstepOptions,
  resolveLockstepOptions,
} from './builder.js';
export {
  type ChatLine,
  CLIENT_SERVER_CHANNELS,
  type ClientServerOptions,
  ClientServerServer,
  DEFAULT_WATCHER_LAG_FRAMES,
  isFceuShape,
  WATCHER_PROGRESS,
} from './client-server.js';
export { ClientServerClient } from './client-server-client.js';
export { LockstepError, type LockstepErrorCode } from './errors.js';
export { FRAME_ADVANCE_CHANNELS, type FrameAdvanceOptions, FrameAdvancePeer } from './frame-advance.js';
export {
  decodeFaMessage,
  encodeFaAdvance,
  encodeFaEvent,
  encodeFaHostProgress,
  encodeFaLatencyInfo,
  encodeFaPing,
  encodeFaPong,
  FA_HOST_PROGRESS,
  FA_LATENCY_INFO,
  type FrameAdvanceEvent,
  type FrameAdvanceMessage,
  toMicros,
} from './frame-advance-wire.js';
export { PingHistory, type PingHistoryOptions } from './latency.js';
export type { EndReason, LivenessOptions, LockstepEvent } from './liveness.js';
export { defaultCommandHandler, type LoggedFrame, logEntry, replayLog, runFrame } from './log.js';
export { MESH_CHANNELS, type MeshAction, type MeshMember, type MeshOptions, MeshPeer } from './mesh.js';
export { INCARNATION_IDS } from './mesh-join.js';
export { MESH_RELAY_HISTORY, MeshRelayHistory } from './mesh-relay-history.js';
export type { PeerReport } from './report.js';
export { LockstepRunner, type LockstepRunnerOptions } from './runner.js';
export type { CommandHandler, Envelope, FrameRequest, LockstepScheduler } from './types.js';
export { isStateful, type StatefulScheduler } from './types.js';
export { WatcherStream, type WatcherStreamOptions } from './watcher-stream.js';

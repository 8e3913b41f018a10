/**
 * @netplay/rollback: rollback netplay sessions after GGPO and RetroArch. Sessions are sans-I/O:
 * fed inputs, messages and time, they return ordered requests (save, load, advance) for the
 * application's core, and hand messages to send to a callback. `CoreDriver` carries the requests
 * out on a @netplay/state `Core`; `ConnectionSet` binds sessions to @netplay/transport connections.
 * @packageDocumentation
 */

export {
  type ResolvedRollbackOptions,
  RollbackBuilder,
  RollbackGame,
  type RollbackOptions,
  RollbackSpectatorBuilder,
  RollbackSpectatorGame,
  type RollbackSpectatorOptions,
  resolveRollbackOptions,
  rollback,
  rollbackSpectator,
} from './builder.js';
export { CONTROL_CHANNEL, INPUT_CHANNEL, ROLLBACK_CHANNELS, type SendFn } from './channels.js';
export { ConnectionSet, type SessionEndpoint } from './connections.js';
export { type ChecksumSink, CoreDriver } from './driver.js';
export { RollbackError, type RollbackErrorCode } from './errors.js';
export type { SessionEventMap } from './events.js';
export type { SessionEndReason } from './finality.js';
export { InputQueue } from './input-queue.js';
export { InputStatus } from './input-status.js';
export type { P2PSessionOptions, RemotePlayer } from './p2p-options.js';
export { FINALITY_LAG_FRAMES, P2PSession } from './p2p-session.js';
export {
  decodeWelcome,
  encodeWelcome,
  type PlayerAdmission,
  type PlayerWelcome,
  type SlotStatus,
} from './player-entries.js';
export { type Predictor, predictNoInput, repeatLastInput } from './predictor.js';
export type { AdvanceRequest, LoadRequest, SaveRequest, SessionRequest } from './requests.js';
export type { PeerStats, SessionStats } from './session-stats.js';
export { SpectatorSession, type SpectatorSessionOptions } from './spectator-session.js';
export { type SyncTestOptions, SyncTestSession } from './sync-test-session.js';

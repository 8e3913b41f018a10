/**
 * @netplay/transport: the transport contract (`Connection`, `Listener`, channels, stats, typed
 * errors), time and randomness for sans-I/O code (`Clock`, `ManualClock`, `SystemClock`, `Prng`),
 * and a seeded `SimulatedNetwork` with an in-memory transport for deterministic tests.
 * The conformance suite lives in `@netplay/transport/conformance`.
 * @packageDocumentation
 */

export { addressKey } from './address-key.js';
export {
  AdmissionGate,
  type AdmissionLimits,
  type AdmitResult,
  DEFAULT_ADMISSION_LIMITS,
  validateAdmissionLimits,
} from './admission.js';
export { AttemptLimiter, type AttemptLimits, DEFAULT_ATTEMPT_LIMITS } from './attempt-limiter.js';
export {
  channelSignature,
  checkSend,
  decodeCloseReason,
  encodeCloseReason,
  MAX_CHANNELS,
  sameChannels,
  truncateCloseReason,
  validateChannels,
} from './channels.js';
export { type Clock, ManualClock, type Timer } from './clock.js';
export { MutableConnectionStats } from './connection-stats.js';
export {
  type ChannelKind,
  type ChannelSpec,
  type CloseCode,
  type CloseEvent,
  type Connection,
  type ConnectionEventMap,
  type ConnectionLimits,
  type ConnectionState,
  type ConnectionStats,
  DEFAULT_TIMEOUTS,
  type InterruptedEvent,
  type Listener,
  type ListenerEventMap,
  MAX_CLOSE_REASON_BYTES,
  type MessageEvent,
  type ResumedEvent,
  type Timeouts,
} from './contract.js';
export { Emitter, type EventSource, type Handler, type Unsubscribe } from './emitter.js';
export { TransportError, type TransportErrorCode } from './errors.js';
export { MemoryConnection, type MemoryConnectionOptions, MemoryListener } from './memory-transport.js';
export { OptionChecks, withDefault } from './option-checks.js';
export { expectedOutageEvents, OUTAGE_TIMEOUTS, runOutage } from './outage.js';
export { Prng, type PrngState } from './prng.js';
export { DEFAULT_RATE_LIMITS, RateBudget, type RateLimits, validateRateLimits } from './rate-budget.js';
export { RttEstimator } from './rtt.js';
export { SendLedger } from './send-ledger.js';
export {
  DEFAULT_LINK,
  type LinkConditions,
  type ListenOptions,
  type NetworkStats,
  type PairOptions,
  SIM_HEADER_BYTES,
  SimulatedNetwork,
  type SimulatedNetworkOptions,
} from './simulated-network.js';
export { SystemClock, systemClock } from './system-clock.js';

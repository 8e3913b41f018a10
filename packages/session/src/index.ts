/**
 * @netplay/session: host and join netplay sessions with a RetroArch-style handshake in our own
 * protocol (version header, unique nick, salted SHA-256 password, core and content check, SYNC),
 * then run the scheduler the host chose over the same connection. See the package README.
 * @packageDocumentation
 */
export { DEFAULT_HANDSHAKE_TIMEOUT_MS, type HostAdmissionOptions } from './admission.js';
export {
  RELAY_CONTROL_CHANNEL,
  RELAY_INPUT_CHANNEL,
  SESSION_CHANNELS,
  SESSION_CONTROL_CHANNEL,
} from './channels.js';
export {
  type JoinInfo,
  NetplayClient,
  type NetplayClientEventMap,
  type NetplayClientOptions,
  type NetplayClientState,
} from './client.js';
export type { LinkListen, LinkOptions } from './client-links.js';
export {
  CommandWord,
  checkChat,
  MAX_CHAT_BYTES,
  SESSION_COMMAND_KINDS,
  type SessionCommandKind,
  sanitizeChat,
} from './commands.js';
export { type ContentInfo, hashContent } from './content.js';
export { SESSION_ERROR_CODES, SessionError, type SessionErrorCode } from './errors.js';
export {
  type HostPeerInfo,
  NetplayHost,
  type NetplayHostEventMap,
  type NetplayHostOptions,
} from './host.js';
export type { ChatEvent } from './host-control.js';
export { DEFAULT_LINK_TIMEOUT_MS, resolveLinkAddress } from './host-links.js';
export { REPLACE_AFTER_SILENCE_MS } from './host-rejoin.js';
export {
  decodeLinkMessage,
  encodeLinkAddress,
  encodeLinkHello,
  encodeLinkSlots,
  encodeLinks,
  isLinkMessage,
  LINK_TOKEN_BYTES,
  type LinkAddressMessage,
  type LinkEntry,
  type LinkHelloMessage,
  type LinkMessage,
  LinkMessageType,
  type LinkSlotsMessage,
  type LinksMessage,
} from './link-messages.js';
export { SlotCore, SlotLayout, slotLayoutFor } from './local-ports.js';
export {
  type ChallengeMessage,
  type ChatMessage,
  type ChatSendMessage,
  type CommandMessage,
  type CommandRequestMessage,
  decodeSessionMessage,
  encodeChallenge,
  encodeChat,
  encodeChatSend,
  encodeCommand,
  encodeCommandRequest,
  encodeHello,
  encodeInfo,
  encodeRefuse,
  encodeSync,
  encodeWait,
  type HelloMessage,
  type InfoMessage,
  MAX_NICK_BYTES,
  type RefuseMessage,
  type RosterEntry,
  SESSION_MAGIC,
  SESSION_PROTOCOL_VERSION,
  type SessionMessage,
  SessionMessageType,
  SPECTATOR_SLOT,
  type SyncMessage,
  type WaitMessage,
} from './messages.js';
export { SESSION_MODES, type SessionMode, SUPPORTED_MODES } from './mode.js';
export {
  createP2PScheduler,
  isP2PLockstep,
  type P2PLockstepMode,
  type P2PLockstepShape,
  type P2PScheduler,
  type P2PSchedulerOptions,
  p2pShape,
} from './p2p-lockstep.js';
export { passwordProof } from './password.js';
export { decodeRejoin, encodeRejoin, REJOIN_TYPE, type RejoinMessage, type RejoinTarget } from './rejoin-message.js';
export {
  BROADCAST_SLOT,
  ROUTE_HEADER_BYTES,
  RoutedConnection,
  type RoutedConnectionOptions,
  routedChannelIndex,
} from './routed-connection.js';

/**
 * @netplay/transport-udp: a reliable, channelled UDP transport (node:dgram) implementing the
 * `@netplay/transport` contract. A sans-I/O core (`UdpPeer`, `UdpServerCore`) with a thin dgram
 * shell (`listenUdp`, `connectUdp`). The impairing test relay is in `@netplay/transport-udp/relay`.
 * @packageDocumentation
 */
export { formatAddress, parseAddress } from './address.js';
export { fragmentSize, maxUnreliable, resolveConfig, type UdpConfig, type UdpConfigOptions } from './config.js';
export { type DropCounters, newDropCounters } from './counters.js';
export { UdpPeer } from './peer.js';
export { channelHash, type PeerIo, type UdpPeerCounters } from './peer-io.js';
export { PendingSessions, REVIVE_ENTRIES, UDP_ADMISSION_LIMITS } from './pending-sessions.js';
export { FRAGMENT_OVERHEAD, MESSAGE_OVERHEAD, ReassemblyBudget } from './reassembly.js';
export { type ServerIo, type ServerOptions, UdpServerCore } from './server.js';
export { connectUdp, listenUdp, type UdpConnectOptions, UdpListener, type UdpListenOptions } from './socket.js';
export {
  COOKIE_BYTES,
  DATA_HEADER_BYTES,
  FRAGMENT_HEADER_BYTES,
  FrameType,
  HELLO_BYTES,
  PacketType,
  PROTOCOL_MAGIC,
  RefuseReason,
  UNRELIABLE_HEADER_BYTES,
} from './wire.js';

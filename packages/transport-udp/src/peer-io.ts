import { crc32 } from '@netplay/protocol';
import { type ChannelSpec, type Clock, channelSignature } from '@netplay/transport';
import type { DropCounters } from './counters.js';
import type { ReassemblyBudget } from './reassembly.js';

/** What a `UdpPeer` needs from its shell (a socket, or a simulated link in tests). */
export interface PeerIo {
  /** Time and timers. */
  readonly clock: Clock;
  /**
   * Sends one datagram to the peer. `datagram` is lent for the duration of the call: the peer
   * encodes every DATA packet into one reused buffer, so send it at once or copy it.
   */
  output(datagram: Uint8Array): void;
  /** Runs `fn` soon, after the current call returns (default `queueMicrotask`). Used to batch sends. */
  readonly defer?: (fn: () => void) => void;
  /** Where dropped datagrams are counted. */
  readonly drops: DropCounters;
  /** Called once when the peer has finished (closed and done lingering): release the socket. */
  onDead?(): void;
  /** Random bytes for the client nonce (default: `crypto.getRandomValues`). */
  readonly random?: (n: number) => Uint8Array;
  /** The listener-wide cap this connection's reassembly counts toward (server sessions). */
  readonly reassemblyBudget?: ReassemblyBudget;
}

/** Hash of a channel list, exchanged in the handshake. */
export function channelHash(channels: readonly ChannelSpec[]): number {
  return crc32(new TextEncoder().encode(channelSignature(channels)));
}

/** Extra counters of a UDP connection beyond `ConnectionStats`. */
export interface UdpPeerCounters {
  /** Packets declared lost (by the ack bitfield or the RTO). */
  packetsLost: number;
  /** Packets declared lost whose ack came in later (delayed or reordered, not lost). */
  spuriousLosses: number;
  /** Ack-only packets sent. */
  acksSent: number;
  /** Current congestion window in bytes. */
  windowBytes: number;
  /** Bytes held by reassembly buffers (fragments received plus a fixed overhead each). */
  reassemblyBytes: number;
}

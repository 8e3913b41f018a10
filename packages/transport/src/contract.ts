import type { EventSource } from './emitter.js';
import type { TransportError } from './errors.js';

/**
 * How a channel delivers:
 * - `reliable`: every message arrives exactly once, whole, in the order sent on that channel
 *   (order between different channels is not guaranteed). Use it for inputs in lockstep, chat,
 *   savestates.
 * - `unreliable`: unreliable-sequenced. A message may be lost, but never arrives twice and never
 *   after a newer message of the same channel: the receiver drops stale ones, and a sender that is
 *   backed up may replace an unsent older message by a newer one. Use it for state that supersedes
 *   itself (e.g. rollback input windows, cursor positions).
 */
export type ChannelKind = 'reliable' | 'unreliable';

/** One named channel. Both ends of a connection must declare the same channels in the same order. */
export interface ChannelSpec {
  /** Unique name within the connection, 1–64 characters. */
  readonly name: string;
  /** Delivery guarantee: `reliable` (every message, in order) or `unreliable` (each message at most once, stale ones dropped). */
  readonly kind: ChannelKind;
}

/** Life cycle of a connection: `connecting` → `open` → `closed` (or `connecting` → `closed`). */
export type ConnectionState = 'connecting' | 'open' | 'closed';

/** Why a connection closed, as seen by the side that receives the `close` event. */
export type CloseCode =
  /** This side called `close()`. */
  | 'local'
  /** The peer called `close()`; `reason` is the peer's reason. */
  | 'remote'
  /** The peer was silent for longer than the disconnect timeout, or the connect attempt timed out. */
  | 'timeout'
  /** The peer refused the connection (no listener, full, channel mismatch). */
  | 'refused'
  /** A transport error ended the connection; see `error`. */
  | 'error';

/** Payload of the `message` event. */
export interface MessageEvent {
  /** Name of the channel it arrived on. */
  readonly channel: string;
  /** The message, whole. The receiver owns these bytes. */
  readonly data: Uint8Array;
}

/** Payload of the `close` event. */
export interface CloseEvent {
  /** Which side or failure ended the connection; see {@link CloseCode}. */
  readonly code: CloseCode;
  /**
   * A human-readable reason: the argument of `close()` for `local` and `remote` (at most
   * {@link MAX_CLOSE_REASON_BYTES} UTF-8 bytes get through; longer reasons are truncated), or a
   * description for the other codes.
   */
  readonly reason: string;
  /** The error that ended the connection, for `error`, `timeout` and `refused`. */
  readonly error?: TransportError;
}

/** Payload of the `interrupted` event. */
export interface InterruptedEvent {
  /** How long the peer has been silent, in ms, when the event fires. */
  readonly silentMs: number;
}

/** Payload of the `resumed` event. */
export interface ResumedEvent {
  /** How long the interruption lasted, in ms. */
  readonly interruptedMs: number;
}

/**
 * Events of a {@link Connection}. Handlers run on the transport's event loop turn (or inside the
 * simulator's time steps); `close` fires exactly once and is the last event.
 */
export interface ConnectionEventMap {
  /** The handshake completed (client side only: server-side connections start open). */
  open: undefined;
  /** A whole message arrived. */
  message: MessageEvent;
  /** The peer has been silent for the interrupt timeout (connection still open). */
  interrupted: InterruptedEvent;
  /** Traffic from the peer resumed after `interrupted`. */
  resumed: ResumedEvent;
  /**
   * An unexpected transport error; a fatal one is followed by `close` with code `error`. Timeouts
   * and refusals are not reported here, only through `close` (codes `timeout` and `refused`).
   */
  error: TransportError;
  /** The connection is closed; no event follows. */
  close: CloseEvent;
}

/**
 * Counters and estimates of one connection. The object is live: transports update the fields in
 * place (reading it allocates nothing); copy it (`{ ...conn.stats }`) to keep a snapshot.
 */
export interface ConnectionStats {
  /** Smoothed round-trip time in ms (RFC 6298 SRTT); 0 until the first sample. */
  readonly rttMs: number;
  /** Round-trip time variation in ms (RFC 6298 RTTVAR); 0 until the first sample. */
  readonly rttVarMs: number;
  /** Number of RTT samples taken. */
  readonly rttSamples: number;
  /** Estimated fraction (0–1) of the packets this side sent that did not reach the peer. */
  readonly lossRate: number;
  /** Bytes handed to the network, headers included, retransmissions included. */
  readonly bytesSent: number;
  /** Bytes received from the peer, headers included (only packets accepted as the peer's). */
  readonly bytesReceived: number;
  /** Packets (datagrams, frames, simulated packets) sent. */
  readonly packetsSent: number;
  /** Packets received and accepted. */
  readonly packetsReceived: number;
  /** Messages retransmitted (or packets, for transports that retransmit packets). */
  readonly retransmissions: number;
  /** Reliable messages queued or sent but not yet acknowledged, plus unreliable ones not yet sent. */
  readonly sendQueueLength: number;
  /** Bytes of payload in that queue. */
  readonly sendQueueBytes: number;
}

/** Size limits of a connection, in bytes of message payload. */
export interface ConnectionLimits {
  /** Largest message on a reliable channel. At least 2 MiB for transports passing the conformance suite. */
  readonly maxMessageBytes: number;
  /** Largest message on an unreliable channel (often one datagram's payload). */
  readonly maxUnreliableBytes: number;
}

/** Liveness timeouts of a connection, in ms. GGPO's defaults are 750 ms and 5 s. */
export interface Timeouts {
  /** Silence after which `interrupted` fires (default 750). */
  readonly interruptMs: number;
  /** Silence after which the connection closes with code `timeout` (default 5000). */
  readonly disconnectMs: number;
  /** Longest wait for the handshake on the client (default 5000). */
  readonly connectMs: number;
}

/** The defaults for {@link Timeouts}. */
export const DEFAULT_TIMEOUTS: Timeouts = Object.freeze({ interruptMs: 750, disconnectMs: 5000, connectMs: 5000 });

/** At most this many UTF-8 bytes of a close reason reach the peer (the WebSocket limit is 123). */
export const MAX_CLOSE_REASON_BYTES = 120;

/**
 * One end of a connection, on the client or on the server. Transports implement this contract;
 * schedulers use only it.
 *
 * Rules every implementation follows (the conformance suite checks them):
 * - `send` copies or finishes with `data` before it returns: the caller may reuse the buffer.
 * - `send` throws {@link TransportError}: `closed` after close, `unknown-channel`, `too-large`
 *   (see {@link ConnectionLimits}), `limit` if a send-queue bound is hit. Sending while
 *   `connecting` queues the message until `open`.
 * - `close(reason)` fires the local `close` event (code `local`) and makes a best effort to deliver
 *   already-sent reliable messages and then the reason to the peer (code `remote`). It is idempotent.
 * - Liveness: with no traffic the transport sends keepalives; after `interruptMs` of silence from the
 *   peer it emits `interrupted`, after `disconnectMs` it closes with code `timeout`.
 */
export interface Connection extends EventSource<ConnectionEventMap> {
  /** Current state. */
  readonly state: ConnectionState;
  /** A printable description of the peer (an address, or a simulator endpoint name). */
  readonly remoteAddress: string;
  /** The channels, as agreed by both ends. */
  readonly channels: readonly ChannelSpec[];
  /** Size limits of `send`. */
  readonly limits: ConnectionLimits;
  /** Live counters; see {@link ConnectionStats}. */
  readonly stats: ConnectionStats;
  /** Sends one message on `channel` (by name). */
  send(channel: string, data: Uint8Array): void;
  /** Closes the connection; `reason` is delivered to the peer when possible. */
  close(reason?: string): void;
}

/** Events of a {@link Listener}. */
export interface ListenerEventMap {
  /** A client completed the handshake; the connection is already `open`. */
  connection: Connection;
  /** A non-fatal error (e.g. a refused client, a socket error on one peer). */
  error: TransportError;
  /** The listener is closed; no event follows. */
  close: undefined;
}

/** The server side: accepts connections until closed. */
export interface Listener extends EventSource<ListenerEventMap> {
  /** A printable description of the local address. */
  readonly localAddress: string;
  /** The open connections accepted by this listener. */
  readonly connections: readonly Connection[];
  /** Stops accepting; closes every accepted connection with `reason`. Idempotent. */
  close(reason?: string): void;
}

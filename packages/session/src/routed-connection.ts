import {
  type ChannelSpec,
  type CloseEvent,
  type Connection,
  type ConnectionEventMap,
  type ConnectionLimits,
  type ConnectionState,
  Emitter,
  type Handler,
  MutableConnectionStats,
  TransportError,
  type Unsubscribe,
} from '@netplay/transport';
import { RELAY_CONTROL_CHANNEL, RELAY_INPUT_CHANNEL } from './channels.js';
import { RelayFramer } from './relay.js';

/** Bytes a routed message adds in front of the payload: the slot and the channel index. */
export const ROUTE_HEADER_BYTES = 2;

/** Routed slot byte of a client's message that the host delivers to itself and forwards to every other player. */
export const BROADCAST_SLOT = 0xff;

/** Options of {@link RoutedConnection}. */
export interface RoutedConnectionOptions {
  /** The session connection the messages travel on (to the host, or to one client). */
  readonly carrier: Connection;
  /** The slot byte written in front of every message sent (the destination on a client, the source on the host). */
  readonly slot: number;
  /** The scheduler's channels (a message names one by its index). */
  readonly channels: readonly ChannelSpec[];
  /**
   * Channels whose messages this connection does not send at all: on a client, the broadcast
   * channels towards another client (the host fans out the copy sent to it). Default none.
   */
  readonly skip?: ReadonlySet<string>;
  /** Channels sent with {@link BROADCAST_SLOT} instead of `slot` (on a client, the broadcast channels towards the host). */
  readonly broadcast?: ReadonlySet<string>;
  /** What {@link Connection.remoteAddress} says (e.g. `"host relay → slot 2"`). */
  readonly remoteAddress: string;
  /**
   * Sends nothing until a message for which this returns true (that one goes, and everything
   * after it). Default: no hold. The host gives one to a player entering a running game, so that
   * what its scheduler still sends the slot's previous holder (a departure not yet settled) does not
   * reach the newcomer before its admission.
   */
  readonly holdUntil?: (channel: string, data: Uint8Array) => boolean;
}

/**
 * One scheduler peer reached over a session connection's relay channels: a {@link Connection} whose
 * messages travel as `[slot u8][channel index u8][payload]` on `np-relay` (reliable channels) or
 * `np-relay-u` (unreliable ones). The lockstep P2P modes give a `LockstepRunner` one of these per
 * peer, so the schedulers run unchanged over the session's star. Incoming messages are handed to it
 * with {@link deliver} by whoever reads the carrier. Sending copies into a reused buffer, as
 * transports do.
 */
export class RoutedConnection implements Connection {
  readonly remoteAddress: string;
  readonly channels: readonly ChannelSpec[];
  readonly limits: ConnectionLimits;
  readonly stats = new MutableConnectionStats();
  private readonly emitter = new Emitter<ConnectionEventMap>();
  private readonly carrier: Connection;
  private readonly slot: number;
  private readonly index = new Map<string, number>();
  private readonly relayOf: string[] = [];
  private readonly skip: ReadonlySet<string> | undefined;
  private readonly broadcast: ReadonlySet<string> | undefined;
  private holdUntil: ((channel: string, data: Uint8Array) => boolean) | undefined;
  private readonly framer = new RelayFramer();
  private closed = false;

  constructor(options: RoutedConnectionOptions) {
    this.carrier = options.carrier;
    this.slot = options.slot;
    this.channels = options.channels;
    this.skip = options.skip;
    this.broadcast = options.broadcast;
    this.holdUntil = options.holdUntil;
    this.remoteAddress = options.remoteAddress;
    options.channels.forEach((c, i) => {
      this.index.set(c.name, i);
      this.relayOf.push(c.kind === 'reliable' ? RELAY_CONTROL_CHANNEL : RELAY_INPUT_CHANNEL);
    });
    const l = options.carrier.limits;
    this.limits = {
      maxMessageBytes: l.maxMessageBytes - ROUTE_HEADER_BYTES,
      maxUnreliableBytes: l.maxUnreliableBytes - ROUTE_HEADER_BYTES,
    };
  }

  get state(): ConnectionState {
    return this.closed ? 'closed' : this.carrier.state;
  }

  on<K extends keyof ConnectionEventMap>(type: K, handler: Handler<ConnectionEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  /** @throws TransportError `closed` or `unknown-channel`, or what the carrier throws. */
  send(channel: string, data: Uint8Array): void {
    if (this.closed) throw new TransportError('closed', `routed connection to ${this.remoteAddress} is closed`);
    const i = this.index.get(channel);
    if (i === undefined) throw new TransportError('unknown-channel', `unknown channel ${channel}`);
    if (this.skip?.has(channel)) return;
    if (this.holdUntil !== undefined) {
      if (!this.holdUntil(channel, data)) return;
      this.holdUntil = undefined;
    }
    const slot = this.broadcast?.has(channel) ? BROADCAST_SLOT : this.slot;
    const framed = this.framer.frameRouted(slot, i, data);
    this.carrier.send(this.relayOf[i]!, framed);
    this.stats.bytesSent += framed.length;
    this.stats.packetsSent++;
  }

  /** A message for this peer arrived on the carrier (`channelIndex` into `channels`; the bytes are the receiver's). */
  deliver(channelIndex: number, data: Uint8Array): void {
    const c = this.channels[channelIndex];
    if (this.closed || c === undefined) return;
    this.stats.bytesReceived += data.length + ROUTE_HEADER_BYTES;
    this.stats.packetsReceived++;
    this.emitter.emit('message', { channel: c.name, data });
  }

  /** Closes this routed connection only (the carrier stays open); fires `close` with code `local`. */
  close(reason = ''): void {
    this.end({ code: 'local', reason });
  }

  /** The carrier closed, or the peer left: fires `close` with `event`. Idempotent. */
  end(event: CloseEvent): void {
    if (this.closed) return;
    this.closed = true;
    this.emitter.emit('close', event);
  }
}

/**
 * Checks a routed message `[slot][channel index][payload]` and returns its channel index, or -1 if
 * it is shorter than the header, names no channel of `channels`, or arrived on the relay channel of
 * the other kind (a reliable channel's message must come on `np-relay`, an unreliable one's on
 * `np-relay-u`). The slot is `data[0]`, the payload `data.subarray(ROUTE_HEADER_BYTES)`.
 */
export function routedChannelIndex(relayChannel: string, data: Uint8Array, channels: readonly ChannelSpec[]): number {
  if (data.length < ROUTE_HEADER_BYTES) return -1;
  const channelIndex = data[1]!;
  const c = channels[channelIndex];
  if (c === undefined) return -1;
  const expected = c.kind === 'reliable' ? RELAY_CONTROL_CHANNEL : RELAY_INPUT_CHANNEL;
  return relayChannel === expected ? channelIndex : -1;
}

import type { ChannelSpec } from '@netplay/transport';

/** One channel of a netplay-ws connection, both directions. */
export interface ChannelState {
  readonly spec: ChannelSpec;
  readonly index: number;
  readonly reliable: boolean;
  /** Unreliable: next sequence number to send. */
  nextSeq: number;
  /** Unreliable: the newest frame held back while the socket is backed up. */
  pending: Uint8Array | undefined;
  /** Unreliable: whether a message was delivered yet, and the last delivered sequence number. */
  received: boolean;
  lastSeq: number;
}

/** The fresh state of each of `channels`, in order. */
export function channelStates(channels: readonly ChannelSpec[]): ChannelState[] {
  return channels.map((spec, index) => ({
    spec,
    index,
    reliable: spec.kind === 'reliable',
    nextSeq: 0,
    pending: undefined,
    received: false,
    lastSeq: 0,
  }));
}

import type { ChannelSpec, ConnectionStats } from '@netplay/transport';
import { MutableConnectionStats, SendLedger } from '@netplay/transport';
import type { RtcDataChannelLike } from './rtc.js';
import { Reassembler } from './wire.js';

/** {@link ConnectionStats} plus counters specific to netplay-webrtc. */
export interface WebRtcConnectionStats extends ConnectionStats {
  /** Unreliable messages replaced by a newer one before sending (backpressure). */
  readonly staleDropped: number;
  /** Unreliable messages received that were not newer than the last delivered one (dropped). */
  readonly staleReceived: number;
  /** PINGs sent (the loss estimate comes from PINGs without a PONG). */
  readonly pingsSent: number;
  /** PONGs received. */
  readonly pongsReceived: number;
}

/** The writable stats of a connection. */
export class MutableStats extends MutableConnectionStats implements WebRtcConnectionStats {
  staleDropped = 0;
  staleReceived = 0;
  pingsSent = 0;
  pongsReceived = 0;
}

/** The state of one of the connection's channels and its data channel. */
export interface Chan {
  readonly spec: ChannelSpec;
  readonly reliable: boolean;
  /** Its data channel ({@link UNOPENED} until created). */
  dc: RtcDataChannelLike;
  /** Reliable: reassembly of fragments. */
  readonly reassembler: Reassembler | undefined;
  /** Reliable: messages sent and received (for the CLOSE frame's counts). */
  sent: number;
  received: number;
  /** Reliable: messages still in the data channel's buffer. */
  readonly ledger: SendLedger;
  /** Unreliable: next sequence number to send. */
  nextSeq: number;
  /** Unreliable: the newest frame held back while the data channel is backed up. */
  pending: Uint8Array | undefined;
  /** Unreliable: whether a message was delivered yet, and the last delivered sequence number. */
  got: boolean;
  lastSeq: number;
}

/** Stands in for a data channel not created yet (the answerer's, before the offer). */
export const UNOPENED: RtcDataChannelLike = {
  readyState: 'closed',
  bufferedAmount: 0,
  binaryType: 'arraybuffer',
  onopen: null,
  onclose: null,
  onerror: null,
  onmessage: null,
  send() {},
  close() {},
};

/** The fresh state of channel `spec` (reliable ones reassemble up to `maxMessageBytes`). */
export function newChan(spec: ChannelSpec, maxMessageBytes: number): Chan {
  const reliable = spec.kind === 'reliable';
  return {
    spec,
    reliable,
    dc: UNOPENED,
    reassembler: reliable ? new Reassembler(maxMessageBytes) : undefined,
    sent: 0,
    received: 0,
    ledger: new SendLedger(),
    nextSeq: 0,
    pending: undefined,
    got: false,
    lastSeq: 0,
  };
}

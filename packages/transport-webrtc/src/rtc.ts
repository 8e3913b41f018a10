import { TransportError } from '@netplay/transport';
import type { RtcStatsReportLike } from './remote-address.js';

/**
 * The parts of the W3C WebRTC API netplay-webrtc uses, typed structurally so that both a browser's
 * native `RTCPeerConnection` and a Node polyfill (node-datachannel's) fit without a DOM library.
 * Nothing here is Node-specific: the constructor is injected.
 */

/** An ICE server (STUN or TURN), as in `RTCConfiguration.iceServers`. */
export interface IceServer {
  readonly urls: string | readonly string[];
  readonly username?: string;
  readonly credential?: string;
}

/**
 * What netplay-webrtc passes to the `RTCPeerConnection` constructor: `iceServers` plus anything
 * else the implementation understands (e.g. node-datachannel's `bindAddress`).
 */
export interface RtcConfiguration {
  readonly iceServers?: readonly IceServer[];
  readonly iceTransportPolicy?: 'all' | 'relay';
  readonly [extra: string]: unknown;
}

/** `RTCSessionDescriptionInit`. */
export interface RtcSessionDescription {
  readonly type: string;
  readonly sdp?: string;
}

/** `RTCIceCandidateInit`. */
export interface RtcIceCandidateInit {
  readonly candidate?: string;
  readonly sdpMid?: string | null;
  readonly sdpMLineIndex?: number | null;
}

/** `RTCDataChannelInit`, the fields used. */
export interface RtcDataChannelInit {
  readonly negotiated: boolean;
  readonly id: number;
  readonly ordered: boolean;
  readonly maxRetransmits?: number;
}

/** The `RTCDataChannel` surface used. */
export interface RtcDataChannelLike {
  readonly readyState: string;
  readonly bufferedAmount: number;
  binaryType: string;
  /** Called once the channel is open. */
  onopen: ((ev: unknown) => void) | null;
  /** Called once the channel closed. */
  onclose: ((ev: unknown) => void) | null;
  /** Called on a channel error. */
  onerror: ((ev: unknown) => void) | null;
  /** Called for every message (`data` an `ArrayBuffer` with `binaryType = 'arraybuffer'`). */
  onmessage: ((ev: { readonly data: unknown }) => void) | null;
  /** Sends one binary message. */
  send(data: Uint8Array): void;
  /** Closes the channel. */
  close(): void;
}

/** The `RTCPeerConnection` surface used. */
export interface RtcPeerConnectionLike {
  readonly connectionState: string;
  readonly localDescription: RtcSessionDescription | null;
  readonly sctp?: { readonly maxMessageSize: number } | null;
  /** Called for every local ICE candidate found (`null`: gathering is complete). */
  onicecandidate: ((ev: { readonly candidate: RtcIceCandidateInit | null }) => void) | null;
  /** Called when `connectionState` changes. */
  onconnectionstatechange: ((ev: unknown) => void) | null;
  /** Opens a data channel (negotiated or in-band, as `init` says). */
  createDataChannel(label: string, init: RtcDataChannelInit): RtcDataChannelLike;
  /** Makes the offer (the offering side). */
  createOffer(): Promise<RtcSessionDescription>;
  /** Makes the answer to the remote offer (the answering side). */
  createAnswer(): Promise<RtcSessionDescription>;
  /** Applies this side's offer or answer. */
  setLocalDescription(description: RtcSessionDescription): Promise<void>;
  /** Applies the peer's offer or answer. */
  setRemoteDescription(description: RtcSessionDescription): Promise<void>;
  /** Adds one of the peer's ICE candidates. */
  addIceCandidate(candidate: RtcIceCandidateInit): Promise<void>;
  /**
   * The W3C stats report (browsers, node-datachannel's polyfill): read once the data channels are
   * open for the selected candidate pair's remote candidate, the connection's `remoteAddress`.
   * Optional: without it the address is the signaling server's or `webrtc:<peer>`.
   */
  getStats?(): Promise<RtcStatsReportLike>;
  /** Closes the connection and its channels. */
  close(): void;
}

/** A constructor of peer connections: the browser's `RTCPeerConnection`, or a polyfill's. */
export type RtcPeerConnectionConstructor = new (config: RtcConfiguration) => RtcPeerConnectionLike;

/** Everything WebRTC-specific a connection needs: the constructor and its configuration. */
export interface RtcSetup {
  /** `RTCPeerConnection` (default: `globalThis.RTCPeerConnection`, present in browsers). */
  readonly RTCPeerConnection?: RtcPeerConnectionConstructor;
  /** The configuration, e.g. `{ iceServers: [{ urls: 'stun:stun.example.org' }] }` (default: no ICE servers). */
  readonly config?: RtcConfiguration;
}

/** The `RTCPeerConnection` of `setup`, or the global one; throws a clear error when there is none. */
export function resolvePeerConnection(setup: RtcSetup | undefined): RtcPeerConnectionConstructor {
  const ctor =
    setup?.RTCPeerConnection ?? (globalThis as { RTCPeerConnection?: RtcPeerConnectionConstructor }).RTCPeerConnection;
  if (typeof ctor !== 'function') {
    throw new TransportError(
      'invalid-argument',
      'no RTCPeerConnection: pass rtc.RTCPeerConnection (in Node use @netplay/transport-webrtc/node)',
    );
  }
  return ctor;
}

/** A signal between two peers, relayed by the signaling server: SDP offer/answer or an ICE candidate. */
export type PeerSignal =
  | { readonly kind: 'offer' | 'answer'; readonly sdp: string }
  | {
      readonly kind: 'candidate';
      readonly candidate: string;
      readonly sdpMid: string | null;
      readonly sdpMLineIndex: number | null;
    };

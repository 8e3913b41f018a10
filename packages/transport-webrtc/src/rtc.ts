import { TransportError } from '@netplay/transport';
import type { RtcStatsReportLike } from './remote-address.js';

/**
 * The parts of the W3C WebRTC API netplay-webrtc uses, typed structurally so that both a browser's
 * native `RTCPeerConnection` and a Node polyfill (node-datachannel's) fit without a DOM library.
 * Nothing here is Node-specific: the constructor is injected.
 */

/** An ICE server (STUN or TURN), as in `RTCConfiguration.iceServers`. */
export interface IceServer {
  /** One or more URLs of this server: `stun:host[:port]`, or `turn:` / `turns:` with `?transport=udp|tcp`. */
  readonly urls: string | readonly string[];
  /** TURN user name (STUN needs none); passed to the implementation as given. */
  readonly username?: string;
  /** TURN password or token paired with `username`; passed as given, never logged or signalled. */
  readonly credential?: string;
}

/**
 * What netplay-webrtc passes to the `RTCPeerConnection` constructor: `iceServers` plus anything
 * else the implementation understands (e.g. node-datachannel's `bindAddress`).
 */
export interface RtcConfiguration {
  /** STUN/TURN servers used to gather candidates (default none: host candidates only, enough on a LAN or loopback). */
  readonly iceServers?: readonly IceServer[];
  /** `relay` uses only TURN-relayed candidates (hides both peers' IPs, needs a TURN server); `all` (the implementation's default) any. */
  readonly iceTransportPolicy?: 'all' | 'relay';
  readonly [extra: string]: unknown;
}

/** `RTCSessionDescriptionInit`. */
export interface RtcSessionDescription {
  /** `offer` or `answer` here (the W3C type also allows `pranswer` and `rollback`, which netplay-webrtc never makes). */
  readonly type: string;
  /** The SDP text; the offer is signalled with its `a=candidate` lines removed (candidates are trickled). Absent only in a `rollback`. */
  readonly sdp?: string;
}

/** `RTCIceCandidateInit`. */
export interface RtcIceCandidateInit {
  /** The `candidate:` attribute line (foundation, transport, priority, address, port, type); empty or absent marks the end of gathering and is not signalled. */
  readonly candidate?: string;
  /** The media stream id (`a=mid`) the candidate belongs to (`'0'`: the one data section), or `null`. */
  readonly sdpMid?: string | null;
  /** Index of the SDP media section the candidate belongs to (0 for the one data section), or `null`. */
  readonly sdpMLineIndex?: number | null;
}

/** `RTCDataChannelInit`, the fields used. */
export interface RtcDataChannelInit {
  /** Always `true` here: both ends create the channel with the same `id`, with no in-band announcement. */
  readonly negotiated: boolean;
  /** SCTP stream id, the same on both ends: 0 control, 1 ping, then one per declared channel from `FIRST_DATA_CHANNEL_ID` in declaration order. */
  readonly id: number;
  /** `true` for the control channel and reliable channels (in-order delivery); `false` for the ping and unreliable channels. */
  readonly ordered: boolean;
  /** `0` for the ping and unreliable channels (a lost message is never resent); absent for reliable ones (retransmitted until delivered). */
  readonly maxRetransmits?: number;
}

/** The `RTCDataChannel` surface used. */
export interface RtcDataChannelLike {
  /** `connecting`, `open`, `closing` or `closed`; messages go out only while `open`. */
  readonly readyState: string;
  /** Bytes passed to `send` and not yet handed to SCTP; polled for back-pressure (`highWaterBytes`, `maxBufferedBytes`). */
  readonly bufferedAmount: number;
  /** How binary messages are delivered; set to `'arraybuffer'` when the channel is created (a `Blob` could not be read synchronously). */
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
  /** The W3C aggregate of ICE and DTLS state (`new`, `connecting`, `connected`, `disconnected`, `failed`, `closed`); `failed` ends the connection with `io`. */
  readonly connectionState: string;
  /** This side's applied offer or answer (with the candidates gathered so far), `null` before `setLocalDescription`; its SDP is what gets signalled. */
  readonly localDescription: RtcSessionDescription | null;
  /** The SCTP transport once negotiated (`null` or absent before, or where not implemented). */
  readonly sctp?: {
    /** Largest message the SCTP transport can send, in bytes; reliable messages are cut into fragments of min(this, 64 KiB) bytes (at least 1 KiB; 64 KiB when it is absent or not positive). */
    readonly maxMessageSize: number;
  } | null;
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
  | {
      /** `offer` from the connecting (client) side, `answer` from the listening (server) side. */
      readonly kind: 'offer' | 'answer';
      /** The session description; an offer carries no `a=candidate` lines (they follow as `candidate` signals). At most `MAX_SDP_CHARS` characters. */
      readonly sdp: string;
    }
  | {
      /** `candidate`: one trickled ICE candidate of the sender. */
      readonly kind: 'candidate';
      /** The `candidate:` attribute line, as `RTCIceCandidate.candidate` (at most `MAX_CANDIDATE_CHARS` characters). */
      readonly candidate: string;
      /** Media stream id of the candidate's SDP section (at most 64 characters), or `null`. */
      readonly sdpMid: string | null;
      /** Index of the candidate's SDP media section (0–255), or `null`. */
      readonly sdpMLineIndex: number | null;
    };

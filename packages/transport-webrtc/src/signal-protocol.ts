import { isIpLiteral } from './remote-address.js';
import type { PeerSignal } from './rtc.js';

/**
 * The netplay-webrtc signaling protocol, version 1: JSON text messages over a WebSocket. Every
 * message is one object with `v: 1` and a `type`. The server relays `signal` messages between the
 * named peers of one room, and nothing else: it never sees game data.
 *
 * Client → server: `join` {room, peer}, `signal` {to, signal}, `leave`.
 * Server → client: `joined` {room, peer, peers}, `peer-joined` {peer}, `peer-left` {peer},
 * `signal` {from, signal, address?}, `refused` {code, reason, fatal}.
 */
export const SIGNALING_VERSION = 1;

/** Room and peer names: 1–64 characters of `A–Z a–z 0–9 . _ ~ -` (safe in a URL). */
export const NAME_PATTERN = /^[A-Za-z0-9._~-]{1,64}$/;
/** Longest SDP accepted in an offer or answer. */
export const MAX_SDP_CHARS = 16_000;
/** Longest ICE candidate line accepted. */
export const MAX_CANDIDATE_CHARS = 1_000;

/** Why the server refused a message (the `code` of a `refused` message and of {@link SignalingError}). */
export type SignalingErrorCode =
  /** Not JSON, or a binary WebSocket message. */
  | 'bad-json'
  /** JSON, but not a valid message of this protocol (the reason names the field). */
  | 'bad-message'
  /** `v` is not a version the server speaks. */
  | 'version'
  /** A message larger than the server's limit. */
  | 'too-large'
  /** A `signal` or `leave` before `join`. */
  | 'not-joined'
  /** A second `join` on the same socket. */
  | 'already-joined'
  /** The room holds its maximum of peers. */
  | 'room-full'
  /** Another peer of the room has that name. */
  | 'name-taken'
  /** The server holds its maximum of rooms, or this address its maximum of peers. */
  | 'limit'
  /** `to` names nobody in the sender's room. */
  | 'unknown-peer'
  /** The socket sent more than its message budget. */
  | 'flood'
  /** No `join` within the server's time. */
  | 'timeout'
  /** The signaling connection failed or closed. */
  | 'closed';

/** An error of the signaling protocol, with a {@link SignalingErrorCode}. */
export class SignalingError extends Error {
  /** Always `'SignalingError'`; tell kinds apart by `code`. */
  override readonly name = 'SignalingError';
  constructor(
    /** What went wrong: the server's refusal code (from a `refused` message or a failed parse), or `closed` / `timeout` on the client's side. */
    readonly code: SignalingErrorCode,
    message: string,
  ) {
    super(`${message} (${code})`);
  }
}

/** Messages a client sends. */
export type ClientMessage =
  | {
      /** Protocol version: always {@link SIGNALING_VERSION} (1); any other value is refused with `version`. */
      readonly v: 1;
      /** `join`: enter `room` (created if it does not exist) under the name `peer`; must be the socket's first message, once. */
      readonly type: 'join';
      /** Room to join, matching {@link NAME_PATTERN}; peers of one room can signal each other. */
      readonly room: string;
      /** This peer's name in the room, matching {@link NAME_PATTERN} and unique in it (else `name-taken`). */
      readonly peer: string;
    }
  | {
      /** Protocol version: always {@link SIGNALING_VERSION} (1). */
      readonly v: 1;
      /** `signal`: relay `signal` to the peer `to` of the sender's room (only after `join`). */
      readonly type: 'signal';
      /** Name of the receiving peer in the sender's room; an absent one or the sender itself gets a non-fatal `unknown-peer`. */
      readonly to: string;
      /** The SDP offer/answer or ICE candidate to relay, passed on unchanged (SDP at most {@link MAX_SDP_CHARS}, candidate at most {@link MAX_CANDIDATE_CHARS} characters). */
      readonly signal: PeerSignal;
    }
  | {
      /** Protocol version: always {@link SIGNALING_VERSION} (1). */
      readonly v: 1;
      /** `leave`: quit the room; the server tells the other peers (`peer-left`) and closes the socket with 1000. */
      readonly type: 'leave';
    };

/** Messages the server sends. */
export type ServerMessage =
  | {
      /** Protocol version: always {@link SIGNALING_VERSION} (1). */
      readonly v: 1;
      /** `joined`: the answer to a successful `join`. */
      readonly type: 'joined';
      /** The room joined, as the client named it. */
      readonly room: string;
      /** The name this client now has in the room, as it asked. */
      readonly peer: string;
      /** The other peers already in the room (on this node and, with a router, on others), not including this one; at most 1024 are accepted by the parser. */
      readonly peers: readonly string[];
    }
  | {
      /** Protocol version: always {@link SIGNALING_VERSION} (1). */
      readonly v: 1;
      /** `peer-joined`: another peer entered this client's room. */
      readonly type: 'peer-joined';
      /** The newcomer's name; it can be signalled from now on. */
      readonly peer: string;
    }
  | {
      /** Protocol version: always {@link SIGNALING_VERSION} (1). */
      readonly v: 1;
      /** `peer-left`: a peer of this client's room sent `leave` or its socket closed. */
      readonly type: 'peer-left';
      /** The departed peer's name; signals to it now get `unknown-peer`. */
      readonly peer: string;
    }
  | {
      /** Protocol version: always {@link SIGNALING_VERSION} (1). */
      readonly v: 1;
      /** `signal`: a signal another peer of the room sent to this client. */
      readonly type: 'signal';
      /** The sender's name in the room (set by the server from the sender's `join`, not by the sender). */
      readonly from: string;
      /** The sender's offer, answer or ICE candidate, as it sent it. */
      readonly signal: PeerSignal;
      /** The IP the server saw the sender's socket come from (set by the server, never by a peer). */
      readonly address?: string;
    }
  | {
      /** Protocol version: always {@link SIGNALING_VERSION} (1). */
      readonly v: 1;
      /** `refused`: the server rejected the client's last message or its socket (limits, flood, timeout). */
      readonly type: 'refused';
      /** Why, as a {@link SignalingErrorCode}; the client raises it as a {@link SignalingError} with this code. */
      readonly code: SignalingErrorCode;
      /** Human-readable detail naming the field or limit (the parser keeps at most 200 characters; empty if absent). */
      readonly reason: string;
      /** Whether the server closes the socket after this message. */
      readonly fatal: boolean;
    };

type Obj = Record<string, unknown>;

function bad(why: string): never {
  throw new SignalingError('bad-message', why);
}

function parseObject(text: string): Obj {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SignalingError('bad-json', 'the message is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad('the message is not a JSON object');
  const obj = value as Obj;
  if (obj.v !== SIGNALING_VERSION) {
    throw new SignalingError(
      'version',
      `unsupported signaling version ${JSON.stringify(obj.v) ?? 'undefined'} (server speaks 1)`,
    );
  }
  return obj;
}

function name(obj: Obj, field: string): string {
  const value = obj[field];
  if (typeof value !== 'string' || !NAME_PATTERN.test(value))
    bad(`"${field}" must be 1-64 characters of A-Z a-z 0-9 . _ ~ -`);
  return value;
}

/** Checks a {@link PeerSignal}; throws `SignalingError('bad-message')`. */
export function parseSignal(value: unknown): PeerSignal {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad('"signal" must be an object');
  const s = value as Obj;
  if (s.kind === 'offer' || s.kind === 'answer') {
    if (typeof s.sdp !== 'string' || s.sdp.length > MAX_SDP_CHARS)
      bad(`"sdp" must be a string of at most ${MAX_SDP_CHARS} characters`);
    return { kind: s.kind, sdp: s.sdp };
  }
  if (s.kind === 'candidate') {
    if (typeof s.candidate !== 'string' || s.candidate.length > MAX_CANDIDATE_CHARS) {
      bad(`"candidate" must be a string of at most ${MAX_CANDIDATE_CHARS} characters`);
    }
    const mid = s.sdpMid ?? null;
    if (mid !== null && (typeof mid !== 'string' || mid.length > 64)) bad('"sdpMid" must be a short string or null');
    const index = s.sdpMLineIndex ?? null;
    if (index !== null && (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 255)) {
      bad('"sdpMLineIndex" must be an integer 0-255 or null');
    }
    return {
      kind: 'candidate',
      candidate: s.candidate,
      sdpMid: mid as string | null,
      sdpMLineIndex: index as number | null,
    };
  }
  bad('"signal.kind" must be offer, answer or candidate');
}

/** Parses and checks a client message. Throws {@link SignalingError} (`bad-json`, `bad-message`, `version`). */
export function parseClientMessage(text: string): ClientMessage {
  const obj = parseObject(text);
  switch (obj.type) {
    case 'join':
      return { v: 1, type: 'join', room: name(obj, 'room'), peer: name(obj, 'peer') };
    case 'signal':
      return { v: 1, type: 'signal', to: name(obj, 'to'), signal: parseSignal(obj.signal) };
    case 'leave':
      return { v: 1, type: 'leave' };
    default:
      bad('"type" must be join, signal or leave');
  }
}

const REFUSAL_CODES: ReadonlySet<string> = new Set<SignalingErrorCode>([
  'bad-json',
  'bad-message',
  'version',
  'too-large',
  'not-joined',
  'already-joined',
  'room-full',
  'name-taken',
  'limit',
  'unknown-peer',
  'flood',
  'timeout',
  'closed',
]);

/** Parses and checks a server message (the client's side). Throws {@link SignalingError}. */
export function parseServerMessage(text: string): ServerMessage {
  const obj = parseObject(text);
  switch (obj.type) {
    case 'joined': {
      const peers = obj.peers;
      if (
        !Array.isArray(peers) ||
        peers.length > 1024 ||
        !peers.every((p) => typeof p === 'string' && NAME_PATTERN.test(p))
      ) {
        bad('"peers" must be a list of peer names');
      }
      return { v: 1, type: 'joined', room: name(obj, 'room'), peer: name(obj, 'peer'), peers: peers as string[] };
    }
    case 'peer-joined':
    case 'peer-left':
      return { v: 1, type: obj.type, peer: name(obj, 'peer') };
    case 'signal': {
      const msg = { v: 1, type: 'signal', from: name(obj, 'from'), signal: parseSignal(obj.signal) } as const;
      if (obj.address === undefined) return msg;
      if (typeof obj.address !== 'string' || !isIpLiteral(obj.address)) bad('"address" must be an IP address');
      return { ...msg, address: obj.address };
    }
    case 'refused': {
      const code = obj.code;
      if (typeof code !== 'string' || !REFUSAL_CODES.has(code)) bad('"code" is not a refusal code');
      return {
        v: 1,
        type: 'refused',
        code: code as SignalingErrorCode,
        reason: typeof obj.reason === 'string' ? obj.reason.slice(0, 200) : '',
        fatal: obj.fatal === true,
      };
    }
    default:
      bad('unknown server message type');
  }
}

/** The JSON text of a message. */
export function encodeMessage(message: ClientMessage | ServerMessage): string {
  return JSON.stringify(message);
}

import { TransportError } from '@netplay/transport';

/**
 * The bytes netplay-webrtc puts on its data channels (version 1). Integers are big-endian.
 *
 * - Data channel id 0, `np-control` (ordered, reliable): control frames, first byte the type.
 * - Data channel id 1, `np-ping` (unordered, no retransmissions): PING and PONG frames only.
 * - Data channel id 2 + i: the connection's channel i. A reliable channel carries fragment frames
 *   (a message above the chunk size is cut into several); an unreliable one carries a u32 sequence
 *   number and the payload.
 */
export const PROTOCOL_VERSION = 1;
/** `"NPRT"`: the magic bytes at the start of HELLO and WELCOME. */
export const MAGIC = new Uint8Array([0x4e, 0x50, 0x52, 0x54]);

/** Negotiated data channel id of the control channel. */
export const CONTROL_CHANNEL_ID = 0;
/** Negotiated data channel id of the ping channel. */
export const PING_CHANNEL_ID = 1;
/** Negotiated data channel id of the connection's first channel. */
export const FIRST_DATA_CHANNEL_ID = 2;

/** Control frame types (first byte of a frame on `np-control` and `np-ping`). */
export const ControlType = {
  /** HELLO (client → server, on `np-control`, once the channel opens): magic, version, the client's two message limits, its channel signature. A mismatch is answered with CLOSE `refused`. */
  hello: 0x10,
  /** WELCOME (server → client, on `np-control`): magic, version, the server's two limits, empty signature; both ends are open after it and use the smaller limits. */
  welcome: 0x11,
  /** PING (either end, on `np-ping`, every `pingIntervalMs` once open): the sender's clock reading, f64 ms. */
  ping: 0x12,
  /** PONG (on `np-ping`): a PING's clock reading echoed, from which the sender measures the round-trip time. */
  pong: 0x13,
  /** CLOSE (on `np-control`): a {@link CloseKind}, the messages sent per reliable channel (so the receiver waits for them) and the UTF-8 reason. */
  close: 0x14,
} as const;

/** How a CLOSE frame asks the peer to report the close. */
export const CloseKind = {
  /** `close(reason)`: the peer sees code `remote`. */
  normal: 0,
  /** The handshake was refused: the peer sees code `refused`. */
  refused: 1,
  /** The sender timed out: the peer sees code `timeout`. */
  timeout: 2,
} as const;
export type CloseKindValue = (typeof CloseKind)[keyof typeof CloseKind];

/** Reliable-channel fragment types (first byte of a frame on a reliable data channel). */
export const FragmentType = {
  /** A whole message follows. */
  whole: 0x00,
  /** The first fragment of a message: u32 total length, then bytes. */
  first: 0x01,
  /** A further fragment: bytes. The message is complete when the total length has arrived. */
  more: 0x02,
} as const;

/** Bytes before the payload of an unreliable frame (the sequence number). */
export const UNRELIABLE_HEADER_BYTES = 4;
/** Bytes before the payload of a whole reliable message. */
export const WHOLE_HEADER_BYTES = 1;
/** Bytes before the payload of a first fragment. */
export const FIRST_HEADER_BYTES = 5;
/** Bytes of a PING or PONG frame. */
export const PING_BYTES = 9;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** HELLO (client → server) and WELCOME (server → client). */
export interface Hello {
  readonly version: number;
  readonly maxMessageBytes: number;
  readonly maxUnreliableBytes: number;
  /** `channelSignature(channels)`; empty in WELCOME. */
  readonly signature: string;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Encodes HELLO (`type` hello) or WELCOME (`type` welcome): type, magic, version u8, two u32 limits, signature. */
export function encodeHello(type: number, hello: Omit<Hello, 'version'>): Uint8Array {
  const sig = encoder.encode(hello.signature);
  const out = new Uint8Array(14 + sig.length);
  out[0] = type;
  out.set(MAGIC, 1);
  out[5] = PROTOCOL_VERSION;
  const v = view(out);
  v.setUint32(6, hello.maxMessageBytes);
  v.setUint32(10, hello.maxUnreliableBytes);
  out.set(sig, 14);
  return out;
}

/** Decodes HELLO or WELCOME. Throws `TransportError('protocol')`. */
export function decodeHello(bytes: Uint8Array): Hello {
  if (bytes.length < 14) throw new TransportError('protocol', `handshake frame of ${bytes.length} bytes`);
  for (let i = 0; i < 4; i++) {
    if (bytes[1 + i] !== MAGIC[i]) throw new TransportError('protocol', 'handshake frame without the NPRT magic');
  }
  const v = view(bytes);
  let signature: string;
  try {
    signature = decoder.decode(bytes.subarray(14));
  } catch {
    throw new TransportError('protocol', 'channel signature is not UTF-8');
  }
  return { version: bytes[5]!, maxMessageBytes: v.getUint32(6), maxUnreliableBytes: v.getUint32(10), signature };
}

/** Encodes a PING or PONG carrying a clock reading (f64 ms). */
export function encodePing(type: number, time: number, out = new Uint8Array(PING_BYTES)): Uint8Array {
  out[0] = type;
  view(out).setFloat64(1, time);
  return out;
}

/** The clock reading of a PING or PONG. Throws `TransportError('protocol')`. */
export function decodePingTime(bytes: Uint8Array): number {
  if (bytes.length !== PING_BYTES) throw new TransportError('protocol', `ping frame of ${bytes.length} bytes`);
  return view(bytes).getFloat64(1);
}

/** CLOSE: kind u8, channel count u8, per reliable channel u32 messages sent (in channel order), then the reason (UTF-8). */
export interface CloseFrame {
  readonly kind: CloseKindValue;
  /** Messages the sender sent on each reliable channel, in channel order (unreliable ones skipped). */
  readonly sent: readonly number[];
  readonly reason: Uint8Array;
}

export function encodeClose(frame: CloseFrame): Uint8Array {
  const out = new Uint8Array(3 + 4 * frame.sent.length + frame.reason.length);
  out[0] = ControlType.close;
  out[1] = frame.kind;
  out[2] = frame.sent.length;
  const v = view(out);
  for (let i = 0; i < frame.sent.length; i++) v.setUint32(3 + 4 * i, frame.sent[i]! >>> 0);
  out.set(frame.reason, 3 + 4 * frame.sent.length);
  return out;
}

/** Decodes CLOSE. Throws `TransportError('protocol')`. */
export function decodeClose(bytes: Uint8Array): CloseFrame {
  if (bytes.length < 3) throw new TransportError('protocol', `close frame of ${bytes.length} bytes`);
  const kind = bytes[1]!;
  if (kind > CloseKind.timeout) throw new TransportError('protocol', `unknown close kind ${kind}`);
  const n = bytes[2]!;
  if (bytes.length < 3 + 4 * n) throw new TransportError('protocol', 'truncated close frame');
  const v = view(bytes);
  const sent: number[] = [];
  for (let i = 0; i < n; i++) sent.push(v.getUint32(3 + 4 * i));
  return { kind: kind as CloseKindValue, sent, reason: bytes.subarray(3 + 4 * n) };
}

/** Encodes an unreliable frame: sequence u32, payload. */
export function encodeUnreliable(seq: number, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(UNRELIABLE_HEADER_BYTES + data.length);
  view(out).setUint32(0, seq >>> 0);
  out.set(data, UNRELIABLE_HEADER_BYTES);
  return out;
}

/** Whether u32 sequence number `a` is newer than `b` (serial-number arithmetic, RFC 1982). */
export function seqNewer(a: number, b: number): boolean {
  const d = (a - b) >>> 0;
  return d !== 0 && d < 0x80000000;
}

/**
 * Cuts a reliable message into frames of at most `chunkBytes` bytes each (headers included):
 * one WHOLE frame if it fits, else FIRST (with the total length) and MORE frames.
 */
export function encodeReliable(data: Uint8Array, chunkBytes: number): Uint8Array[] {
  if (data.length + WHOLE_HEADER_BYTES <= chunkBytes) {
    const out = new Uint8Array(WHOLE_HEADER_BYTES + data.length);
    out[0] = FragmentType.whole;
    out.set(data, WHOLE_HEADER_BYTES);
    return [out];
  }
  const frames: Uint8Array[] = [];
  const firstLen = chunkBytes - FIRST_HEADER_BYTES;
  const first = new Uint8Array(chunkBytes);
  first[0] = FragmentType.first;
  view(first).setUint32(1, data.length);
  first.set(data.subarray(0, firstLen), FIRST_HEADER_BYTES);
  frames.push(first);
  for (let at = firstLen; at < data.length; at += chunkBytes - 1) {
    const part = data.subarray(at, Math.min(data.length, at + chunkBytes - 1));
    const more = new Uint8Array(1 + part.length);
    more[0] = FragmentType.more;
    more.set(part, 1);
    frames.push(more);
  }
  return frames;
}

/**
 * Reassembles the fragment frames of one reliable data channel (ordered, so fragments arrive in
 * order). `push` returns a whole message, or `undefined` while one is incomplete. Throws
 * `TransportError('protocol')` on a malformed sequence and `too-large` past `maxBytes`, checked
 * before anything is allocated.
 */
export class Reassembler {
  private buffer: Uint8Array | undefined;
  private filled = 0;

  constructor(private readonly maxBytes: number) {}

  /** Bytes held for an unfinished message. */
  get pendingBytes(): number {
    return this.buffer ? this.buffer.length : 0;
  }

  /** Takes one received frame; returns the whole message it completes, or undefined while one is incomplete. */
  push(frame: Uint8Array): Uint8Array | undefined {
    const type = frame.length > 0 ? frame[0]! : -1;
    if (type === FragmentType.whole) {
      if (this.buffer) throw new TransportError('protocol', 'a whole message inside a fragmented one');
      if (frame.length - 1 > this.maxBytes) {
        throw new TransportError('too-large', `received ${frame.length - 1} bytes (limit ${this.maxBytes})`);
      }
      return frame.subarray(WHOLE_HEADER_BYTES);
    }
    if (type === FragmentType.first) {
      if (this.buffer) throw new TransportError('protocol', 'a new fragmented message inside another');
      if (frame.length < FIRST_HEADER_BYTES) throw new TransportError('protocol', 'truncated first fragment');
      const total = view(frame).getUint32(1);
      if (total > this.maxBytes)
        throw new TransportError('too-large', `announced ${total} bytes (limit ${this.maxBytes})`);
      const part = frame.subarray(FIRST_HEADER_BYTES);
      if (part.length >= total) throw new TransportError('protocol', 'a first fragment holding the whole message');
      this.buffer = new Uint8Array(total);
      this.buffer.set(part);
      this.filled = part.length;
      return undefined;
    }
    if (type === FragmentType.more) {
      const buffer = this.buffer;
      if (!buffer) throw new TransportError('protocol', 'a continuation fragment without a first one');
      const part = frame.subarray(1);
      if (this.filled + part.length > buffer.length)
        throw new TransportError('protocol', 'fragments exceed the announced length');
      buffer.set(part, this.filled);
      this.filled += part.length;
      if (this.filled < buffer.length) return undefined;
      this.buffer = undefined;
      this.filled = 0;
      return buffer;
    }
    throw new TransportError('protocol', frame.length === 0 ? 'empty frame' : `unknown fragment type ${type}`);
  }
}

/** Bytes of a data channel message (ArrayBuffer in browsers, a typed array in some polyfills). */
export function bytesOf(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}

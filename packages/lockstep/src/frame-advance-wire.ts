import type { FsUaeMessage } from '@netplay/protocol';
import { ByteReader, DecodeError, decodeFsUaeMessage, encodeFsUaeMessage, fsUaeMessageSize } from '@netplay/protocol';

/**
 * Wire format of the frame-advance mode: the FS-UAE message codec of @netplay/protocol (seed 004;
 * input event, frame advance, ping, pong; big-endian, one type byte first), plus one extension:
 *
 * - `0x10` latency info: f64 the sender's largest one-way estimate in ms (for equalizing latency).
 *
 * An input event's payload is `u8 port` followed by the port's input bytes. Ping times are the
 * sender's clock in whole microseconds.
 */
export const FA_LATENCY_INFO = 0x10;

/** An input event of the frame-advance mode. */
export interface FrameAdvanceEvent {
  /** Frame the event applies on (before the frame runs). */
  readonly frame: number;
  /** Random ordering key (from the sender's seeded PRNG). */
  readonly key: number;
  /** Sender's client id (0..65535), the tie-breaker. */
  readonly client: number;
  /** Port whose input the event sets. */
  readonly port: number;
  /** The port's new input. */
  readonly input: Uint8Array;
}

/** A decoded frame-advance message. */
export type FrameAdvanceMessage =
  | { readonly type: 'event'; readonly event: FrameAdvanceEvent }
  | { readonly type: 'advance'; readonly frame: number }
  | { readonly type: 'ping'; readonly seq: number; readonly sentAtUs: number }
  | { readonly type: 'pong'; readonly seq: number; readonly pingSentAtUs: number; readonly repliedAtUs: number }
  | { readonly type: 'latency'; readonly maxOneWayMs: number };

function encode(msg: FsUaeMessage): Uint8Array {
  const out = new Uint8Array(fsUaeMessageSize(msg));
  encodeFsUaeMessage(msg, out);
  return out;
}

/** Encodes an input event (FS-UAE input event, payload = port + input). */
export function encodeFaEvent(e: FrameAdvanceEvent): Uint8Array {
  const payload = new Uint8Array(1 + e.input.length);
  payload[0] = e.port;
  payload.set(e.input, 1);
  return encode({ kind: 'input-event', targetFrame: e.frame, orderKey: e.key, clientId: e.client, payload });
}

/** Encodes "no more events for frames up to `frame`". */
export function encodeFaAdvance(frame: number): Uint8Array {
  return encode({ kind: 'frame-advance', frame });
}

/** Clock ms to the whole microseconds FS-UAE pings carry. */
export function toMicros(ms: number): number {
  return Math.max(0, Math.round(ms * 1000));
}

/** Encodes a ping sent at `nowMs`. */
export function encodeFaPing(seq: number, nowMs: number): Uint8Array {
  return encode({ kind: 'ping', sequence: seq >>> 0, sentAt: toMicros(nowMs) });
}

/** Encodes the answer to a ping. */
export function encodeFaPong(seq: number, pingSentAtUs: number, nowMs: number): Uint8Array {
  return encode({ kind: 'pong', sequence: seq >>> 0, pingSentAt: pingSentAtUs, repliedAt: toMicros(nowMs) });
}

/** Encodes the latency-info extension. */
export function encodeFaLatencyInfo(maxOneWayMs: number): Uint8Array {
  const out = new Uint8Array(9);
  out[0] = FA_LATENCY_INFO;
  new DataView(out.buffer).setFloat64(1, maxOneWayMs);
  return out;
}

/** Decodes one message; `inputBytes` is the session's input size. Throws only `DecodeError`. */
export function decodeFaMessage(bytes: Uint8Array, inputBytes: number): FrameAdvanceMessage {
  if (bytes.length > 0 && bytes[0] === FA_LATENCY_INFO) {
    const r = new ByteReader(bytes);
    r.u8('type');
    const maxOneWayMs = r.f64('maxOneWayMs');
    r.expectEnd('latency info');
    if (!(maxOneWayMs >= 0) || !Number.isFinite(maxOneWayMs)) throw new DecodeError('bad-value', 1, 'latency');
    return { type: 'latency', maxOneWayMs };
  }
  const m = decodeFsUaeMessage(bytes);
  switch (m.kind) {
    case 'input-event':
      if (m.payload.length !== 1 + inputBytes)
        throw new DecodeError(
          'bad-length',
          11,
          `event payload of ${m.payload.length} bytes, expected ${1 + inputBytes}`,
        );
      return {
        type: 'event',
        event: {
          frame: m.targetFrame,
          key: m.orderKey,
          client: m.clientId,
          port: m.payload[0]!,
          input: m.payload.slice(1),
        },
      };
    case 'frame-advance':
      return { type: 'advance', frame: m.frame };
    case 'ping':
      return { type: 'ping', seq: m.sequence, sentAtUs: m.sentAt };
    case 'pong':
      return { type: 'pong', seq: m.sequence, pingSentAtUs: m.pingSentAt, repliedAtUs: m.repliedAt };
  }
}

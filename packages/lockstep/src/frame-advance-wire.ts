import { ByteReader, DecodeError } from '@netplay/protocol';

/**
 * Wire format of the frame-advance mode (seed 004; FS-UAE never fixed one). Big-endian.
 *
 * `sched` channel (reliable, ordered: an advance follows every event it covers):
 * - `1` event: u32 frame, u32 random key, u32 sender id, u32 sender sequence, u8 port, input bytes
 * - `2` advance: u32 frame (the sender schedules nothing more for this frame or earlier)
 *
 * `ping` channel (unreliable):
 * - `3` ping / `4` pong: u32 sequence, f64 sender's clock at the ping, f64 the sender's largest
 *   one-way estimate in ms (for equalizing latency)
 */
export const FA_EVENT = 1;
export const FA_ADVANCE = 2;
export const FA_PING = 3;
export const FA_PONG = 4;

/** An input event of the frame-advance mode. */
export interface FrameAdvanceEvent {
  /** Frame the event applies on (before the frame runs). */
  readonly frame: number;
  /** Random ordering key (from the sender's seeded PRNG). */
  readonly key: number;
  /** Sender's peer id, the tie-breaker. */
  readonly client: number;
  /** Sender's event counter, the last tie-breaker. */
  readonly seq: number;
  /** Port whose input the event sets. */
  readonly port: number;
  /** The port's new input. */
  readonly input: Uint8Array;
}

export type FrameAdvanceMessage =
  | { readonly type: 'event'; readonly event: FrameAdvanceEvent }
  | { readonly type: 'advance'; readonly frame: number }
  | { readonly type: 'ping' | 'pong'; readonly seq: number; readonly sentAt: number; readonly maxOneWayMs: number };

export function encodeFaEvent(e: FrameAdvanceEvent): Uint8Array {
  const out = new Uint8Array(18 + e.input.length);
  const dv = new DataView(out.buffer);
  out[0] = FA_EVENT;
  dv.setUint32(1, e.frame);
  dv.setUint32(5, e.key);
  dv.setUint32(9, e.client);
  dv.setUint32(13, e.seq);
  out[17] = e.port;
  out.set(e.input, 18);
  return out;
}

export function encodeFaAdvance(frame: number): Uint8Array {
  const out = new Uint8Array(5);
  out[0] = FA_ADVANCE;
  new DataView(out.buffer).setUint32(1, frame);
  return out;
}

export function encodeFaPing(type: 'ping' | 'pong', seq: number, sentAt: number, maxOneWayMs: number): Uint8Array {
  const out = new Uint8Array(21);
  const dv = new DataView(out.buffer);
  out[0] = type === 'ping' ? FA_PING : FA_PONG;
  dv.setUint32(1, seq >>> 0);
  dv.setFloat64(5, sentAt);
  dv.setFloat64(13, maxOneWayMs);
  return out;
}

/** Decodes one message; `inputBytes` is the session's input size. Throws only `DecodeError`. */
export function decodeFaMessage(bytes: Uint8Array, inputBytes: number): FrameAdvanceMessage {
  const r = new ByteReader(bytes);
  const type = r.u8('type');
  if (type === FA_EVENT) {
    const frame = r.u32('frame');
    const key = r.u32('key');
    const client = r.u32('client');
    const seq = r.u32('seq');
    const port = r.u8('port');
    const input = r.bytesCopy(inputBytes, 'input');
    r.expectEnd('frame-advance event');
    return { type: 'event', event: { frame, key, client, seq, port, input } };
  }
  if (type === FA_ADVANCE) {
    const frame = r.u32('frame');
    r.expectEnd('frame-advance advance');
    return { type: 'advance', frame };
  }
  if (type === FA_PING || type === FA_PONG) {
    const seq = r.u32('seq');
    const sentAt = r.f64('sentAt');
    const maxOneWayMs = r.f64('maxOneWayMs');
    r.expectEnd('frame-advance ping');
    if (!Number.isFinite(sentAt) || !(maxOneWayMs >= 0) || !Number.isFinite(maxOneWayMs))
      throw new DecodeError('bad-value', 5, 'ping times must be finite');
    return { type: type === FA_PING ? 'ping' : 'pong', seq, sentAt, maxOneWayMs };
  }
  throw new DecodeError('unknown-type', 0, `frame-advance message type ${type}`);
}

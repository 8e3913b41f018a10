import { Prng } from '@netplay/transport';

/*
 * GGPO's bytes on the wire, computed from its packet format (pond3r/ggpo,
 * src/lib/ggpo/network/udp_msg.h and udp_proto.cpp), for the same case as ours:
 *
 * - every frame, each endpoint sends one Input message: the 5-byte header (u16 magic, u16 sequence
 *   number, u8 type), then 27 bytes (peer_connect_status[4] × 4, u32 start_frame, i32
 *   disconnect_requested:1 + ack_frame:31, u16 num_bits, u8 input_size) and the bits rounded up to
 *   bytes. The inputs are every pending frame from the last one the peer acknowledged (ack_frame:
 *   the peer's last received frame; frames below it are dropped, that frame stays), each as a
 *   0 bit after one 10-bit entry (1, the new bit value, an 8-bit bit index) per bit that changed
 *   from the frame before (SendPendingOutput; BITVECTOR_NIBBLE_SIZE is 8);
 * - once a second each endpoint sends a QualityReport (5 + 5 bytes) and answers the other's with a
 *   QualityReply (5 + 4 bytes). KeepAlive never goes out: inputs go every frame.
 * - with IP and UDP headers: 28 bytes more per packet (UDP_HEADER_SIZE in udp_proto.cpp).
 *
 * The link is simulated per frame: a message arrives half an RTT later unless lost (seeded), and
 * the ack a peer sends is the newest frame it received.
 */

/** One GGPO link (one direction: what one peer sends one other peer). */
export interface GgpoLinkCase {
  readonly fps: number;
  readonly rttMs: number;
  /** Probability that a packet is lost (each way). */
  readonly loss: number;
  readonly frames: number;
  readonly seed: number;
  /** The sender's input of `frame` (its bytes). */
  readonly inputOf: (frame: number) => Uint8Array;
}

export interface GgpoLinkFigures {
  /** UDP payload per second. */
  readonly payloadBytesPerSec: number;
  /** Datagrams per second. */
  readonly packetsPerSec: number;
  /** With the 28 bytes of IPv4 + UDP headers per datagram. */
  readonly wireBytesPerSec: number;
}

/** GGPO's UDP header (5) + the fixed part of an Input message (27). */
export const GGPO_INPUT_FIXED_BYTES = 32;
/** IPv4 (20) + UDP (8) header bytes per datagram. */
export const IP_UDP_HEADER_BYTES = 28;

function popcount8(v: number): number {
  let n = 0;
  for (let x = v; x !== 0; x &= x - 1) n++;
  return n;
}

/** Bits of GGPO's encoding of frames `from..to` (inclusive), each against the frame before (frame −1: zeros). */
export function ggpoInputBits(inputOf: (frame: number) => Uint8Array, from: number, to: number): number {
  let bits = 0;
  for (let f = from; f <= to; f++) {
    const cur = inputOf(f);
    const prev = f > 0 ? inputOf(f - 1) : undefined;
    let changed = 0;
    for (let k = 0; k < cur.length; k++) changed += popcount8(cur[k]! ^ (prev?.[k] ?? 0));
    bits += 1 + 10 * changed;
  }
  return bits;
}

/** Bytes of one GGPO Input message carrying frames `from..to`. */
export function ggpoInputPacketBytes(inputOf: (frame: number) => Uint8Array, from: number, to: number): number {
  return GGPO_INPUT_FIXED_BYTES + Math.ceil(ggpoInputBits(inputOf, from, to) / 8);
}

/** GGPO's bytes per second on one link for the case (see the module comment). */
export function ggpoLink(c: GgpoLinkCase): GgpoLinkFigures {
  const frameMs = 1000 / c.fps;
  const oneWay = c.rttMs / 2;
  const prng = new Prng(c.seed);
  const lost = () => c.loss > 0 && prng.chance(c.loss);
  // The peer's newest received frame of ours, as known at each of its send times: it receives our
  // frame f at f·frameMs + oneWay (unless lost); its ack sent at g·frameMs reaches us oneWay later.
  const arrivedAt: number[] = [];
  for (let f = 0; f < c.frames; f++) arrivedAt.push(lost() ? Number.POSITIVE_INFINITY : f * frameMs + oneWay);
  const ackSentAt: number[] = []; // per peer frame g: the ack it carried (−1: none), or NaN if lost
  let newest = -1;
  let next = 0;
  for (let g = 0; g < c.frames; g++) {
    const t = g * frameMs;
    // Our messages carry every pending frame, so the newest arrived one is what it holds.
    while (next < c.frames && next * frameMs + oneWay <= t) {
      if (arrivedAt[next]! <= t) newest = next;
      next++;
    }
    ackSentAt.push(lost() ? Number.NaN : newest);
  }
  let bytes = 0;
  let packets = 0;
  let acked = -1;
  let g = 0;
  for (let f = 0; f < c.frames; f++) {
    const t = f * frameMs;
    while (g < c.frames && g * frameMs + oneWay <= t) {
      const a = ackSentAt[g]!;
      if (!Number.isNaN(a) && a > acked) acked = a;
      g++;
    }
    const from = Math.max(0, acked);
    bytes += ggpoInputPacketBytes(c.inputOf, from, f);
    packets++;
  }
  const seconds = (c.frames * frameMs) / 1000;
  // QualityReport + QualityReply once a second each way.
  bytes += Math.floor(seconds) * (10 + 9);
  packets += Math.floor(seconds) * 2;
  return {
    payloadBytesPerSec: bytes / seconds,
    packetsPerSec: packets / seconds,
    wireBytesPerSec: (bytes + packets * IP_UDP_HEADER_BYTES) / seconds,
  };
}

/** The input patterns of the bandwidth cases: held, changing every frame, changing every 10 frames (2 bytes, seeded). */
export type InputPattern = 'held' | 'every-frame' | 'every-10';

/** The byte `k` of `player`'s input at `frame` for a pattern (deterministic). */
export function patternInput(pattern: InputPattern, seed: number, player: number, frame: number, k: number): number {
  if (pattern === 'held') return (0x5a + player * 17 + k * 3) & 0xff;
  const step = pattern === 'every-frame' ? frame : Math.floor(frame / 10);
  let h = seed ^ Math.imul(player + 1, 0x9e3779b1) ^ Math.imul(step + 1, 0x85ebca6b) ^ Math.imul(k + 1, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 16), 0xc2b2ae35);
  return (h ^ (h >>> 13)) & 0xff;
}

/** `patternInput` as GGPO's sender sees it: the whole input of a frame. */
export function patternInputs(
  pattern: InputPattern,
  seed: number,
  player: number,
  bytes: number,
): (f: number) => Uint8Array {
  const cache = new Map<number, Uint8Array>();
  return (f) => {
    let v = cache.get(f);
    if (v === undefined) {
      v = new Uint8Array(bytes);
      for (let k = 0; k < bytes; k++) v[k] = patternInput(pattern, seed, player, f, k);
      cache.set(f, v);
    }
    return v;
  };
}

import { decodeCloseReason } from '@netplay/transport';
import { FrameType, u16 } from './wire.js';

/** Where {@link readFrames} hands the frames of a DATA packet. */
export interface FrameSink {
  /** The connection finished: the rest of the packet is not read. */
  readonly dead: boolean;
  /** A Fragment frame whose fields start at `p`; returns the offset after it, or −1 after a fatal error. */
  fragment(d: Uint8Array, p: number, channel: number, end: number): number;
  /** An Unreliable frame: sequence `seq`, payload `d[start, end)`. */
  unreliable(channel: number, seq: number, d: Uint8Array, start: number, end: number): void;
  /** A Close frame with its reason. */
  close(reason: string): void;
  /** A CloseAck frame. */
  closeAck(): void;
  /** A malformed frame: counted; the rest of the packet is ignored. */
  malformed(what: string): void;
}

/** What {@link readFrames} saw. */
export const FramesRead = {
  /** Every frame was read; none asks for an ack. */
  Quiet: 0,
  /** Every frame was read; one (a Fragment, Ping or Close) asks for an ack. */
  Elicits: 1,
  /** A malformed frame or a fatal error stopped the reading. */
  Stopped: 2,
} as const;
export type FramesRead = (typeof FramesRead)[keyof typeof FramesRead];

/**
 * Reads the frames of a DATA packet, `d[o, end)` (after its header, before its CRC), and hands
 * each to `sink` (see wire.ts for the frame layouts). `tracked`: the packet has a sequence number
 * (only such packets may carry fragments). Allocation-free.
 */
export function readFrames(d: Uint8Array, o: number, end: number, tracked: boolean, sink: FrameSink): FramesRead {
  let elicits = false;
  while (o < end && !sink.dead) {
    const fb = d[o]!;
    const ft = fb >> 4;
    let ch = fb & 15;
    let p = o + 1;
    if (ch === 15 && (ft === FrameType.Fragment || ft === FrameType.Unreliable)) {
      if (p >= end) {
        sink.malformed('truncated frame');
        return FramesRead.Stopped;
      }
      ch = d[p++]!;
    }
    if (ft === FrameType.Fragment) {
      if (!tracked) {
        sink.malformed('fragment in an untracked packet');
        return FramesRead.Stopped;
      }
      if (p + 14 > end) {
        sink.malformed('truncated fragment frame');
        return FramesRead.Stopped;
      }
      const n = sink.fragment(d, p, ch, end);
      if (n < 0) return FramesRead.Stopped;
      o = n;
      elicits = true;
    } else if (ft === FrameType.Unreliable) {
      if (p + 3 > end) {
        sink.malformed('truncated unreliable frame');
        return FramesRead.Stopped;
      }
      const useq = u16(d, p);
      p += 2;
      let len = 0;
      let shift = 0;
      for (;;) {
        if (p >= end || shift > 14) {
          sink.malformed('truncated unreliable frame');
          return FramesRead.Stopped;
        }
        const byte = d[p++]!;
        len += (byte & 0x7f) << shift;
        shift += 7;
        if (byte < 0x80) break;
      }
      const stop = p + len;
      if (stop > end) {
        sink.malformed('truncated unreliable frame');
        return FramesRead.Stopped;
      }
      sink.unreliable(ch, useq, d, p, stop);
      o = stop;
    } else if (ft === FrameType.Ping && fb === FrameType.Ping << 4) {
      o += 1;
      elicits = true;
    } else if (ft === FrameType.Close && fb === FrameType.Close << 4) {
      if (o + 2 > end || o + 2 + d[o + 1]! > end) {
        sink.malformed('truncated close frame');
        return FramesRead.Stopped;
      }
      const reason = decodeCloseReason(d.subarray(o + 2, o + 2 + d[o + 1]!));
      o += 2 + d[o + 1]!;
      elicits = true;
      sink.close(reason);
    } else if (ft === FrameType.CloseAck && fb === FrameType.CloseAck << 4) {
      o += 1;
      sink.closeAck();
    } else {
      sink.malformed(`unknown frame type ${ft}`);
      return FramesRead.Stopped;
    }
  }
  return elicits ? FramesRead.Elicits : FramesRead.Quiet;
}

import { type Layout, nu64be, s32be, seq, struct, u8, u32be } from '@solana/buffer-layout';
import type { MameInputShape } from './input-state.js';

/*
 * buffer-layout declaration of the MAMEHub input packet (our layout, big-endian). Since the
 * number of analog devices differs per port, the declaration is built for a given shape. It is
 * the oracle the hand-written codec is tested against; the codec does not use it.
 */

/** An analog device as buffer-layout sees it (`reverse` is 0 or 1). */
export interface MameAnalogFields {
  /** i32, 4 bytes (offset 0 of the device): movement accumulated since the last frame. */
  accumulatedDelta: number;
  /** i32, 4 bytes (offset 4): the device's previous value, which MAME uses for inertia. */
  previousValue: number;
  /** i32, 4 bytes (offset 8): the device's sensitivity; the lower, the more sensitive. */
  sensitivity: number;
  /** u8, 1 byte (offset 12): 1 when the client wants this input reversed, else 0. */
  reverse: number;
}

/** A port as buffer-layout sees it. */
export interface MamePortFields {
  /** u32, 4 bytes (offset 0 of the port): the port's default digital mask, client-specific and hence sent. */
  defaultMask: number;
  /** u32, 4 bytes (offset 4): one bit per digital input, set while the input is active (pressed). */
  currentMask: number;
  /** u8, 1 byte (offset 8): the number of analog devices that follow, 0–255. */
  analogCount: number;
  /** The port's analog devices, 13 bytes each, in MAME's order. */
  analogs: MameAnalogFields[];
}

/** An input packet as buffer-layout sees it; ports are fields `p0`, `p1`, … */
export interface MameHubPacketFields {
  /** u32 at offset 0: the sender's packet counter, 0, 1, 2, … per client. */
  inputId: number;
  /**
   * u64 at offset 4 (at most 2^53 − 1): the emulated time, in a unit the peers agree on, from which this input applies.
   */
  futureInputTime: number;
  /** u8 at offset 12: the number of ports that follow, 0–255. */
  portCount: number;
  /** The ports from offset 13, in MAME's order, as fields `p0`, `p1`, … */
  ports: Record<string, MamePortFields>;
}

const analogLayout = struct<MameAnalogFields>([
  s32be('accumulatedDelta'),
  s32be('previousValue'),
  s32be('sensitivity'),
  u8('reverse'),
]);

/** The buffer-layout declaration of an input packet whose state has `shape`. */
export function mameHubInputPacketLayout(shape: MameInputShape): Layout<MameHubPacketFields> {
  const ports = shape.map((analogs, i) =>
    struct<MamePortFields>(
      [u32be('defaultMask'), u32be('currentMask'), u8('analogCount'), seq(analogLayout, analogs, 'analogs')],
      `p${i}`,
    ),
  );
  return struct<MameHubPacketFields>([
    u32be('inputId'),
    nu64be('futureInputTime'),
    u8('portCount'),
    struct<Record<string, MamePortFields>>(ports, 'ports'),
  ]);
}

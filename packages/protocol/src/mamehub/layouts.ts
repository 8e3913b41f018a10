import { type Layout, nu64be, s32be, seq, struct, u8, u32be } from '@solana/buffer-layout';
import type { MameInputShape } from './input-state.js';

/*
 * buffer-layout declaration of the MAMEHub input packet (our layout, big-endian). Since the
 * number of analog devices differs per port, the declaration is built for a given shape. It is
 * the oracle the hand-written codec is tested against; the codec does not use it.
 */

/** An analog device as buffer-layout sees it (`reverse` is 0 or 1). */
export interface MameAnalogFields {
  accumulatedDelta: number;
  previousValue: number;
  sensitivity: number;
  reverse: number;
}

/** A port as buffer-layout sees it. */
export interface MamePortFields {
  defaultMask: number;
  currentMask: number;
  analogCount: number;
  analogs: MameAnalogFields[];
}

/** An input packet as buffer-layout sees it; ports are fields `p0`, `p1`, … */
export interface MameHubPacketFields {
  inputId: number;
  futureInputTime: number;
  portCount: number;
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

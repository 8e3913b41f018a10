/**
 * RetroPad button bits (`RETRO_DEVICE_ID_JOYPAD_*`): a port's input is a 16-bit little-endian mask
 * of these, two bytes per port per frame.
 */
export const RetroPad = {
  B: 1 << 0,
  Y: 1 << 1,
  SELECT: 1 << 2,
  START: 1 << 3,
  UP: 1 << 4,
  DOWN: 1 << 5,
  LEFT: 1 << 6,
  RIGHT: 1 << 7,
  A: 1 << 8,
  X: 1 << 9,
  L: 1 << 10,
  R: 1 << 11,
  L2: 1 << 12,
  R2: 1 << 13,
  L3: 1 << 14,
  R3: 1 << 15,
} as const;

/** Bytes of one port's input for one frame: the 16-bit RetroPad mask, little-endian. */
export const RETROPAD_INPUT_BYTES = 2;

/** Writes `mask` as one port's input into `target` (2 bytes, little-endian) and returns it. */
export function encodeRetroPad(mask: number, target: Uint8Array = new Uint8Array(RETROPAD_INPUT_BYTES)): Uint8Array {
  target[0] = mask & 0xff;
  target[1] = (mask >>> 8) & 0xff;
  return target;
}

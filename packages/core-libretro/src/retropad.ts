/**
 * RetroPad button bits (`RETRO_DEVICE_ID_JOYPAD_*`): a port's input is a 16-bit little-endian mask
 * of these, two bytes per port per frame.
 */
export const RetroPad = {
  /** Bit 0 (0x0001): the bottom face button (SNES B; NES and Game Boy B). */
  B: 1 << 0,
  /** Bit 1 (0x0002): the left face button (SNES Y). */
  Y: 1 << 1,
  /** Bit 2 (0x0004): Select. */
  SELECT: 1 << 2,
  /** Bit 3 (0x0008): Start. */
  START: 1 << 3,
  /** Bit 4 (0x0010): D-pad up. */
  UP: 1 << 4,
  /** Bit 5 (0x0020): D-pad down. */
  DOWN: 1 << 5,
  /** Bit 6 (0x0040): D-pad left. */
  LEFT: 1 << 6,
  /** Bit 7 (0x0080): D-pad right. */
  RIGHT: 1 << 7,
  /** Bit 8 (0x0100): the right face button (SNES A; NES and Game Boy A). */
  A: 1 << 8,
  /** Bit 9 (0x0200): the top face button (SNES X). */
  X: 1 << 9,
  /** Bit 10 (0x0400): left shoulder. */
  L: 1 << 10,
  /** Bit 11 (0x0800): right shoulder. */
  R: 1 << 11,
  /** Bit 12 (0x1000): second left shoulder (trigger). */
  L2: 1 << 12,
  /** Bit 13 (0x2000): second right shoulder (trigger). */
  R2: 1 << 13,
  /** Bit 14 (0x4000): left stick click. */
  L3: 1 << 14,
  /** Bit 15 (0x8000): right stick click. */
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

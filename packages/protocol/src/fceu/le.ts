/** Little-endian uint32 read (FCE Ultra's `de32`). Internal to the FCEU modules. */
export function readU32LE(b: Uint8Array, o: number): number {
  return (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
}

/**
 * The same four bytes as an int32 (0xFFFFFFFF is −1): compares against a constant without the
 * conversion to a float that a uint32 above 2^31 needs. Internal to the FCEU modules.
 */
export function readI32LE(b: Uint8Array, o: number): number {
  return b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24);
}

/** Little-endian uint32 write (FCE Ultra's `en32`). Internal to the FCEU modules. */
export function writeU32LE(t: Uint8Array, o: number, v: number): void {
  t[o] = v;
  t[o + 1] = v >>> 8;
  t[o + 2] = v >>> 16;
  t[o + 3] = v >>> 24;
}

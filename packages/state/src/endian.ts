/**
 * True when the host stores multi-byte numbers little-endian, as every current JavaScript
 * engine on x86, ARM and WebAssembly does. Typed arrays use host byte order, so snapshots
 * (which are little-endian) are raw byte copies on such hosts.
 */
export const LITTLE_ENDIAN_HOST: boolean = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

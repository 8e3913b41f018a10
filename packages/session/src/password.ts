import { retroArchPasswordHash } from '@netplay/protocol';

/**
 * The password proof a client sends: SHA-256 over the salt as 8 uppercase hex digits followed by
 * the UTF-8 password (the same construction as RetroArch's, via @netplay/protocol's
 * `retroArchPasswordHash`), as 32 raw bytes. The password itself never travels.
 */
export function passwordProof(salt: number, password: string): Uint8Array {
  const hex = retroArchPasswordHash(salt >>> 0, password);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Compares two byte strings in time independent of where they differ. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return d === 0;
}

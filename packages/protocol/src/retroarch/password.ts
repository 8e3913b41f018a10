import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { EncodeError } from '../errors.js';
import { utf8Bytes } from './text.js';

/**
 * The PASSWORD hash RetroArch expects: lowercase hex SHA-256 of `sprintf("%08lX", salt)` (8
 * uppercase hex digits) followed by the UTF-8 password. Pure JavaScript (@noble/hashes), so it also
 * runs in browsers.
 * @param salt the u32 salt from the host's connection header (word 3).
 * @throws EncodeError `out-of-range` when the salt is not a u32.
 */
export function retroArchPasswordHash(salt: number, password: string): string {
  if (!Number.isInteger(salt) || salt < 0 || salt > 0xffffffff) {
    throw new EncodeError('out-of-range', `salt ${salt} is not a u32`);
  }
  const prefix = salt.toString(16).toUpperCase().padStart(8, '0');
  return bytesToHex(sha256(utf8Bytes(prefix + password)));
}

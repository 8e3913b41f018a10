import { hash64 } from '@netplay/state';

/** What a peer runs; host and client must agree on all three (INFO). */
export interface ContentInfo {
  /** The core's id, e.g. `"chip8"`. */
  readonly coreId: string;
  /** The core's version, e.g. `"1.0.0"`. */
  readonly coreVersion: string;
  /** A hash of the content (ROM), e.g. from {@link hashContent}. Compared as a string. */
  readonly contentHash: string;
}

/** The content hash this package suggests: @netplay/state's hash64 of the bytes, 16 hex digits. */
export function hashContent(bytes: Uint8Array): string {
  return hash64(bytes).toString(16).padStart(16, '0');
}

import { type ContentInfo, hashContent } from '@netplay/session';

/**
 * What the page announces in INFO, the same as the CLI's `chip8Content` (apps/cli/src/content.ts;
 * replicated because the CLI package reads files with Node APIs): core id `chip8`, core version
 * `1` and the session package's `hashContent` of the ROM.
 */
export function chip8Content(rom: Uint8Array): ContentInfo {
  return { coreId: 'chip8', coreVersion: '1', contentHash: hashContent(rom) };
}

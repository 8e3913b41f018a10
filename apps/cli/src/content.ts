import { type ContentInfo, hashContent } from '@netplay/session';

/**
 * What the CLI announces in INFO for a ROM on the CHIP-8 core: core id `chip8`, core version `1`
 * (the netplay wasm core ABI version), and the session package's `hashContent` of the ROM bytes.
 * Any other client (the browser demo) must announce the same to join.
 */
export function chip8Content(rom: Uint8Array): ContentInfo {
  return { coreId: 'chip8', coreVersion: '1', contentHash: hashContent(rom) };
}

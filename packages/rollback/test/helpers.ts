import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Chip8Core } from '@netplay/core-wasm';

/** The Space Racer ROM from the shared fixtures (never copied into the package). */
export function spaceRacerRom(): Uint8Array {
  const url = new URL('../../../../shared/fixtures/chip8/chip8archive/roms/spaceracer.ch8', import.meta.url);
  return new Uint8Array(readFileSync(fileURLToPath(url)));
}

let rom: Uint8Array | undefined;
/** A fresh CHIP-8 core running Space Racer. */
export function spaceRacer(): Chip8Core {
  rom ??= spaceRacerRom();
  return Chip8Core.createSync(rom);
}

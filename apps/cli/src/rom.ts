import { readFile } from 'node:fs/promises';
import { Chip8Core, type Chip8CoreOptions, WasmCoreError } from '@netplay/core-wasm';
import { CliError, ExitCode } from './exit-codes.js';

/** Largest ROM the CLI reads (XO-CHIP's 64 KiB address space). */
export const MAX_ROM_BYTES = 65536;

/** The embedded Space Racer ROM (CC0, see assets/README.md), read relative to this module. */
export const SPACE_RACER_URL = new URL('../assets/spaceracer.ch8', import.meta.url);

/**
 * Reads a ROM file and checks the CHIP-8 core takes it.
 * @throws CliError `BadRom` when the file is missing, unreadable, empty, too large or refused.
 */
export async function readRom(path: string | URL): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (e as Error).message;
    throw new CliError(ExitCode.BadRom, `cannot read ROM ${String(path)}: ${why}`);
  }
  if (bytes.length === 0) throw new CliError(ExitCode.BadRom, `bad ROM ${String(path)}: the file is empty`);
  if (bytes.length > MAX_ROM_BYTES)
    throw new CliError(
      ExitCode.BadRom,
      `bad ROM ${String(path)}: ${bytes.length} bytes, a CHIP-8 ROM has at most ${MAX_ROM_BYTES}`,
    );
  makeCore(bytes, String(path));
  return bytes;
}

/** Creates a CHIP-8 core for `rom`, turning a refusal into a `BadRom` CLI error. */
export function makeCore(rom: Uint8Array, name = 'ROM', options: Chip8CoreOptions = {}): Chip8Core {
  try {
    return Chip8Core.createSync(rom, options);
  } catch (e) {
    if (e instanceof WasmCoreError) throw new CliError(ExitCode.BadRom, `bad ROM ${name}: ${e.message}`);
    throw e;
  }
}

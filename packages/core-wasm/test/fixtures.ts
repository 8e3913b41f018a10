import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type Chip8Core, type Framebuffer, packFramebuffer } from '../src/index.js';

/** The shared CHIP-8 fixtures, read in place (GPL files are never copied into the package). */
export const FIXTURES = new URL('../../../../shared/fixtures/chip8/', import.meta.url);

export function fixture(path: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(path, FIXTURES)));
}

export function timendus(name: string): Uint8Array {
  return fixture(`timendus-chip8-test-suite/bin/${name}.ch8`);
}

export interface ExpectedEntry {
  readonly name: string;
  readonly width: number;
  readonly height: number;
  readonly packed_sha256: string;
  readonly lit_pixels: number;
  readonly ascii: string;
}

const index = JSON.parse(readFileSync(new URL('expected-framebuffers/index.json', FIXTURES), 'utf8')) as {
  entries: ExpectedEntry[];
};

export function expected(name: string): ExpectedEntry {
  const e = index.entries.find((x) => x.name === name);
  if (e === undefined) throw new Error(`no expected framebuffer ${name}`);
  return e;
}

export function expectedAscii(e: ExpectedEntry): string {
  return readFileSync(new URL(e.ascii, FIXTURES), 'utf8').trimEnd();
}

export function packedSha256(fb: Framebuffer): string {
  return createHash('sha256').update(packFramebuffer(fb)).digest('hex');
}

/** The framebuffer as the fixtures' ASCII art: "#" lit, "." dark. */
export function ascii(fb: Framebuffer): string {
  const rows: string[] = [];
  for (let y = 0; y < fb.height; y++) {
    let row = '';
    for (let x = 0; x < fb.width; x++) row += fb.pixels[y * fb.width + x] !== 0 ? '#' : '.';
    rows.push(row);
  }
  return rows.join('\n');
}

export function litPixels(fb: Framebuffer): number {
  let n = 0;
  for (const p of fb.pixels) if (p !== 0) n++;
  return n;
}

export function runFrames(core: Chip8Core, frames: number): void {
  for (let i = 0; i < frames; i++) core.advance();
}

export const CHIP8_ARCHIVE_ROMS = [
  'br8kout',
  'caveexplorer',
  'flightrunner',
  'octojam1title',
  'outlaw',
  'piper',
  'slipperyslope',
  'snek',
  'spaceracer',
  'tank',
  'tombstontipp',
  'ultimatetictactoe',
  'wonkypong',
] as const;

export function archiveRom(name: string): Uint8Array {
  return fixture(`chip8archive/roms/${name}.ch8`);
}

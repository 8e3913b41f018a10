// Child process of test-roms-determinism.test.ts: loads a ROM target (argv[2], see test-roms.ts),
// optionally from a start state file (argv[5], '-' for none), runs argv[3] frames of the scripted
// input of seed argv[4] with RetroPad A toggled on frame argv[6] (-1: none), and prints one JSON
// line: the wall-clock millisecond of the load, the checksum after every 60th frame, the ROM's mix.
import { readFileSync } from 'node:fs';
import { loadRomTarget, type RomTarget, romMix, romRun, romTarget } from './test-roms.js';

const target = romTarget(process.argv[2] as RomTarget['name']);
const frames = Number(process.argv[3] ?? 3000);
const seed = Number(process.argv[4] ?? 1);
const startFile = process.argv[5] ?? '-';
const flipFrame = Number(process.argv[6] ?? -1);
const loadedAt = Date.now();
const core = loadRomTarget(target, startFile === '-' ? {} : { startState: new Uint8Array(readFileSync(startFile)) });
const lines = romRun(core, seed, frames, flipFrame);
const mix = romMix(core);
core.close();
process.stdout.write(`${JSON.stringify({ loadedAt, lines, mix })}\n`);

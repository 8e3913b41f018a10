// Child process of determinism.test.ts: runs Nestopia/efp for argv[2] frames with the scripted
// input of seed argv[3] and prints the checksum after every 60th frame, one per line.
import { loadNestopia, scriptedRun } from './fixtures.js';

const frames = Number(process.argv[2] ?? 3000);
const seed = Number(process.argv[3] ?? 1);
const core = loadNestopia();
const lines = scriptedRun(core, seed, frames);
core.close();
process.stdout.write(`${lines.join('\n')}\n`);

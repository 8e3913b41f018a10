import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestCore } from '@netplay/state/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import { ExitCode } from '../src/exit-codes.js';
import { memoryIo } from '../src/io.js';

const spaceRacer = fileURLToPath(new URL('../assets/spaceracer.ch8', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'netplay-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('netplay synctest', () => {
  it('passes on Space Racer and exits 0', async () => {
    const io = memoryIo();
    const code = await runCli(['synctest', '--rom', spaceRacer, '--frames', '300', '--check-distance', '4'], io);
    expect(io.stderr.join('')).toBe('');
    expect(code).toBe(ExitCode.Ok);
    expect(io.stdout.join('')).toMatch(/synctest: OK, 300 frames, check distance 4, \d+ frames resimulated/);
  });

  it('reports progress on runs of 1000 frames or more', async () => {
    const io = memoryIo();
    const code = await runCli(['synctest', '--rom', spaceRacer, '--frames', '1000', '--check-distance', '1'], io);
    expect(code).toBe(ExitCode.Ok);
    const progress = io.stderr
      .join('')
      .split('\n')
      .filter((l) => l.startsWith('synctest: frame'));
    expect(progress).toHaveLength(10);
    expect(progress.at(-1)).toBe('synctest: frame 1000 / 1000');
  });

  it('finds the desync of a non-deterministic core, names the frame and exits CheckFailed', async () => {
    const io = memoryIo();
    const code = await runCli(['synctest', '--rom', spaceRacer, '--frames', '100'], io, {
      synctest: { makeCore: (_rom, players) => new TestCore({ players, nondeterministic: true }) },
    });
    expect(code).toBe(ExitCode.CheckFailed);
    const m = /synctest: DESYNC at frame (\d+):/.exec(io.stderr.join(''));
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThan(0);
    expect(Number(m![1])).toBeLessThan(100);
  });

  it('passes on the deterministic TestCore through the same hook', async () => {
    const io = memoryIo();
    const code = await runCli(['synctest', '--rom', spaceRacer, '--frames', '200', '--players', '3'], io, {
      synctest: { makeCore: (_rom, players) => new TestCore({ players }) },
    });
    expect(code).toBe(ExitCode.Ok);
  });

  it.each([
    ['missing', join(dir, 'missing.ch8'), /cannot read ROM .*missing\.ch8: no such file/],
    ['empty', 'empty', /bad ROM .*: the file is empty/],
    ['too large', 'large', /bad ROM .*: 70000 bytes, a CHIP-8 ROM has at most 65536/],
    ['a directory', dir, /cannot read ROM .*: is a directory/],
  ])('a %s ROM gives a clear message and exit BadRom', async (_what, file, message) => {
    let path = file;
    if (file === 'empty' || file === 'large') {
      path = join(dir, `${file}.ch8`);
      writeFileSync(path, new Uint8Array(file === 'empty' ? 0 : 70000));
    }
    const io = memoryIo();
    const code = await runCli(['synctest', '--rom', path], io);
    expect(code).toBe(ExitCode.BadRom);
    expect(io.stderr.join('')).toMatch(message);
  });

  it.each([
    [['synctest']],
    [['synctest', '--rom', spaceRacer, '--frames', 'ten']],
    [['synctest', '--rom', spaceRacer, '--check-distance', '0']],
    [['synctest', '--rom', spaceRacer, '--bogus']],
    [['frobnicate']],
  ])('bad command line %j exits Usage', async (argv) => {
    const io = memoryIo();
    expect(await runCli(argv, io)).toBe(ExitCode.Usage);
    expect(io.stderr.join('')).toMatch(/^netplay /);
  });
});

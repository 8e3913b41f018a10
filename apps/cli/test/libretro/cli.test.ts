// The netplay command on a real core, as real processes: synctest, and host + join over UDP on
// loopback in rollback and lockstep-cs with Nestopia and efp.nes, comparing their --finals files.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/exit-codes.js';
import { spawnCli } from '../child.js';
import { EFP, NESTOPIA, requireFile } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'netplay-cli-libretro-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let aborting: string | undefined;
/**
 * The fake core of @netplay/core-libretro's tests (test/fixtures/fake-core.c) built with
 * -DABORT_ON_LOAD by the system C compiler: `retro_load_game` calls abort().
 */
function abortingCore(): string {
  if (aborting !== undefined) return aborting;
  const source = fileURLToPath(
    new URL('../../../../packages/core-libretro/test/fixtures/fake-core.c', import.meta.url),
  );
  const so = join(dir, 'abort_libretro.so');
  execFileSync('cc', ['-shared', '-fPIC', '-O1', '-DABORT_ON_LOAD', '-o', so, source], { stdio: 'pipe' });
  aborting = so;
  return so;
}

/** A finals file's hashes (lines "FRAME CRC32"; # comments skipped). */
function readFinals(path: string): Map<number, string> {
  const hashes = new Map<number, string>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\d+) ([0-9a-f]{8})$/.exec(line);
    expect(m, line).not.toBeNull();
    hashes.set(Number(m![1]), m![2]!);
  }
  return hashes;
}

describe('netplay synctest --core', () => {
  it('Nestopia on efp.nes: 600 frames, check distance 8, exit 0', async () => {
    requireFile(NESTOPIA);
    requireFile(EFP);
    const run = spawnCli(['synctest', '--core', 'nestopia', '--rom', EFP, '--frames', '600', '--check-distance', '8']);
    expect(await run.exit, run.stderr()).toBe(ExitCode.Ok);
    expect(run.stdout()).toMatch(/synctest: OK, 600 frames, check distance 8, \d+ frames resimulated, no desync/);
    expect(run.stderr()).toMatch(/Nestopia 1\.52\.0: state \d+ B, one-frame rollback agrees/);
    expect(run.stderr()).toMatch(/buttons 0x202 stay up/);
  }, 60_000);

  it('with --all-buttons the turbo buttons X/Y break rollback: DESYNC, exit 1 (why the default leaves them up)', async () => {
    const run = spawnCli(['synctest', '--core', NESTOPIA, '--rom', EFP, '--frames', '600', '--all-buttons']);
    expect(await run.exit, run.stdout()).toBe(ExitCode.CheckFailed);
    expect(run.stderr()).toMatch(/synctest: DESYNC at frame \d+/);
  }, 60_000);

  it('a missing core is exit BadCore naming the file, the Debian package and .ci/setup-libretro.sh', async () => {
    const run = spawnCli(['synctest', '--core', 'nosuchcore', '--rom', EFP]);
    expect(await run.exit).toBe(ExitCode.BadCore);
    expect(run.stderr()).toMatch(/nosuchcore_libretro\.so/);
    expect(run.stderr()).toMatch(/libretro-nosuchcore/);
    expect(run.stderr()).toMatch(/\.ci\/setup-libretro\.sh/);
  }, 30_000);

  it('a core that aborts on load: exit BadCore (core-crashed, the signal named), not a dead netplay', async () => {
    const so = abortingCore();
    const run = spawnCli(['synctest', '--core', so, '--rom', EFP, '--frames', '60']);
    expect(await run.exit, `${run.stdout()}\n${run.stderr()}`).toBe(ExitCode.BadCore);
    expect(run.stderr()).toMatch(/core-crashed/);
    expect(run.stderr()).toMatch(/SIGABRT/);
  }, 60_000);

  it.each([
    ['host', ['host', '--bind', '127.0.0.1', '--port', '0', '--bot', '--seconds', '5']],
    ['join', ['join', '127.0.0.1:9', '--bot', '--seconds', '5']],
    ['demo', ['demo', '--seconds', '2']],
  ])(
    'netplay %s --core on a core that aborts on load: the probe in a child process makes it exit BadCore, naming SIGABRT',
    async (_name, argv) => {
      const so = abortingCore();
      const run = spawnCli([...argv, '--core', so, '--rom', EFP]);
      expect(await run.exit, `${run.stdout()}\n${run.stderr()}`).toBe(ExitCode.BadCore);
      expect(run.stderr()).toMatch(/core-crashed/);
      expect(run.stderr()).toMatch(/SIGABRT/);
      expect(run.stderr()).toMatch(/seen in a test run of the core in a child process/);
      expect(run.stderr()).not.toMatch(/internal error/);
    },
    60_000,
  );

  it('a file that is not a libretro core is exit BadCore; a ROM the core refuses is exit BadRom', async () => {
    const fake = join(dir, 'fake_libretro.so');
    writeFileSync(fake, 'not an ELF file');
    const notCore = spawnCli(['synctest', '--core', fake, '--rom', EFP]);
    expect(await notCore.exit, notCore.stderr()).toBe(ExitCode.BadCore);
    expect(notCore.stderr()).toMatch(/not-libretro/);
    const badRom = join(dir, 'bad.nes');
    writeFileSync(badRom, new Uint8Array(100).fill(0x55));
    const refused = spawnCli(['synctest', '--core', 'nestopia', '--rom', badRom]);
    expect(await refused.exit, refused.stderr()).toBe(ExitCode.BadRom);
    expect(refused.stderr()).toMatch(/bad\.nes/);
    const missing = spawnCli(['host', '--core', 'nestopia', '--rom', join(dir, 'none.nes')]);
    expect(await missing.exit).toBe(ExitCode.BadRom);
    expect(missing.stderr()).toMatch(/cannot read ROM .*none\.nes: no such file/);
  }, 60_000);
});

describe.each(['rollback', 'lockstep-cs'])(
  'netplay host + join --core nestopia --mode %s (real processes, UDP)',
  (mode) => {
    it('both bots play; the final-state hashes of both processes agree at every shared frame', async () => {
      const hostFinals = join(dir, `host-${mode}.finals`);
      const joinFinals = join(dir, `join-${mode}.finals`);
      const host = spawnCli([
        'host',
        '--core',
        'nestopia',
        '--rom',
        EFP,
        '--mode',
        mode,
        '--bind',
        '127.0.0.1',
        '--port',
        '0',
        '--bot',
        '--seconds',
        '9',
        '--finals',
        hostFinals,
      ]);
      try {
        const [, port] = await host.waitFor(/hosting on udp 127\.0\.0\.1:(\d+)/);
        const player = spawnCli([
          'join',
          `127.0.0.1:${port}`,
          '--core',
          'nestopia',
          '--rom',
          EFP,
          '--bot',
          '--seconds',
          '5',
          '--finals',
          joinFinals,
        ]);
        expect(await player.exit, `${player.stdout()}\n${player.stderr()}`).toBe(ExitCode.Ok);
        expect(player.stdout()).toMatch(new RegExp(`joined 127\\.0\\.0\\.1:${port} as player \\(P2\\), ${mode}`));
        // Both probed Nestopia in a child process before loading it.
        expect(player.stderr()).toMatch(/Nestopia 1\.52\.0 ran efp\.nes in a test process/);
        expect(host.stderr()).toMatch(/Nestopia 1\.52\.0 ran efp\.nes in a test process/);
        expect(await host.exit, `${host.stdout()}\n${host.stderr()}`).toBe(ExitCode.Ok);
        const a = readFinals(hostFinals);
        const b = readFinals(joinFinals);
        let common = 0;
        const differing: number[] = [];
        for (const [f, h] of b) {
          const o = a.get(f);
          if (o === undefined) continue;
          common++;
          if (o !== h) differing.push(f);
        }
        // ≈ 5 s of play at 60 fps (a lower bar for lockstep-cs, whose frames wait for every input).
        expect(common).toBeGreaterThan(mode === 'rollback' ? 200 : 100);
        expect(differing).toEqual([]);
      } finally {
        host.kill();
      }
    }, 60_000);
  },
);

describe('content identity on a libretro core', () => {
  it('joining a Nestopia host with the CHIP-8 core, or with another ROM, is exit ContentMismatch naming both', async () => {
    const other = join(dir, 'other.nes');
    const efp = readFileSync(requireFile(EFP));
    const copy = new Uint8Array(efp);
    copy[copy.length - 1] = copy[copy.length - 1]! ^ 0xff; // same size and header, other bytes: Nestopia still takes it
    writeFileSync(other, copy);
    const host = spawnCli([
      'host',
      '--core',
      'nestopia',
      '--rom',
      EFP,
      '--bind',
      '127.0.0.1',
      '--port',
      '0',
      '--seconds',
      '8',
    ]);
    try {
      const [, port] = await host.waitFor(/hosting on udp 127\.0\.0\.1:(\d+)/);
      const chip8 = spawnCli(['join', `127.0.0.1:${port}`, '--bot']);
      expect(await chip8.exit, chip8.stderr()).toBe(ExitCode.ContentMismatch);
      expect(chip8.stderr()).toMatch(/core mismatch: host runs libretro:Nestopia 1\.52\.0, you have chip8 1/);
      const wrongRom = spawnCli(['join', `127.0.0.1:${port}`, '--core', 'nestopia', '--rom', other, '--bot']);
      expect(await wrongRom.exit, wrongRom.stderr()).toBe(ExitCode.ContentMismatch);
      expect(wrongRom.stderr()).toMatch(/content mismatch/);
    } finally {
      host.kill();
    }
  }, 60_000);
});

describe('netplay demo --core nestopia', () => {
  it.each(['rollback', 'frame-advance'])(
    '--mode %s: host, guest (and in rollback a spectator), each its own Nestopia in one process, agree (exit 0)',
    async (mode) => {
      const run = spawnCli(['demo', '--core', 'nestopia', '--rom', EFP, '--seconds', '3', '--mode', mode]);
      expect(await run.exit, `${run.stdout()}\n${run.stderr()}`).toBe(ExitCode.Ok);
      expect(run.stdout()).toMatch(/netplay demo: efp\.nes on Nestopia 1\.52\.0/);
      expect(run.stdout()).toMatch(
        /[1-9]\d* earlier final states compared with host's: 0 differ\.\nOK: all peers agree\./,
      );
      if (mode === 'rollback') expect(run.stdout()).toMatch(/spectator {2}[0-9a-f]{8}/);
    },
    60_000,
  );
});

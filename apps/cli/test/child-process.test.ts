import { describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';
import { hostSeconds, spawnCli, startupMs } from './child.js';

async function runChild(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const c = spawnCli(args, 30_000);
  const code = await c.exit;
  return { code, stdout: c.stdout(), stderr: c.stderr() };
}

describe('the netplay command in a child process', () => {
  it('a missing ROM: message on stderr, exit BadRom', async () => {
    const r = await runChild(['synctest', '--rom', 'does-not-exist.ch8']);
    expect(r.stderr).toMatch(/netplay synctest: cannot read ROM does-not-exist\.ch8: no such file/);
    expect(r.code).toBe(ExitCode.BadRom);
  });

  it('synctest of the embedded ROM: exit 0', async () => {
    const r = await runChild(['synctest', '--rom', 'assets/spaceracer.ch8', '--frames', '120']);
    expect(r.stdout).toMatch(/synctest: OK, 120 frames/);
    expect(r.code).toBe(ExitCode.Ok);
  });

  it('an unknown command: usage, exit Usage', async () => {
    const r = await runChild(['nonsense']);
    expect(r.stderr).toMatch(/unknown command "nonsense"/);
    expect(r.code).toBe(ExitCode.Usage);
  });

  it('host, player and spectator as child processes: the player leaves, the spectator loses the host', async () => {
    // The host plays from its start: the joins' start-up (measured), the player's 2 s and margin.
    const seconds = hostSeconds(4, await startupMs());
    const host = spawnCli(
      [
        'host',
        '--rom',
        'assets/spaceracer.ch8',
        '--bind',
        '127.0.0.1',
        '--port',
        '0',
        '--bot',
        '--seconds',
        String(seconds),
      ],
      (seconds + 30) * 1000,
    );
    try {
      const port = (await host.waitFor(/hosting on udp 127\.0\.0\.1:(\d+)/))[1]!;
      const player = spawnCli(['join', `127.0.0.1:${port}`, '--bot', '--seconds', '2', '--nick', 'carol']);
      const watcher = spawnCli(['join', `127.0.0.1:${port}`, '--spectate', '--nick', 'dave']);
      try {
        expect(await player.exit).toBe(ExitCode.Ok);
        expect(player.stdout()).toMatch(/joined 127\.0\.0\.1:\d+ as carol \(P2\)/);
        expect(await host.exit).toBe(ExitCode.Ok);
        expect(host.stdout()).toMatch(/carol joined as P2/);
        expect(host.stdout()).toMatch(/dave joined as a spectator/);
        expect(await watcher.exit).toBe(ExitCode.PeerLost);
        expect(watcher.stderr()).toMatch(/the host was lost mid-game/);
      } finally {
        player.kill();
        watcher.kill();
      }
    } finally {
      host.kill();
    }
  });

  it('a host killed mid-game: the player gets PeerLost', async () => {
    const host = spawnCli(['host', '--rom', 'assets/spaceracer.ch8', '--bind', '127.0.0.1', '--port', '0', '--bot']);
    try {
      const port = (await host.waitFor(/hosting on udp 127\.0\.0\.1:(\d+)/))[1]!;
      const player = spawnCli(['join', `127.0.0.1:${port}`, '--bot']);
      try {
        await player.waitFor(/joined/);
        await new Promise((r) => setTimeout(r, 1000));
        host.kill();
        expect(await player.exit).toBe(ExitCode.PeerLost);
        // Either the transport's silence timeout ("the host was lost mid-game: …") or, first, the
        // rollback finality rule ending the game (`host-lost`: "the host was lost: …").
        expect(player.stderr()).toMatch(/the host was lost( mid-game)?: /);
      } finally {
        player.kill();
      }
    } finally {
      host.kill();
    }
  });
});

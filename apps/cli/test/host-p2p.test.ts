import { describe, expect, it } from 'vitest';
import { checkAgreement } from '../src/agreement.js';
import { ExitCode } from '../src/exit-codes.js';
import { hostSeconds, spawnCli, startupMs } from './child.js';
import { join_, printed, startHost } from './in-process.js';

describe.each(['lockstep-p2p', 'frame-advance'])('netplay host --mode %s', (mode) => {
  it('three players over UDP; one is killed mid-game, the host and the other play on and agree', async () => {
    // The join plays 9 s from the game's start, which waits for the victim's process start-up; the
    // host plays a fixed time from its own start, so it must hold that start-up (the machine's, not
    // the session's) and stop after the join: sized by a start-up measured here (a fixed 11 s ran out
    // first when the victim took over 2 s to start: the join lost its host, exit PeerLost).
    const startup = await startupMs();
    const host = startHost(['--mode', mode, '--players', '3'], hostSeconds(9, startup));
    const port = await host.port;
    const player = join_(port, ['--bot', '--seconds', '9', '--nick', 'ann', '--players', '3']);
    const victim = spawnCli(['join', `127.0.0.1:${port}`, '--bot', '--nick', 'vic', '--players', '3']);
    try {
      await victim.waitFor(new RegExp(`\\(P\\d\\), ${mode}`));
      await printed(host.io, /all players are in/);
      await new Promise((r) => setTimeout(r, 1000));
      victim.kill();
      const code = await victim.exit;
      expect(code, `${victim.stdout()}\n${victim.stderr()}\n${host.io.stdout.join('')}`).toBe(null); // killed by the signal
      // The UDP transport notices the silence after its disconnect timeout (5 s by default).
      await printed(host.io, /vic left \(P\d; the game goes on without it\)/, 10_000);
      expect(await player.done).toBe(ExitCode.Ok);
      expect(await host.done).toBe(ExitCode.Ok);
      expect(player.io.stdout.join('')).toMatch(new RegExp(`as ann \\(P\\d\\), ${mode}`));
      const a = checkAgreement([host.finals()!, player.finals()!]);
      expect(a.compared).toBeGreaterThan(10);
      expect(a.differing).toBe(0);
      // Lockstep stalls everyone until the host sees the leave (up to the 5 s disconnect timeout);
      // then the game goes on without the victim: well past the frames of the first seconds.
      expect(player.finals()!.last).toBeGreaterThan(240);
    } finally {
      victim.kill();
    }
  }, 60_000);

  it('a spectator watches and agrees with the host and the player; the players are not disturbed', async () => {
    const host = startHost(['--mode', mode], 4);
    const port = await host.port;
    const player = join_(port, ['--bot', '--seconds', '2.5']);
    await printed(player.io, /joined/);
    const watcher = join_(port, ['--spectate', '--nick', 'eve']);
    await printed(watcher.io, /as eve \(a spectator\)/);
    expect(await player.done).toBe(ExitCode.Ok);
    expect(await host.done).toBe(ExitCode.Ok);
    // The spectator loses its host when the host stops: documented as PeerLost.
    expect(await watcher.done).toBe(ExitCode.PeerLost);
    expect(host.io.stdout.join('')).toMatch(/eve joined as a spectator/);
    const a = checkAgreement([host.finals()!, player.finals()!, watcher.finals()!]);
    expect(a.compared).toBeGreaterThan(10);
    expect(a.differing).toBe(0);
    expect(a.agree).toBe(true);
    // The spectator's own finals, pair by pair: it watched seconds of the game (not a handful of
    // frames the others happen to share), and every frame it holds is the host's and the player's.
    for (const other of [host.finals()!, player.finals()!]) {
      const pair = checkAgreement([watcher.finals()!, other]);
      expect(pair.compared, `spectator vs ${other.name}`).toBeGreaterThan(60);
      expect(pair.differing, `spectator vs ${other.name}`).toBe(0);
      expect(pair.agree, `spectator vs ${other.name}`).toBe(true);
    }
  }, 20_000);
});

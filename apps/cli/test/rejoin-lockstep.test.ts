import { describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';
import { startupMs } from './child.js';
import { compareFinals, finalsScope, output, readFinals } from './finals-scope.js';

// The lockstep helper's CLI end-to-end tests (issue 15): real `netplay host` / `netplay join`
// processes over UDP on loopback. A spectator joins a running lockstep-cs game; a frame-advance
// and a lockstep-p2p join are killed and restarted with their nick. At the end every `--finals` file (the CRC-32 of each
// final frame's state) is compared with the others', read by the documented format, not by the
// code that writes it.

const { cli, finalsPath } = finalsScope('netplay-cli-rejoin-lockstep-');

describe('netplay host --mode lockstep-cs: a spectator joins mid-game', () => {
  it('it gets the running game from its entry frame, and its final frames agree with the host and the player', async () => {
    const host = cli([
      'host',
      '--mode',
      'lockstep-cs',
      '--players',
      '2',
      '--bind',
      '127.0.0.1',
      '--port',
      '0',
      '--bot',
      '--seconds',
      '15',
      '--finals',
      finalsPath('host'),
    ]);
    const port = (await host.waitFor(/hosting on udp 127\.0\.0\.1:(\d+)/))[1]!;
    const target = `127.0.0.1:${port}`;
    // The join and the spectator run until the host stops (then they lose it: exit PeerLost, files written).
    const ann = cli(['join', target, '--bot', '--nick', 'ann', '--players', '2', '--finals', finalsPath('ann')]);
    await ann.waitFor(/joined 127\.0\.0\.1:\d+ as ann \(P2\), lockstep-cs/);
    await new Promise((r) => setTimeout(r, 1500));
    const watcher = cli([
      'join',
      target,
      '--spectate',
      '--nick',
      'sam',
      '--players',
      '2',
      '--finals',
      finalsPath('sam'),
    ]);
    await watcher.waitFor(/joined 127\.0\.0\.1:\d+ as sam \(a spectator\), lockstep-cs/, 10_000);
    await host.waitFor(/sam joined as a spectator/);
    expect(await host.exit, output(host)).toBe(ExitCode.Ok);
    expect(await watcher.exit, output(watcher)).toBe(ExitCode.PeerLost);
    expect(await ann.exit, output(ann)).toBe(ExitCode.PeerLost);

    const h = readFinals(finalsPath('host'));
    const a = readFinals(finalsPath('ann'));
    const s = readFinals(finalsPath('sam'));
    const entry = Math.min(...s.keys());
    console.log(`finals: host ${h.size}, ann ${a.size}, spectator ${s.size} (from frame ${entry})`);
    // It joined a running game (not frame 0), and its state at its entry frame is the host's.
    expect(entry).toBeGreaterThan(60);
    expect(s.get(entry)).toBe(h.get(entry));
    // Seconds of watching at 60 fps: well over 100 frames, all equal to the host's and the player's.
    expect(s.size, output(watcher)).toBeGreaterThan(100);
    for (const [name, x, y] of [
      ['host vs ann', h, a],
      ['host vs spectator', h, s],
      ['ann vs spectator', a, s],
    ] as const) {
      const c = compareFinals(x, y);
      expect(c.differing, name).toEqual([]);
      expect(c.common, name).toBeGreaterThan(100);
    }
  }, 90_000);
});

describe.each(['frame-advance', 'lockstep-p2p'] as const)(
  'netplay host --mode %s --players 3: a killed join comes back',
  (mode) => {
    it('restarted with the same nick, it is back in its slot within 3 s; all three agree at the end', async () => {
      // The host plays a fixed time from its start, which must hold the joins' start-up, 1.5 s of
      // play, the restart's start-up and seconds of play after it: sized by a start-up measured here
      // (6 s of play and three start-ups: 12 s on an idle machine, as before).
      const startup = await startupMs();
      const host = cli([
        'host',
        '--mode',
        mode,
        '--players',
        '3',
        '--bind',
        '127.0.0.1',
        '--port',
        '0',
        '--bot',
        '--seconds',
        String(Math.ceil(6 + (3 * startup) / 1000)),
        '--finals',
        finalsPath(`${mode}-host`),
      ]);
      const port = (await host.waitFor(/hosting on udp 127\.0\.0\.1:(\d+)/))[1]!;
      const target = `127.0.0.1:${port}`;
      const ann = cli([
        'join',
        target,
        '--bot',
        '--nick',
        'ann',
        '--players',
        '3',
        '--finals',
        finalsPath(`${mode}-ann`),
      ]);
      const vic = cli(['join', target, '--bot', '--nick', 'vic', '--players', '3']);
      const slot = (await vic.waitFor(new RegExp(`joined 127\\.0\\.0\\.1:\\d+ as vic \\(P(\\d)\\), ${mode}`)))[1]!;
      await ann.waitFor(new RegExp(`as ann \\(P\\d\\), ${mode}`));
      await host.waitFor(/all players are in/);
      await new Promise((r) => setTimeout(r, 1500));
      vic.kill();
      expect(await vic.exit).toBe(null); // killed by the signal

      const restartedAt = Date.now();
      const back = cli([
        'join',
        target,
        '--bot',
        '--nick',
        'vic',
        '--players',
        '3',
        '--finals',
        finalsPath(`${mode}-vic`),
      ]);
      await host.waitFor(new RegExp(`vic is back as P${slot}`), 10_000);
      const backAt = Date.now() - restartedAt;
      await back.waitFor(new RegExp(`joined 127\\.0\\.0\\.1:\\d+ as vic \\(P${slot}\\), ${mode}`), 10_000);
      console.log(
        `${mode} rejoin: host saw "vic is back as P${slot}" ${backAt} ms after the restart (a process start-up: ${startup} ms)`,
      );
      // Less the machine's process start-up measured in this run: the old connection is replaced at
      // admission (same nick and address, silent), not left to the transport's 5 s disconnect timeout.
      expect(backAt - startup, output(host, back)).toBeLessThan(3000);
      expect(host.stdout()).toMatch(
        /vic left \(P\d; the game goes on without it\): closed: replaced: vic reconnected from the same address/,
      );

      expect(await host.exit, output(host)).toBe(ExitCode.Ok);
      expect(await back.exit, output(back)).toBe(ExitCode.PeerLost);
      expect(await ann.exit, output(ann)).toBe(ExitCode.PeerLost);

      const h = readFinals(finalsPath(`${mode}-host`));
      const a = readFinals(finalsPath(`${mode}-ann`));
      const v = readFinals(finalsPath(`${mode}-vic`));
      const entry = Math.min(...v.keys());
      console.log(`finals: host ${h.size}, ann ${a.size}, vic from frame ${entry}: ${v.size}`);
      expect(entry).toBeGreaterThan(60);
      expect(v.get(entry)).toBe(h.get(entry));
      // Every frame two peers both cover is final on both and agrees; the game went on past the
      // re-entry (more than a second of frames: how many more is the machine's speed).
      for (const [name, x, y] of [
        ['host vs ann', h, a],
        ['host vs vic', h, v],
        ['ann vs vic', a, v],
      ] as const) {
        const c = compareFinals(x, y);
        expect(c.differing, name).toEqual([]);
        expect(c.common, name).toBe(c.span);
        expect(c.last - entry, name).toBeGreaterThan(60);
      }
    }, 90_000);
  },
);

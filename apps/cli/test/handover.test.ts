import { describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';
import { finalsScope, output, readFinals } from './finals-scope.js';

// Issue 15's host hand-over, end to end: real `netplay host` / `netplay join` processes over UDP
// on loopback, rollback with 3 players (the joins link to each other directly, the host's
// default). The host process is killed (SIGKILL: no goodbye); the two joins notice it, elect a new
// host and play on. Their `--finals` files (read by the documented format) agree on every frame
// both hold, and reach well past the frame where the host was lost. No timing is asserted beyond
// generous bounds: the hand-over waits for the transport's and the scheduler's disconnect timeouts.

const { cli, finalsPath } = finalsScope('netplay-cli-handover-');

describe('netplay host (rollback) --players 3: the host is killed', () => {
  it('the two joins play on under the new host and their final frames agree', async () => {
    const host = cli(['host', '--players', '3', '--bind', '127.0.0.1', '--port', '0', '--bot', '--nick', 'hal']);
    const port = (await host.waitFor(/hosting on udp 127\.0\.0\.1:(\d+)/))[1]!;
    const target = `127.0.0.1:${port}`;
    const joinArgs = (nick: string) => [
      'join',
      target,
      '--bot',
      '--nick',
      nick,
      '--players',
      '3',
      '--seconds',
      '20',
      '--finals',
      finalsPath(nick),
    ];
    const ann = cli(joinArgs('ann'));
    const bob = cli(joinArgs('bob'));
    await host.waitFor(/all players are in/);
    await ann.waitFor(/joined 127\.0\.0\.1:\d+ as ann \(P\d\), rollback, host hal/);
    await bob.waitFor(/joined 127\.0\.0\.1:\d+ as bob \(P\d\), rollback, host hal/);
    await new Promise((r) => setTimeout(r, 1500));
    host.kill();
    expect(await host.exit).toBe(null); // killed by the signal

    // Both learn it and follow one new host (the lower slot of the two).
    const [, annNew, annFrame] = await ann.waitFor(
      /host left: (?:you \()?(\w+)\)? (?:is|are) the new host from frame (\d+)/,
      30_000,
    );
    const [, bobNew] = await bob.waitFor(
      /host left: (?:you \()?(\w+)\)? (?:is|are) the new host from frame (\d+)/,
      30_000,
    );
    expect(annNew).toBe(bobNew);
    expect(await ann.exit, output(ann)).toBe(ExitCode.Ok);
    expect(await bob.exit, output(bob)).toBe(ExitCode.Ok);

    const a = readFinals(finalsPath('ann'));
    const b = readFinals(finalsPath('bob'));
    let common = 0;
    let last = -1;
    const differing: number[] = [];
    for (const [f, h] of a) {
      const o = b.get(f);
      if (o === undefined) continue;
      common++;
      last = Math.max(last, f);
      if (o !== h) differing.push(f);
    }
    console.log(
      `hand-over to ${annNew} at frame ${annFrame}; finals: ann ${a.size}, bob ${b.size}, common ${common}, last ${last}`,
    );
    expect(differing, 'ann vs bob').toEqual([]);
    // They played on after the hand-over (at least a second of frames, both final on both).
    expect(last, output(ann, bob)).toBeGreaterThan(Number(annFrame) + 60);
  }, 60_000);
});

import { describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';
import { hostSeconds, startupMs } from './child.js';
import { compareFinals, finalsScope, output, readFinals } from './finals-scope.js';

// Issue 15, coming back after a hand-over, end to end: real `netplay host` / `netplay join`
// processes over UDP on loopback, rollback with 4 players (the joins link to each other directly,
// the default). The host's `--seconds` run out, so the three joins elect a new host and play on.
// Then one of the others is frozen (SIGSTOP) past the 5 s disconnect time and thawed (SIGCONT):
// its connection is lost, and it must get back in at the new host by itself (its `rejoinTarget`)
// and play on; every pair's `--finals` files agree on every frame both hold. No timing is asserted
// beyond generous bounds sized from this machine's process start-up.

const { cli, finalsPath } = finalsScope('netplay-cli-handover-rejoin-');

const NEW_HOST = /host left: (?:you \()?(\w+)\)? (?:is|are) the new host from frame (\d+)/;

describe('netplay join (rollback, links): its connection drops after a hand-over', () => {
  it('it rejoins the new host by itself, back in its slot, and its final frames agree', async () => {
    const startup = await startupMs();
    // The host holds the joins' start-up and 2 s of play, then leaves (a hand-over).
    const host = cli([
      'host',
      '--players',
      '4',
      '--bind',
      '127.0.0.1',
      '--port',
      '0',
      '--bot',
      '--nick',
      'hal',
      '--seconds',
      String(hostSeconds(2, startup, 2)),
    ]);
    const port = (await host.waitFor(/hosting on udp 127\.0\.0\.1:(\d+)/))[1]!;
    const target = `127.0.0.1:${port}`;
    // The joins play long enough for the hand-over, a 7 s freeze, the rejoin and seconds after it,
    // then each leaves (its --seconds: a local quit; the last one left is the host then).
    const joinSeconds = Math.ceil(24 + (2 * startup) / 1000);
    const joinArgs = (nick: string) => [
      'join',
      target,
      '--bot',
      '--nick',
      nick,
      '--players',
      '4',
      '--seconds',
      String(joinSeconds),
      '--finals',
      finalsPath(nick),
    ];
    const timeout = (joinSeconds + 30) * 1000;
    const nicks = ['ann', 'bob', 'cy'] as const;
    const joins = new Map(nicks.map((n) => [n, cli(joinArgs(n), timeout)]));
    const slots = new Map<string, string>();
    for (const [n, c] of joins)
      slots.set(n, (await c.waitFor(new RegExp(`as ${n} \\(P(\\d)\\), rollback, host hal`)))[1]!);
    await host.waitFor(/all players are in/);
    expect(await host.exit, output(host)).toBe(ExitCode.Ok);

    // Every join follows one new host.
    const elected = new Set<string>();
    for (const c of joins.values()) elected.add((await c.waitFor(NEW_HOST, 30_000))[1]!);
    expect(elected.size, output(...joins.values())).toBe(1);
    const newHost = [...elected][0]!;
    // Freeze one of the others past the disconnect time (5 s), then let it go on.
    const victimNick = nicks.find((n) => n !== newHost)!;
    const victim = joins.get(victimNick)!;
    victim.process.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 7000));
    victim.process.kill('SIGCONT');
    const [, backSlot, entry, backHost] = await victim.waitFor(
      /back in the game as P(\d) at frame (\d+), host (\w+)/,
      25_000,
    );
    // It said what it was doing (the host it followed last, on its own, may be another one it
    // tries first: see README), and came back to the host the others follow, in its slot.
    expect(victim.stdout()).toMatch(/lost the connection to the game \(.*\); rejoining \w+ at 127\.0\.0\.1:\d+ as P\d/);
    expect(backHost).toBe(newHost);
    expect(backSlot).toBe(slots.get(victimNick));

    for (const [n, c] of joins) expect(await c.exit, `${n}: ${output(c)}`).toBe(ExitCode.Ok);

    const finals = new Map(nicks.map((n) => [n, readFinals(finalsPath(n))]));
    const v = finals.get(victimNick)!;
    const entryFrame = Number(entry);
    const afterEntry = [...v.keys()].filter((f) => f >= entryFrame);
    console.log(
      `hand-over to ${newHost}; ${victimNick} (P${backSlot}) back at frame ${entryFrame}; finals: ${nicks
        .map((n) => `${n} ${finals.get(n)!.size}`)
        .join(', ')}, ${victimNick} after its entry ${afterEntry.length}\n${victim
        .stdout()
        .split('\n')
        .filter((l) => /rejoin|lost the connection|back in the game/.test(l))
        .join('\n')}`,
    );
    // The rejoined incarnation recorded frames past its entry (more than a second of them).
    expect(afterEntry.length, output(victim)).toBeGreaterThan(60);
    for (let i = 0; i < nicks.length; i++)
      for (let j = i + 1; j < nicks.length; j++) {
        const a = nicks[i]!;
        const b = nicks[j]!;
        const c = compareFinals(finals.get(a)!, finals.get(b)!);
        expect(c.differing, `${a} vs ${b}`).toEqual([]);
        // The two that never dropped hold every frame they both cover; the rejoined one has a gap
        // (from its last final frame before the freeze to its entry), so only agreement counts.
        if (a !== victimNick && b !== victimNick) expect(c.common, `${a} vs ${b}`).toBe(c.span);
        else expect(c.common, `${a} vs ${b}`).toBeGreaterThan(afterEntry.length / 2);
      }
  }, 150_000);
});

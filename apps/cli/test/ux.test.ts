// What a person sees (issue 15, item 5): --version, the host's friend addresses, the default ROM,
// the keys lines of bot hosts and spectators, the order of the host's events, join's wait for
// players (Q and Ctrl-C leave it), and lockstep-cs stalls.
import { readFileSync } from 'node:fs';
import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import type { NetplayHost } from '@netplay/session';
import { describe, expect, it } from 'vitest';
import { friendAddresses, friendLines, type Interfaces } from '../src/addresses.js';
import { runCli, USAGE } from '../src/cli.js';
import { ExitCode } from '../src/exit-codes.js';
import { type CliIo, memoryIo } from '../src/io.js';
import { spawnCli } from './child.js';
import { join_, printed, spaceRacer, startHost } from './in-process.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

function nif(address: string, family: 'IPv4' | 'IPv6', internal = false): NetworkInterfaceInfo {
  return family === 'IPv4'
    ? { address, family, internal, netmask: '255.255.255.0', mac: '00:00:00:00:00:00', cidr: null }
    : { address, family, internal, netmask: 'ffff::', mac: '00:00:00:00:00:00', cidr: null, scopeid: 0 };
}

const FAKE_INTERFACES: Interfaces = {
  lo: [nif('127.0.0.1', 'IPv4', true), nif('::1', 'IPv6', true)],
  eth0: [nif('192.168.1.20', 'IPv4'), nif('fe80::1', 'IPv6')],
  wlan0: [nif('10.0.0.7', 'IPv4'), nif('2001:db8::5', 'IPv6')],
};

/** A memory io that says it is a terminal (live redraws). */
function liveIo(signal?: AbortSignal): CliIo & { stdout: string[]; stderr: string[] } {
  return { ...memoryIo(signal), live: true };
}

/** A fake raw-mode terminal stdin; `feed` types into it once a command reads it. */
function fakeTerminal() {
  const t = {
    modes: [] as boolean[],
    feed: undefined as ((chunk: string) => void) | undefined,
    stdin: {
      isTTY: true,
      setRawMode: (m: boolean) => t.modes.push(m),
      setEncoding: () => {},
      on: (_e: 'data', fn: (chunk: string) => void) => {
        t.feed = fn;
      },
      off: () => {
        t.feed = undefined;
      },
      resume: () => {},
      pause: () => {},
    },
  };
  return t;
}

describe('netplay --version', () => {
  it('--version, -V and version print the package version; the usage mentions it', async () => {
    for (const flag of ['--version', '-V', 'version']) {
      const io = memoryIo();
      expect(await runCli([flag], io)).toBe(ExitCode.Ok);
      expect(io.stdout.join('')).toBe(`netplay ${pkg.version}\n`);
    }
    expect(USAGE).toMatch(/netplay --version \(-V\)/);
  });
});

describe('the addresses a friend can use', () => {
  it('0.0.0.0: every non-loopback IPv4 address; :: adds global IPv6 (not link-local); loopback: none', () => {
    expect(friendAddresses('0.0.0.0', FAKE_INTERFACES).map((a) => a.address)).toEqual(['192.168.1.20', '10.0.0.7']);
    expect(friendAddresses('::', FAKE_INTERFACES).map((a) => a.address)).toEqual([
      '192.168.1.20',
      '10.0.0.7',
      '2001:db8::5',
    ]);
    expect(friendAddresses('127.0.0.1', FAKE_INTERFACES)).toEqual([]);
    expect(friendAddresses('10.0.0.7', FAKE_INTERFACES)).toEqual([
      { address: '10.0.0.7', family: 'IPv4', interface: 'wlan0' },
    ]);
    const lines = friendLines('::', 7845, 'UDP', ' --rom x.ch8', FAKE_INTERFACES).join('\n');
    expect(lines).toMatch(/netplay join 192\.168\.1\.20:7845 --rom x\.ch8 +\(eth0, IPv4\)/);
    expect(lines).toMatch(/netplay join \[2001:db8::5\]:7845 --rom x\.ch8 +\(wlan0, IPv6\)/);
    expect(lines).toMatch(/forward UDP port 7845 on your router to 192\.168\.1\.20 \(NAT\)/);
    expect(friendLines('127.0.0.1', 9, 'TCP', '').join('\n')).toMatch(/only this machine can join/);
    expect(friendLines('0.0.0.0', 9, 'UDP', '', { lo: FAKE_INTERFACES.lo }).join('\n')).toMatch(
      /no network interface but loopback/,
    );
  });

  it('netplay host on 0.0.0.0 prints a join line for every non-loopback interface of this machine, and the NAT line', async () => {
    const io = memoryIo();
    let port = 0;
    const done = runCli(['host', '--port', '0', '--bot', '--seconds', '0.3'], io, {
      host: { onListening: (p) => (port = p) },
    });
    expect(await done, io.stderr.join('')).toBe(ExitCode.Ok);
    const out = io.stdout.join('');
    const real = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .filter((i) => !i.internal && i.family === 'IPv4');
    for (const i of real) expect(out).toContain(`netplay join ${i.address}:${port}`);
    if (real.length > 0) expect(out).toMatch(new RegExp(`forward UDP port ${port} on your router`));
    else expect(out).toMatch(/no network interface but loopback/);
  });

  it('the injected interfaces are what the host lists', async () => {
    const io = memoryIo();
    const code = await runCli(['host', '--port', '0', '--bot', '--seconds', '0.3', '--transport', 'ws'], io, {
      host: { interfaces: FAKE_INTERFACES },
    });
    expect(code).toBe(ExitCode.Ok);
    const out = io.stdout.join('');
    expect(out).toMatch(/netplay join 192\.168\.1\.20:\d+ --transport ws +\(eth0, IPv4\)/);
    expect(out).toMatch(/netplay join 10\.0\.0\.7:\d+ --transport ws +\(wlan0, IPv4\)/);
    expect(out).not.toMatch(/127\.0\.0\.1:\d+ --transport ws +\(/);
    expect(out).toMatch(/forward TCP port \d+ on your router/);
  });
});

describe('netplay host without --rom', () => {
  it('hosts the embedded Space Racer; a join without --rom plays it (same content)', async () => {
    const io = memoryIo();
    let resolvePort: (p: number) => void = () => {};
    const port = new Promise<number>((r) => {
      resolvePort = r;
    });
    const host = runCli(['host', '--bind', '127.0.0.1', '--port', '0', '--bot', '--seconds', '3'], io, {
      host: { onListening: resolvePort },
    });
    const player = join_(await port, ['--bot', '--seconds', '1']);
    expect(await player.done, player.io.stderr.join('')).toBe(ExitCode.Ok);
    expect(await host).toBe(ExitCode.Ok);
    expect(io.stdout.join('')).toMatch(/hosting on udp 127\.0\.0\.1:\d+: join with "netplay join HOST:\d+"/);
    expect(player.io.stdout.join('')).toMatch(/joined .* as player \(P2\)/);
    // --core still needs a ROM.
    const bad = memoryIo();
    expect(await runCli(['host', '--core', 'nestopia'], bad)).toBe(ExitCode.Usage);
    expect(bad.stderr.join('')).toMatch(/--core nestopia needs --rom FILE/);
  });
});

describe('keys lines', () => {
  it('a --bot host does not advertise Q (it reads no keyboard); a spectator is labelled and shown no player keys', async () => {
    const hostIo = liveIo();
    let resolvePort: (p: number) => void = () => {};
    const port = new Promise<number>((r) => {
      resolvePort = r;
    });
    const host = runCli(
      ['host', '--rom', spaceRacer, '--bind', '127.0.0.1', '--port', '0', '--bot', '--seconds', '3'],
      hostIo,
      { host: { onListening: resolvePort } },
    );
    const p = await port;
    const player = join_(p, ['--bot', '--seconds', '2']);
    const watcherIo = liveIo();
    const term = fakeTerminal();
    const watcher = runCli(['join', `127.0.0.1:${p}`, '--spectate', '--nick', 'eve'], watcherIo, {
      join: { stdin: term.stdin },
    });
    expect(await player.done).toBe(ExitCode.Ok);
    await printed(watcherIo, /you are a spectator/);
    term.feed?.('q'); // the spectator's Q works: it leaves
    expect(await watcher).toBe(ExitCode.Ok);
    expect(await host).toBe(ExitCode.Ok);
    const hostOut = hostIo.stdout.join('');
    expect(hostOut).toMatch(/a bot plays P1: Ctrl-C to stop/);
    expect(hostOut).not.toMatch(/Q to quit/);
    const watcherOut = watcherIo.stdout.join('');
    expect(watcherOut).toMatch(/as eve \(a spectator\)/);
    expect(watcherOut).toMatch(/you are a spectator \(no player keys\): Q or Ctrl-C to leave/);
    expect(watcherOut).not.toMatch(/Space\/J|W\/S\/A\/D/);
    expect(term.modes).toEqual([true, false]);
  });
});

describe("the host's event lines", () => {
  it.each([
    ['rollback', 2],
    ['rollback', 3],
    ['lockstep-cs', 2],
  ] as const)('--mode %s, %i players: "all players are in" comes after the last "joined"', async (mode, players) => {
    const host = startHost(['--mode', mode, '--players', String(players)], 3);
    const port = await host.port;
    const joiners = Array.from({ length: players - 1 }, (_, i) =>
      join_(port, ['--bot', '--seconds', '1', '--nick', `p${i + 2}`, '--players', String(players)]),
    );
    for (const j of joiners) expect(await j.done, j.io.stderr.join('')).toBe(ExitCode.Ok);
    expect(await host.done).toBe(ExitCode.Ok);
    const out = host.io.stdout.join('');
    const lastJoined = Math.max(...joiners.map((_, i) => out.indexOf(`p${i + 2} joined as P`)));
    const allIn = out.indexOf('all players are in');
    expect(lastJoined, out).toBeGreaterThan(0);
    expect(allIn, out).toBeGreaterThan(lastJoined);
  });

  it('lockstep-cs with 3 players starts with the first joiner and says so (not "all players are in")', async () => {
    const host = startHost(['--mode', 'lockstep-cs', '--players', '3'], 2);
    const port = await host.port;
    const j = join_(port, ['--bot', '--seconds', '1', '--nick', 'solo', '--players', '3']);
    expect(await j.done).toBe(ExitCode.Ok);
    expect(await host.done).toBe(ExitCode.Ok);
    const out = host.io.stdout.join('');
    expect(out).toMatch(
      /solo joined as P2\nthe game starts at frame 0 with 2 of 3 players \(lockstep-cs: the others join while it runs\)/,
    );
    expect(out).not.toMatch(/all players are in/);
  });
});

describe('netplay join while the host waits for players', () => {
  it('shows how many are in and missing; Ctrl-C (io.signal) leaves at once with exit Ok and a message; the host sees it leave', async () => {
    const host = startHost(['--players', '3'], 6);
    const port = await host.port;
    const abort = new AbortController();
    const io = memoryIo(abort.signal);
    const started = Date.now();
    const done = runCli(['join', `127.0.0.1:${port}`, '--bot', '--nick', 'early', '--players', '3'], io);
    await printed(
      io,
      /waiting for players at 127\.0\.0\.1:\d+: 2 of 3 in \(the host, you\), 1 missing; Ctrl-C to leave/,
    );
    abort.abort();
    expect(await done).toBe(ExitCode.Ok);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(io.stdout.join('')).toMatch(/join: left before the game started \(2 of 3 players were in\)/);
    await printed(host.io, /early left/);
    expect(host.io.stdout.join('')).toMatch(/waiting for players: host \(P1\) in; 2 missing/);
    await host.done;
  });

  it('Q on the keyboard leaves while waiting (exit Ok, raw mode restored)', async () => {
    const host = startHost(['--players', '3'], 4);
    const port = await host.port;
    const term = fakeTerminal();
    const io = memoryIo();
    const done = runCli(['join', `127.0.0.1:${port}`, '--players', '3'], io, { join: { stdin: term.stdin } });
    await printed(io, /2 of 3 in .*1 missing; Q or Ctrl-C to leave/);
    expect(io.stderr.join('')).toBe('');
    term.feed?.('q');
    expect(await done).toBe(ExitCode.Ok);
    expect(io.stdout.join('')).toMatch(/left before the game started/);
    expect(term.modes).toEqual([true, false]);
    await host.done;
  });

  it("a join whose --players differs from the host's slots says so while it waits", async () => {
    const host = startHost(['--players', '3'], 3);
    const port = await host.port;
    const abort = new AbortController();
    const io = memoryIo(abort.signal);
    const done = runCli(['join', `127.0.0.1:${port}`, '--bot'], io);
    await printed(io, /2 of 3 in/);
    expect(io.stderr.join('')).toMatch(
      /the host has 3 player slots but this join has --players 2: .* join again with --players 3/,
    );
    abort.abort();
    expect(await done).toBe(ExitCode.Ok);
    await host.done;
  });

  it('a real process: the first Ctrl-C (SIGINT) while waiting ends it cleanly with exit Interrupted (130)', async () => {
    const host = startHost(['--players', '3'], 8);
    const port = await host.port;
    const child = spawnCli(['join', `127.0.0.1:${port}`, '--bot', '--players', '3'], 20_000);
    try {
      await child.waitFor(/waiting for players/);
      child.process.kill('SIGINT');
      expect(await child.exit).toBe(ExitCode.Interrupted);
      expect(child.stdout()).toMatch(/join: left before the game started/);
      expect(child.stderr()).not.toMatch(/internal error/);
    } finally {
      child.kill();
    }
    await host.done;
  });
});

describe('lockstep-cs stalls', () => {
  it("the host's stall count stays 0 on loopback: its frames never wait for inputs (they ran late only by the timer)", async () => {
    let host: NetplayHost | undefined;
    const io = memoryIo();
    let resolvePort: (p: number) => void = () => {};
    const port = new Promise<number>((r) => {
      resolvePort = r;
    });
    const run = runCli(
      [
        'host',
        '--rom',
        spaceRacer,
        '--mode',
        'lockstep-cs',
        '--bind',
        '127.0.0.1',
        '--port',
        '0',
        '--bot',
        '--seconds',
        '3',
      ],
      io,
      { host: { onListening: resolvePort, onHost: (h) => (host = h) } },
    );
    const player = join_(await port, ['--bot', '--seconds', '2']);
    await printed(player.io, /joined/);
    const report = async () => {
      for (;;) {
        const r = host!.lockstepReport();
        if (r !== undefined && r.frames >= 100) return r;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    expect((await report()).stalls).toBe(0);
    expect(await player.done).toBe(ExitCode.Ok);
    expect(await run).toBe(ExitCode.Ok);
    expect(io.stdout.join('')).toMatch(/ stalls +0 \(0 ms\)/);
  });
});

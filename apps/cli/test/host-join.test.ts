import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NetplayHost } from '@netplay/session';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAgreement, type FinalStates } from '../src/agreement.js';
import { runCli } from '../src/cli.js';
import { ExitCode } from '../src/exit-codes.js';
import { memoryIo } from '../src/io.js';
import { spawnCli } from './child.js';
import { join_, printed, spaceRacer, startHost } from './in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'netplay-cli-host-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('netplay host / join in-process', () => {
  it('a host, a player and a spectator play over UDP on loopback and agree on every final frame', async () => {
    const host = startHost(['--password', 'sesame'], 6);
    const port = await host.port;
    const player = join_(port, ['--bot', '--seconds', '3', '--nick', 'alice', '--password', 'sesame']);
    const watcher = join_(port, ['--spectate', '--nick', 'bob', '--password', 'sesame']);
    expect(await player.done).toBe(ExitCode.Ok);
    expect(await host.done).toBe(ExitCode.Ok);
    // The spectator loses its host when the host stops: documented as PeerLost.
    expect(await watcher.done).toBe(ExitCode.PeerLost);
    expect(watcher.io.stderr.join('')).toMatch(/the host was lost mid-game/);
    expect(player.io.stdout.join('')).toMatch(/joined 127\.0\.0\.1:\d+ as alice \(P2\), rollback/);
    expect(watcher.io.stdout.join('')).toMatch(/as bob \(a spectator\)/);
    const hostOut = host.io.stdout.join('');
    expect(hostOut).toMatch(/alice joined as P2/);
    expect(hostOut).toMatch(/bob joined as a spectator/);
    expect(hostOut).toMatch(/alice left \(P2; the game goes on without it\)/);
    const peers = [host.finals()!, player.finals()!, watcher.finals()!];
    const a = checkAgreement(peers);
    expect(a.frame).toBeGreaterThan(30);
    expect(a.differing).toBe(0);
    expect(a.agree).toBe(true);
  });

  it('--players 3: two joiners with the same nick are renamed, and all three agree', async () => {
    const host = startHost(['--players', '3'], 5);
    const port = await host.port;
    const a = join_(port, ['--bot', '--seconds', '2.5', '--nick', 'sam', '--players', '3']);
    const b = join_(port, ['--bot', '--seconds', '2.5', '--nick', 'sam', '--players', '3']);
    expect(await a.done).toBe(ExitCode.Ok);
    expect(await b.done).toBe(ExitCode.Ok);
    expect(await host.done, `${host.io.stdout.join('')}${host.io.stderr.join('')}`).toBe(ExitCode.Ok);
    const joined = `${a.io.stdout.join('')}${b.io.stdout.join('')}`;
    expect(joined).toMatch(/as sam \(P[23]\)/);
    expect(joined).toMatch(/as sam \(2\) \(P[23]\)/);
    const agreement = checkAgreement([host.finals()!, a.finals()!, b.finals()!]);
    expect(agreement.frame).toBeGreaterThan(30);
    expect(agreement.agree).toBe(true);
  });

  it('a wrong password is refused (exit PasswordRefused) and the game goes on for the others', async () => {
    const host = startHost(['--password', 'sesame'], 4);
    const port = await host.port;
    const intruder = join_(port, ['--password', 'guess']);
    expect(await intruder.done).toBe(ExitCode.PasswordRefused);
    expect(intruder.io.stderr.join('')).toMatch(/password refused/);
    const player = join_(port, ['--bot', '--seconds', '2.5', '--password', 'sesame']);
    await printed(player.io, /joined/);
    // A spectator with a wrong password is refused too, while the game runs.
    const peeker = join_(port, ['--spectate', '--password', 'guess']);
    expect(await peeker.done).toBe(ExitCode.PasswordRefused);
    expect(await player.done).toBe(ExitCode.Ok);
    expect(await host.done).toBe(ExitCode.Ok);
    expect(host.io.stdout.join('')).toMatch(/refused .*bad-password/);
    expect(player.finals()!.last).toBeGreaterThan(30);
  });

  it('a wrong ROM (exit ContentMismatch) and a full server (exit Full) are refused; the player keeps playing', async () => {
    const other = join(dir, 'other.ch8');
    writeFileSync(other, new Uint8Array([0x12, 0x00])); // jump to 0x200: a one-instruction loop
    const host = startHost([], 4);
    const port = await host.port;
    const wrongRom = join_(port, ['--rom', other]);
    expect(await wrongRom.done).toBe(ExitCode.ContentMismatch);
    expect(wrongRom.io.stderr.join('')).toMatch(/another ROM/);
    const player = join_(port, ['--bot', '--seconds', '2.5']);
    await printed(player.io, /joined/);
    const third = join_(port, ['--bot']);
    expect(await third.done).toBe(ExitCode.Full);
    expect(third.io.stderr.join('')).toMatch(/the host is full/);
    expect(await player.done).toBe(ExitCode.Ok);
    expect(await host.done).toBe(ExitCode.Ok);
    expect(player.finals()!.last).toBeGreaterThan(30);
  });

  it('a version mismatch is refused with exit VersionMismatch', async () => {
    const host = startHost([], 2);
    const port = await host.port;
    const io = memoryIo();
    const code = await runCli(['join', `127.0.0.1:${port}`], io, { join: { protocolVersion: 999 } });
    expect(code).toBe(ExitCode.VersionMismatch);
    expect(io.stderr.join('')).toMatch(/version mismatch/);
    expect(await host.done).toBe(ExitCode.Ok);
  });

  it('works over WebSocket too (--transport ws)', async () => {
    const host = startHost(['--transport', 'ws'], 4);
    const port = await host.port;
    const player = join_(port, ['--transport', 'ws', '--bot', '--seconds', '2']);
    expect(await player.done).toBe(ExitCode.Ok);
    expect(await host.done).toBe(ExitCode.Ok);
    expect(host.io.stdout.join('')).toMatch(/hosting on ws 127\.0\.0\.1:\d+/);
    const a = checkAgreement([host.finals()!, player.finals()!]);
    expect(a.frame).toBeGreaterThan(30);
    expect(a.agree).toBe(true);
  });

  it('--mode lockstep-cs: the session runs FCE Ultra client-server lockstep; sampled states agree', async () => {
    const host = startHost(['--mode', 'lockstep-cs'], 4);
    const port = await host.port;
    const player = join_(port, ['--bot', '--seconds', '2']);
    expect(await player.done).toBe(ExitCode.Ok);
    expect(await host.done).toBe(ExitCode.Ok);
    expect(player.io.stdout.join('')).toMatch(/\(P2\), lockstep-cs/);
    const a = checkAgreement([host.finals()!, player.finals()!]);
    expect(a.compared).toBeGreaterThan(10);
    expect(a.differing).toBe(0);
  });

  it('a busy port gives exit Network and says so', async () => {
    const sock = createSocket('udp4');
    await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
    const busy = sock.address().port;
    try {
      const io = memoryIo();
      const code = await runCli(['host', '--rom', spaceRacer, '--bind', '127.0.0.1', '--port', String(busy)], io);
      expect(code).toBe(ExitCode.Network);
      expect(io.stderr.join('')).toMatch(new RegExp(`port ${busy} is busy \\(EADDRINUSE\\)`));
    } finally {
      sock.close();
    }
  });

  it('no host: exit Network; bad address: exit Usage; bad ROM on host: exit BadRom', async () => {
    const sock = createSocket('udp4');
    await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
    const silent = sock.address().port;
    sock.close();
    const io = memoryIo();
    expect(await runCli(['join', 'nowhere'], io)).toBe(ExitCode.Usage);
    const bad = memoryIo();
    expect(await runCli(['host', '--rom', join(dir, 'nope.ch8')], bad)).toBe(ExitCode.BadRom);
    expect(bad.stderr.join('')).toMatch(/cannot read ROM/);
    const lonely = memoryIo();
    const code = await runCli(['join', `127.0.0.1:${silent}`], lonely);
    expect(code).toBe(ExitCode.Network);
    expect(lonely.stderr.join('')).toMatch(/cannot connect to 127\.0\.0\.1:\d+/);
  });
});

describe('a peer killed mid-game', () => {
  it('the host and the spectator keep running when the player process is killed', async () => {
    const stop = new AbortController();
    const hostIo = memoryIo(stop.signal);
    let session: NetplayHost | undefined;
    let hostFinals: FinalStates | undefined;
    let resolvePort: (port: number) => void = () => {};
    const portP = new Promise<number>((resolve) => {
      resolvePort = resolve;
    });
    const hostDone = runCli(['host', '--rom', spaceRacer, '--bind', '127.0.0.1', '--port', '0', '--bot'], hostIo, {
      host: {
        onListening: resolvePort,
        onHost: (h) => {
          session = h;
        },
        onFinals: (f) => {
          hostFinals = f;
        },
      },
    });
    hostDone.then(() => resolvePort(-1));
    const port = await portP;
    const watcher = join_(port, ['--spectate', '--nick', 'eve']);
    const player = spawnCli(['join', `127.0.0.1:${port}`, '--bot', '--nick', 'mallory']);
    try {
      await player.waitFor(/joined/);
      await new Promise((r) => setTimeout(r, 1000));
      player.kill();
      expect(await player.exit).toBe(null); // killed by the signal
      await printed(hostIo, /mallory left \(P2; the game goes on without it\)/);
      const leftAt = session!.frame;
      await new Promise((r) => setTimeout(r, 1500));
      stop.abort();
      expect(await hostDone).toBe(ExitCode.Ok);
      // The host went on simulating (and finalising frames) without the player.
      expect(session!.frame).toBeGreaterThan(leftAt + 30);
      expect(hostFinals!.last).toBeGreaterThan(leftAt);
      expect(await watcher.done).toBe(ExitCode.PeerLost);
      const a = checkAgreement([hostFinals!, watcher.finals()!]);
      expect(a.frame).toBeGreaterThan(leftAt);
      expect(a.agree).toBe(true);
    } finally {
      player.kill();
      stop.abort();
    }
  });
});

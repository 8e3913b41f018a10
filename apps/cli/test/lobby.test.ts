// netplay host --lobby / rooms / join --lobby against a real lobby node (startLobby, rooms in
// memory) in this process, on loopback: direct, through the lobby's WebSocket and UDP relay, and
// WebRTC through the lobby's signaling.
import { createServer } from 'node:net';
import { LobbyClient } from '@netplay/lobby';
import { type LobbyServer, startLobby } from '@netplay/lobby/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Interfaces, isPrivateAddress } from '../src/addresses.js';
import { checkAgreement, type FinalStates } from '../src/agreement.js';
import { runCli } from '../src/cli.js';
import { ExitCode } from '../src/exit-codes.js';
import { memoryIo } from '../src/io.js';
import { directEndpoints, reachabilityLines, wantsRelay } from '../src/lobby-host.js';
import { printed, spaceRacer } from './in-process.js';

let lobby: LobbyServer;
beforeAll(async () => {
  lobby = await startLobby({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await lobby.close();
});

/** Starts `netplay host --lobby URL --bot` in-process on loopback; resolves the room id it printed. */
function hostOnLobby(args: string[], seconds: number) {
  const io = memoryIo();
  let finals: FinalStates | undefined;
  const done = runCli(
    [
      'host',
      '--rom',
      spaceRacer,
      '--bind',
      '127.0.0.1',
      '--port',
      '0',
      '--bot',
      '--seconds',
      String(seconds),
      '--lobby',
      lobby.url,
      ...args,
    ],
    io,
    { host: { onFinals: (f) => (finals = f) } },
  );
  const room = printed(io, /lobby: room \S+ "/).then(() => /lobby: room (\S+) "/.exec(io.stdout.join(''))![1]!);
  return { io, done, room, finals: () => finals };
}

/** Runs `netplay join --lobby URL ROOM ARGS` in-process. */
function joinOnLobby(room: string, args: string[], url = lobby.url) {
  const io = memoryIo();
  let finals: FinalStates | undefined;
  const done = runCli(['join', '--lobby', url, room, '--rom', spaceRacer, ...args], io, {
    join: { onFinals: (f) => (finals = f) },
  });
  return { io, done, finals: () => finals };
}

/** `netplay rooms --lobby URL ARGS` in-process: exit code and stdout. */
async function rooms(args: string[] = []) {
  const io = memoryIo();
  const code = await runCli(['rooms', '--lobby', lobby.url, ...args], io);
  return { code, out: io.stdout.join(''), err: io.stderr.join('') };
}

function expectAgreement(a: FinalStates | undefined, b: FinalStates | undefined, minFrames: number) {
  const agreement = checkAgreement([a!, b!]);
  expect(agreement.compared).toBeGreaterThan(minFrames);
  expect(agreement.differing).toBe(0);
  expect(agreement.agree).toBe(true);
}

/** A TCP port nobody listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('netplay host --lobby, rooms, join --lobby', () => {
  it('announces the room, rooms lists it, join --lobby plays directly and agrees; the room goes when the host exits', async () => {
    const host = hostOnLobby(['--name', 'Friday race', '--password', 'sesame', '--no-relay'], 5);
    const id = await host.room;
    const hostOut = () => host.io.stdout.join('');
    expect(hostOut()).toContain(
      `lobby: room ${id} "Friday race" announced on ${lobby.url} (spaceracer.ch8, chip8, rollback, 1/2 players, password yes)`,
    );
    expect(hostOut()).toContain(`join through the lobby with "netplay join --lobby ${lobby.url} ${id} --rom `);
    expect(hostOut()).toMatch(/not reachable from other machines: bound to 127\.0\.0\.1/);
    await printed(host.io, /lobby: joiners connect directly \(udp:\/\/127\.0\.0\.1:\d+\)/);

    const listed = await rooms(['--game', 'spaceracer.ch8', '--password', 'yes', '--open']);
    expect(listed.code).toBe(ExitCode.Ok);
    const lines = listed.out.split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+GAME\s+MODE\s+PLAYERS\s+PASSWORD\s+TRANSPORT$/);
    const row = lines.find((l) => l.startsWith(id));
    expect(row).toMatch(/Friday race\s+spaceracer\.ch8 \(chip8\)\s+rollback\s+1\/2\s+yes\s+udp$/);
    expect(listed.out).toContain(`join one with "netplay join --lobby ${lobby.url} ID"`);
    // The filters reach the lobby: no room without a password.
    expect((await rooms(['--password', 'no'])).out).not.toContain(id);

    // No password: refused before connecting.
    const noPassword = joinOnLobby(id, []);
    expect(await noPassword.done).toBe(ExitCode.PasswordRefused);
    expect(noPassword.io.stderr.join('')).toMatch(new RegExp(`room ${id} has a password`));

    const player = joinOnLobby(id, ['--password', 'sesame', '--bot', '--seconds', '2.5', '--nick', 'alice']);
    await printed(player.io, /joined room/);
    expect(player.io.stdout.join('')).toMatch(
      new RegExp(`joined room ${id} at udp://127\\.0\\.0\\.1:\\d+ as alice \\(P2\\), rollback`),
    );
    // The lobby's player count follows the game: the room is full now.
    const client = new LobbyClient(lobby.url);
    await expect.poll(async () => (await client.get(id)).players, { timeout: 3000 }).toBe(2);
    const late = joinOnLobby(id, ['--password', 'sesame']);
    expect(await late.done).toBe(ExitCode.Full);
    expect(late.io.stderr.join('')).toMatch(new RegExp(`room ${id} is full \\(2/2 players\\)`));

    expect(await player.done, player.io.stderr.join('')).toBe(ExitCode.Ok);
    expect(await host.done, host.io.stderr.join('')).toBe(ExitCode.Ok);
    expect(hostOut()).toContain(`host: room ${id} removed from the lobby`);
    expectAgreement(host.finals(), player.finals(), 30);
    // Gone from the lobby at once (DELETE on exit, not the TTL).
    expect(await client.list()).toEqual([]);
    expect((await rooms()).out).toBe(`no rooms on ${lobby.url}\n`);
  });

  it.each([
    ['ws', 'ws', /via the relay ws:\/\/127\.0\.0\.1:\d+\/relay\/join as/],
    ['udp', 'udp', /via the relay udp:\/\/127\.0\.0\.1:\d+ as/],
  ])(
    '--transport %s --relay: the host registers with the lobby relay and join --lobby plays through it',
    async (transport, kind, via) => {
      const host = hostOnLobby(['--transport', transport, '--relay'], 5);
      const id = await host.room;
      await printed(host.io, /lobby: joiners connect through the relay/);
      const hostOut = host.io.stdout.join('');
      expect(hostOut).toMatch(/joiners from elsewhere come through the lobby's relay/);
      expect(hostOut).toMatch(
        new RegExp(`lobby: joiners connect through the relay \\(ws://127\\.0\\.0\\.1:\\d+/relay/join\\?room=${id}`),
      );
      const listed = await rooms();
      expect(listed.out.split('\n').find((l) => l.startsWith(id))).toMatch(new RegExp(`\\s${kind}\\+relay$`));
      const player = joinOnLobby(id, ['--bot', '--seconds', '2.5']);
      expect(await player.done, player.io.stderr.join('')).toBe(ExitCode.Ok);
      expect(player.io.stdout.join('')).toMatch(via);
      expect(await host.done, host.io.stderr.join('')).toBe(ExitCode.Ok);
      expectAgreement(host.finals(), player.finals(), 30);
      expect(await new LobbyClient(lobby.url).list()).toEqual([]);
    },
  );

  it('--transport webrtc: the room carries the lobby signaling and join --lobby connects peer to peer', async () => {
    const host = hostOnLobby(['--transport', 'webrtc'], 5);
    const id = await host.room;
    await printed(host.io, /lobby: joiners meet this host through the lobby's signaling/);
    expect(host.io.stdout.join('')).toContain(`hosting on webrtc in room "${id}" of ${lobby.signalingUrl}`);
    const player = joinOnLobby(id, ['--bot', '--seconds', '2.5']);
    expect(await player.done, player.io.stderr.join('')).toBe(ExitCode.Ok);
    expect(player.io.stdout.join('')).toMatch(new RegExp(`joined room ${id} \\(WebRTC through ws://`));
    expect(await host.done, host.io.stderr.join('')).toBe(ExitCode.Ok);
    expectAgreement(host.finals(), player.finals(), 30);
  });

  it('rooms --watch prints the table, then rooms as they come and go, until Ctrl-C', async () => {
    const abort = new AbortController();
    const io = memoryIo(abort.signal);
    const watching = runCli(['rooms', '--lobby', lobby.url, '--watch'], io);
    await printed(io, /watching .* for changes/);
    expect(io.stdout.join('')).toContain(`no rooms on ${lobby.url}`);
    const host = hostOnLobby(['--no-relay', '--name', 'watched'], 1);
    const id = await host.room;
    await printed(io, new RegExp(`room ${id}\\s+watched\\s+spaceracer\\.ch8`));
    expect(await host.done).toBe(ExitCode.Ok);
    await printed(io, new RegExp(`gone ${id} \\(deleted\\)`));
    abort.abort();
    expect(await watching).toBe(ExitCode.Ok);
  });

  it('an unknown room exits NoRoom; an unreachable lobby exits Network; bad options exit Usage', async () => {
    const unknown = joinOnLobby('no-such-room', []);
    expect(await unknown.done).toBe(ExitCode.NoRoom);
    expect(unknown.io.stderr.join('')).toMatch(/has no such room/);

    const down = `http://127.0.0.1:${await closedPort()}`;
    const nowhere = joinOnLobby('abc', [], down);
    expect(await nowhere.done).toBe(ExitCode.Network);
    expect(nowhere.io.stderr.join('')).toContain(`cannot reach the lobby ${down}`);
    const listDown = memoryIo();
    expect(await runCli(['rooms', '--lobby', down], listDown)).toBe(ExitCode.Network);
    const watchDown = memoryIo();
    expect(await runCli(['rooms', '--lobby', down, '--watch'], watchDown)).toBe(ExitCode.Network);
    expect(watchDown.stderr.join('')).toContain(`cannot reach the lobby ${down}`);
    const hostDown = memoryIo();
    expect(
      await runCli(['host', '--rom', spaceRacer, '--bind', '127.0.0.1', '--port', '0', '--lobby', down], hostDown),
    ).toBe(ExitCode.Network);

    const usage = async (argv: string[], re: RegExp) => {
      const io = memoryIo();
      expect(await runCli(argv, io)).toBe(ExitCode.Usage);
      expect(io.stderr.join('')).toMatch(re);
    };
    await usage(['rooms'], /rooms needs --lobby URL/);
    await usage(['rooms', '--lobby', 'ftp://x'], /--lobby must be an http/);
    await usage(['rooms', '--lobby', lobby.url, '--mode', 'chess'], /--mode must be one of/);
    await usage(['join', '--lobby', lobby.url], /needs one ROOM id/);
    await usage(['join', '--lobby', lobby.url, 'r', '--transport', 'ws'], /takes no --transport/);
    await usage(['join', '127.0.0.1:1', '--direct'], /--direct goes with --lobby/);
    await usage(['join', '--lobby', lobby.url, 'a/b'], /ROOM: room id must be 1–64 characters/);
    await usage(['host', '--relay'], /go with --lobby URL/);
    await usage(['host', '--lobby', lobby.url, '--relay', '--no-relay'], /not both/);
    await usage(['host', '--lobby', lobby.url, '--transport', 'webrtc', '--relay'], /--relay goes with/);
    await usage(['host', '--lobby', lobby.url, '--name', 'x'.repeat(65)], /name must be a string of 1–64/);
    expect(await new LobbyClient(lobby.url).list()).toEqual([]);
  });
});

describe('lobby helpers', () => {
  const home = { eth0: [{ address: '192.168.1.20', family: 'IPv4', internal: false }] } as unknown as Interfaces;
  const server = {
    lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true }],
    eth0: [{ address: '203.0.113.7', family: 'IPv4', internal: false }],
  } as unknown as Interfaces;

  it('private addresses: RFC 1918, CGNAT, link-local, unique-local IPv6 and loopback; others public', () => {
    for (const a of [
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.1',
      '192.168.0.9',
      '100.64.0.1',
      '169.254.3.4',
      '127.0.0.1',
      '::1',
      'fd00::1',
      'fe80::1',
    ])
      expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ['203.0.113.7', '172.32.0.1', '100.128.0.1', '8.8.8.8', '2001:db8::1'])
      expect(isPrivateAddress(a), a).toBe(false);
  });

  it('the relay is used by default only when no address is public; --relay and --no-relay decide', () => {
    expect(wantsRelay('auto', '0.0.0.0', home)).toBe(true);
    expect(wantsRelay('auto', '0.0.0.0', server)).toBe(false);
    expect(wantsRelay('auto', '127.0.0.1', server)).toBe(true);
    expect(wantsRelay('on', '0.0.0.0', server)).toBe(true);
    expect(wantsRelay('off', '0.0.0.0', home)).toBe(false);
  });

  it('reachability lines and announced endpoints follow the addresses', () => {
    expect(reachabilityLines('udp', '0.0.0.0', 7845, false, server)[0]).toMatch(
      /^reachable: public address 203\.0\.113\.7: .* UDP port 7845$/,
    );
    const nat = reachabilityLines('ws', '0.0.0.0', 7845, false, home)[0]!;
    expect(nat).toMatch(/private \(192\.168\.1\.20: behind NAT\)/);
    expect(nat).toMatch(/forward TCP port 7845 on your router, or host with --relay/);
    expect(reachabilityLines('udp', '0.0.0.0', 7845, true, home)[0]).toMatch(/come through the lobby's relay/);
    expect(directEndpoints('udp', '0.0.0.0', 7845, server)).toEqual([{ kind: 'udp', url: 'udp://203.0.113.7:7845' }]);
    expect(directEndpoints('ws', '127.0.0.1', 9000, server)).toEqual([{ kind: 'ws', url: 'ws://127.0.0.1:9000' }]);
  });
});

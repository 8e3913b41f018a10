// netplay host/join --transport webrtc through a signaling server (netplay signal), on loopback
// (node-datachannel bound to 127.0.0.1 on the host side; the joiner gathers on every interface).
import { describe, expect, it } from 'vitest';
import { checkAgreement, type FinalStates } from '../src/agreement.js';
import { runCli } from '../src/cli.js';
import { ExitCode } from '../src/exit-codes.js';
import { memoryIo } from '../src/io.js';
import { webrtcPeerName, webrtcRoom } from '../src/net.js';
import { hostSeconds, spawnCli, startupMs } from './child.js';
import { printed, spaceRacer } from './in-process.js';

/** Starts `netplay signal` in-process on a free loopback port; resolves its URL. */
function startSignal() {
  const abort = new AbortController();
  const io = memoryIo(abort.signal);
  let resolveUrl: (url: string) => void = () => {};
  const url = new Promise<string>((r) => {
    resolveUrl = r;
  });
  const done = runCli(['signal', '--bind', '127.0.0.1', '--port', '0'], io, { signal: { onListening: resolveUrl } });
  return { io, url, done, stop: () => abort.abort() };
}

describe('netplay --transport webrtc', () => {
  it.each(['rollback', 'lockstep-cs'])(
    '--mode %s: a host and a join meet in a room of a signaling server and agree on every final frame',
    async (mode) => {
      const signal = startSignal();
      try {
        const url = await signal.url;
        expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
        const hostIo = memoryIo();
        let hostFinals: FinalStates | undefined;
        const host = runCli(
          [
            'host',
            '--rom',
            spaceRacer,
            '--transport',
            'webrtc',
            '--signal',
            url,
            '--bind',
            '127.0.0.1',
            '--mode',
            mode,
            '--bot',
            '--seconds',
            '6',
          ],
          hostIo,
          { host: { onFinals: (f) => (hostFinals = f) } },
        );
        await printed(hostIo, /hosting on webrtc in room "netplay-[0-9a-f]{12}" of ws:/);
        const hostOut = hostIo.stdout.join('');
        const [, room] = /--room (netplay-[0-9a-f]{12})/.exec(hostOut)!;
        expect(hostOut).toContain(`join with "netplay join --transport webrtc --signal ${url} --room ${room}`);
        const joinIo = memoryIo();
        let joinFinals: FinalStates | undefined;
        // No --room: the joiner derives the same room from the same ROM.
        const player = runCli(
          ['join', '--transport', 'webrtc', '--signal', url, '--bot', '--seconds', '3', '--nick', 'web rtc'],
          joinIo,
          { join: { onFinals: (f) => (joinFinals = f) } },
        );
        expect(await player, joinIo.stderr.join('')).toBe(ExitCode.Ok);
        expect(await host, hostIo.stderr.join('')).toBe(ExitCode.Ok);
        expect(joinIo.stdout.join('')).toMatch(
          new RegExp(`joined room "${room}" of ${url} as web rtc \\(P2\\), ${mode}, host host`),
        );
        expect(hostIo.stdout.join('')).toMatch(/web rtc joined as P2/);
        const a = checkAgreement([hostFinals!, joinFinals!]);
        const why = `host ${hostFinals!.hashes.size} finals, join ${joinFinals!.hashes.size}: ${joinIo.stdout.join('')}`;
        expect(a.compared, why).toBeGreaterThan(mode === 'rollback' ? 60 : 30);
        expect(a.differing).toBe(0);
        expect(a.agree).toBe(true);
        expect(signal.io.stdout.join('')).toMatch(/signaling on ws:\/\/127\.0\.0\.1:\d+/);
      } finally {
        signal.stop();
        expect(await signal.done).toBe(ExitCode.Ok);
      }
      expect(signal.io.stdout.join('')).toMatch(/signal: stopped \([1-9]\d* signals relayed\)/);
    },
    40_000,
  );

  it('usage: no --signal, a bad URL or room, HOST:PORT with webrtc, --room without webrtc: exit Usage', async () => {
    const cases: string[][] = [
      ['host', '--transport', 'webrtc'],
      ['host', '--transport', 'webrtc', '--signal', 'http://x'],
      ['host', '--transport', 'webrtc', '--signal', 'ws://127.0.0.1:1', '--room', 'bad room!'],
      ['join', '127.0.0.1:7845', '--transport', 'webrtc', '--signal', 'ws://127.0.0.1:1'],
      ['join', '127.0.0.1:7845', '--room', 'abc'],
    ];
    for (const argv of cases) {
      const io = memoryIo();
      expect(await runCli(argv, io), argv.join(' ')).toBe(ExitCode.Usage);
    }
    expect(webrtcRoom(undefined, '0123456789abcdef')).toBe('netplay-0123456789ab');
    expect(webrtcPeerName('Zoë the 1st!', () => 0xabc)).toBe('Zothe1st-00000abc');
    expect(webrtcPeerName('???', () => 1)).toBe('player-00000001');
  });

  it('no host in the room: exit Network saying so; an unreachable signaling server: exit Network', async () => {
    const signal = startSignal();
    try {
      const url = await signal.url;
      const io = memoryIo();
      expect(await runCli(['join', '--transport', 'webrtc', '--signal', url, '--room', 'empty'], io)).toBe(
        ExitCode.Network,
      );
      expect(io.stderr.join('')).toMatch(/no host in this room/);
    } finally {
      signal.stop();
      await signal.done;
    }
    const io = memoryIo();
    expect(await runCli(['join', '--transport', 'webrtc', '--signal', 'ws://127.0.0.1:9', '--room', 'r'], io)).toBe(
      ExitCode.Network,
    );
    expect(io.stderr.join('')).toMatch(/cannot connect to room "r" of ws:\/\/127\.0\.0\.1:9/);
  });

  it('as three processes: netplay signal, host --transport webrtc and join --transport webrtc; both exit 0', async () => {
    // The host plays from its start: the join's start-up (measured), its 2 s and margin.
    const seconds = hostSeconds(6, await startupMs());
    const signal = spawnCli(['signal', '--bind', '127.0.0.1', '--port', '0', '--seconds', String(seconds + 17)]);
    try {
      const [, url] = await signal.waitFor(/signaling on (ws:\/\/127\.0\.0\.1:\d+)/);
      const host = spawnCli([
        'host',
        '--transport',
        'webrtc',
        '--signal',
        url!,
        '--room',
        'three-processes',
        '--bind',
        '127.0.0.1',
        '--bot',
        '--seconds',
        String(seconds),
      ]);
      try {
        await host.waitFor(/hosting on webrtc in room "three-processes"/);
        const player = spawnCli([
          'join',
          '--transport',
          'webrtc',
          '--signal',
          url!,
          '--room',
          'three-processes',
          '--bot',
          '--seconds',
          '2',
        ]);
        expect(await player.exit, player.stderr()).toBe(ExitCode.Ok);
        expect(player.stdout()).toMatch(
          /joined room "three-processes" of ws:\/\/127\.0\.0\.1:\d+ as player \(P2\), rollback/,
        );
        expect(player.stdout()).toMatch(/join: left at frame [1-9]\d*/);
        expect(await host.exit, host.stderr()).toBe(ExitCode.Ok);
        expect(host.stdout()).toMatch(/player joined as P2\nall players are in/);
      } finally {
        host.kill();
      }
    } finally {
      signal.kill();
    }
  }, 60_000);

  it('netplay signal as a process: prints its URL, a busy port is exit Network', async () => {
    const first = spawnCli(['signal', '--bind', '127.0.0.1', '--port', '0', '--seconds', '5']);
    try {
      const [, port] = await first.waitFor(/signaling on ws:\/\/127\.0\.0\.1:(\d+)/);
      const second = spawnCli(['signal', '--bind', '127.0.0.1', '--port', port!]);
      expect(await second.exit).toBe(ExitCode.Network);
      expect(second.stderr()).toMatch(/is busy \(EADDRINUSE\)/);
      expect(await first.exit).toBe(ExitCode.Ok);
    } finally {
      first.kill();
    }
  }, 30_000);
});

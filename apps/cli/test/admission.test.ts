/**
 * `netplay host` under a flood of half-open connections over real UDP on loopback: 1,000 transport
 * connections from 127.0.0.2–127.0.0.21 that never send a session HELLO, while `netplay join`
 * from 127.0.0.1 must get in within 1 s.
 */
import { createSocket } from 'node:dgram';
import { SESSION_CHANNELS } from '@netplay/session';
import { systemClock } from '@netplay/transport';
import { newDropCounters, resolveConfig, UdpPeer } from '@netplay/transport-udp';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';
import { listenerSlots } from '../src/net.js';
import { join_, printed, startHost } from './in-process.js';

const cleanup: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanup.splice(0)) c();
});

/**
 * A UDP transport connection from `localAddress` to the host that finishes the transport
 * handshake and then says nothing. Resolves once it is open, or closed (refused or evicted).
 */
async function halfOpen(port: number, localAddress: string): Promise<void> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, localAddress, () => resolve());
  });
  socket.on('error', () => undefined);
  let closed = false;
  const peer = UdpPeer.client(
    {
      clock: systemClock,
      output: (d) => {
        if (!closed) socket.send(Buffer.from(d), port, '127.0.0.1');
      },
      drops: newDropCounters(),
      defer: (fn) => process.nextTick(fn),
      onDead: () => {
        if (closed) return;
        closed = true;
        socket.close();
      },
    },
    resolveConfig({}),
    SESSION_CHANNELS,
    `127.0.0.1:${port}`,
  );
  socket.on('message', (msg) => peer.input(msg));
  cleanup.push(() => {
    peer.close('test over');
    if (!closed) {
      closed = true;
      socket.close();
    }
  });
  await new Promise<void>((resolve) => {
    if (peer.state !== 'connecting') return resolve();
    const a = peer.on('open', () => resolve());
    const b = peer.on('close', () => resolve());
    cleanup.push(a, b);
  });
}

describe('netplay host admission', () => {
  it('listener slots leave room for every player and spectator beyond the pending cap', () => {
    expect(listenerSlots(2)).toBe(1 + 8 + 64 + 8);
    expect(listenerSlots(16)).toBe(15 + 8 + 64 + 8);
  });

  it('1,000 half-open UDP connections from other addresses: a player joins within 1 s', async () => {
    const host = startHost(['--transport', 'udp'], 5);
    const port = await host.port;
    let opened = 0;
    const flood = async (n: number): Promise<void> => {
      // Batches of 50 (each opened or refused before the next): bounded, about 1,000 a second.
      for (let b = 0; b < n; b += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, n - b) }, () => halfOpen(port, `127.0.0.${2 + (opened++ % 20)}`)),
        );
      }
    };
    await flood(300);
    const start = Date.now();
    const player = join_(port, ['--bot', '--seconds', '1', '--nick', 'alice']);
    const joined = printed(player.io, /joined 127\.0\.0\.1:\d+ as alice/, 5000).then(() => Date.now() - start);
    await flood(700);
    const joinedAfter = await joined;
    expect(opened).toBe(1000);
    expect(joinedAfter).toBeLessThan(1000);
    expect(await player.done).toBe(ExitCode.Ok);
    for (const c of cleanup.splice(0)) c();
    expect(await host.done).toBe(ExitCode.Ok);
    const out = host.io.stdout.join('');
    expect(out).toMatch(/alice joined as P2/);
    // The host told the flood why: evicted (timeout) or over the per-address cap (server-full).
    expect(out).toMatch(/refused 127\.0\.0\.\d+:\d+: (timeout: handshake not done in time|server-full: server busy)/);
  });

  it('wrong passwords back off: exit TooManyAttempts once blocked, and the host prints why', async () => {
    const host = startHost(['--password', 'sesame'], 3);
    const port = await host.port;
    const codes: number[] = [];
    let last = '';
    for (let i = 0; i < 6; i++) {
      const intruder = join_(port, ['--password', `guess-${i}`]);
      codes.push(await intruder.done);
      last = intruder.io.stderr.join('');
    }
    expect(codes).toEqual([
      ExitCode.PasswordRefused,
      ExitCode.PasswordRefused,
      ExitCode.PasswordRefused,
      ExitCode.PasswordRefused,
      ExitCode.TooManyAttempts,
      ExitCode.TooManyAttempts,
    ]);
    expect(last).toMatch(/password attempts blocked: too many wrong passwords from 127\.0\.0\.1: retry in \d+ ms/);
    expect(await host.done).toBe(ExitCode.Ok);
    expect(host.io.stdout.join('')).toMatch(/refused .*too-many-attempts/);
  });
});

import type { ChannelSpec } from '@netplay/transport';
import { ManualClock, Prng } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config.js';
import { channelHash } from '../src/peer-io.js';
import { UdpServerCore } from '../src/server.js';
import { COOKIE_BYTES, HELLO_BYTES, PacketType, PROTOCOL_MAGIC, putU32, seal, u32 } from '../src/wire.js';

const channels: readonly ChannelSpec[] = [{ name: 'rel', kind: 'reliable' }];

function server() {
  const clock = new ManualClock(1_000_000);
  const prng = new Prng(9);
  const sent: Array<{ to: string; d: Uint8Array }> = [];
  const core = new UdpServerCore(
    { clock, random: (n) => prng.fill(new Uint8Array(n)), output: (d, to) => sent.push({ to, d: d.slice() }) },
    resolveConfig(),
    channels,
    'server',
    { cookieBucketMs: 10_000 },
  );
  return { clock, core, sent };
}

function hello(nonce: number): Uint8Array {
  const d = new Uint8Array(HELLO_BYTES);
  d[8] = PacketType.Hello;
  putU32(d, 9, PROTOCOL_MAGIC);
  putU32(d, 13, nonce);
  putU32(d, 17, channelHash(channels));
  seal(d);
  return d;
}

function connect(nonce: number, challenge: Uint8Array): Uint8Array {
  const d = new Uint8Array(HELLO_BYTES);
  d[8] = PacketType.Connect;
  putU32(d, 9, PROTOCOL_MAGIC);
  putU32(d, 13, nonce);
  putU32(d, 17, u32(challenge, 17)); // bucket
  d.set(challenge.subarray(21, 21 + COOKIE_BYTES), 21);
  putU32(d, 21 + COOKIE_BYTES, channelHash(channels));
  seal(d);
  return d;
}

describe('the server cookie', () => {
  it('a CONNECT echoing the cookie from the same address opens a session', () => {
    const { core, sent } = server();
    core.input(hello(5), 'a:1');
    const challenge = sent.pop()!.d;
    expect(challenge[8]).toBe(PacketType.Challenge);
    core.input(connect(5, challenge), 'a:1');
    expect(sent.pop()!.d[8]).toBe(PacketType.Accept);
    expect(core.session('a:1')?.state).toBe('open');
  });

  it('is bound to the address: replayed from another address it is ignored', () => {
    const { core, sent } = server();
    core.input(hello(5), 'victim:1');
    const challenge = sent.pop()!.d;
    const ignoredBefore = core.drops.handshakeIgnored;
    core.input(connect(5, challenge), 'attacker:2');
    expect(sent.length).toBe(0);
    expect(core.session('attacker:2')).toBeUndefined();
    expect(core.drops.handshakeIgnored).toBe(ignoredBefore + 1);
  });

  it('is bound to the nonce', () => {
    const { core, sent } = server();
    core.input(hello(5), 'a:1');
    const challenge = sent.pop()!.d;
    core.input(connect(6, challenge), 'a:1');
    expect(core.session('a:1')).toBeUndefined();
  });

  it('expires after the next time bucket', () => {
    const { clock, core, sent } = server();
    core.input(hello(5), 'a:1');
    const challenge = sent.pop()!.d;
    clock.advance(20_000); // two buckets later
    core.input(connect(5, challenge), 'a:1');
    expect(core.session('a:1')).toBeUndefined();
    expect(sent.length).toBe(0);
    // A fresh challenge works again.
    core.input(hello(5), 'a:1');
    core.input(connect(5, sent.pop()!.d), 'a:1');
    expect(core.session('a:1')?.state).toBe('open');
  });

  it('a forged cookie is ignored', () => {
    const { core, sent } = server();
    core.input(hello(5), 'a:1');
    const challenge = sent.pop()!.d.slice();
    challenge[25]! ^= 1;
    core.input(connect(5, challenge), 'a:1');
    expect(core.session('a:1')).toBeUndefined();
  });
});

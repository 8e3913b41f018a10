/**
 * Admission on real UDP sockets (loopback only; Linux routes all of 127/8 to lo): a flood of
 * HELLOs creates no state at all (the cookie handshake is stateless), and while 1,000 half-open
 * sessions arrive (the attacker completes the cookie handshake, gets ACCEPT, then says nothing)
 * from 40 other addresses and from other ports of the client's own address, a legitimate client
 * connects, is announced and exchanges a message within 1 s. Loops are bounded in count and time.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { ChannelSpec, Connection } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import { channelHash } from '../src/peer-io.js';
import { connectUdp, listenUdp, type UdpListener } from '../src/socket.js';
import { COOKIE_BYTES, HELLO_BYTES, PacketType, PROTOCOL_MAGIC, putU32, seal } from '../src/wire.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];
const hash = channelHash(channels);
const cleanup: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function open(source: string): Promise<Socket> {
  const s = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.bind(0, source, () => {
      s.off('error', reject);
      resolve();
    });
  });
  return s;
}

/** Sends `d` to the listener and waits (at most `ms`) for a reply of one of `types`. */
function exchange(s: Socket, d: Uint8Array, port: number, types: number[], ms: number): Promise<Uint8Array | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      s.off('message', on);
      resolve(null);
    }, ms);
    const on = (m: Buffer) => {
      if (!types.includes(m[8]!)) return;
      clearTimeout(timer);
      s.off('message', on);
      resolve(new Uint8Array(m));
    };
    s.on('message', on);
    s.send(d, port, '127.0.0.1');
  });
}

function handshake(type: number, nonce: number, challenge?: Uint8Array): Uint8Array {
  const d = new Uint8Array(HELLO_BYTES);
  d[8] = type;
  putU32(d, 9, PROTOCOL_MAGIC);
  putU32(d, 13, nonce);
  if (challenge) {
    d.set(challenge.subarray(17, 21 + COOKIE_BYTES), 17); // bucket and cookie, echoed
    putU32(d, 21 + COOKIE_BYTES, hash);
  } else putU32(d, 17, hash);
  seal(d);
  return d;
}

/** One half-open session from `source`: HELLO, CHALLENGE, CONNECT, ACCEPT, then silence. */
async function halfOpen(source: string, port: number, nonce: number): Promise<'accepted' | 'refused' | 'lost'> {
  const s = await open(source);
  try {
    const challenge = await exchange(s, handshake(PacketType.Hello, nonce), port, [PacketType.Challenge], 500);
    if (!challenge) return 'lost';
    const types = [PacketType.Accept, PacketType.Refuse];
    const answer = await exchange(s, handshake(PacketType.Connect, nonce, challenge), port, types, 500);
    if (!answer) return 'lost';
    return answer[8] === PacketType.Accept ? 'accepted' : 'refused';
  } finally {
    s.close();
  }
}

/** The attacker's i-th source: one in five is 127.0.0.1 (another port of the client's address). */
const sourceOf = (i: number) => (i % 5 === 0 ? '127.0.0.1' : `127.0.0.${2 + (i % 40)}`);

async function listen(): Promise<UdpListener> {
  const listener = await listenUdp({ channels, host: '127.0.0.1' });
  cleanup.push(async () => {
    listener.close('test over');
    await listener.closed;
  });
  return listener;
}

describe('admission on loopback', () => {
  it('1,000 HELLOs from 200 sockets on 41 addresses get a smaller CHALLENGE each and create no state', async () => {
    const listener = await listen();
    const sockets = await Promise.all(Array.from({ length: 200 }, (_, i) => open(sourceOf(i))));
    cleanup.push(() => {
      for (const s of sockets) s.close();
    });
    let challenges = 0;
    for (const s of sockets)
      s.on('message', (m) => m[8] === PacketType.Challenge && m.length < HELLO_BYTES && challenges++);
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < sockets.length; i++)
        sockets[i]!.send(handshake(PacketType.Hello, round * 1000 + i + 1), listener.port, '127.0.0.1');
      await new Promise((r) => setTimeout(r, 20));
    }
    await pollUntil(() => challenges === 1000, 3000);
    expect(challenges).toBe(1000);
    expect(listener.core.handshakeReplies.count).toBe(1000);
    expect(listener.core.sessionCount).toBe(0);
    expect(listener.core.pending.count).toBe(0);
  });

  it('while 1,000 half-open sessions arrive from other addresses and ports, a client gets in within 3 s (locked out, it would wait for the 10 s handshake timeout)', async () => {
    const listener = await listen();
    const announced: Connection[] = [];
    listener.on('connection', (c) => {
      announced.push(c);
      c.on('message', (m) => c.send(m.channel, m.data)); // echo
    });
    // Sample the pending caps while the flood runs.
    let maxPending = 0;
    let maxPerAddress = 0;
    const sampler = setInterval(() => {
      maxPending = Math.max(maxPending, listener.core.pending.count);
      for (let a = 1; a <= 41; a++)
        maxPerAddress = Math.max(maxPerAddress, listener.core.pending.countFor(`127.0.0.${a}`));
    }, 2);
    cleanup.push(() => clearInterval(sampler));
    const outcomes = { accepted: 0, refused: 0, lost: 0 };
    let next = 0;
    const deadline = Date.now() + 20_000;
    const worker = async () => {
      while (next < 1000 && Date.now() < deadline) {
        const i = next++;
        outcomes[await halfOpen(sourceOf(i), listener.port, i + 1)]++;
      }
    };
    const attack = Promise.all(Array.from({ length: 32 }, worker));
    // The client connects once the flood is well under way (the pending table long full).
    await pollUntil(() => outcomes.accepted >= 300, 15_000);
    expect(outcomes.accepted).toBeGreaterThanOrEqual(300);
    const t0 = performance.now();
    const client = await connectUdp({ channels, host: '127.0.0.1', port: listener.port });
    cleanup.push(() => client.close('test over'));
    let echoed = false;
    client.on('message', () => {
      echoed = true;
    });
    client.send('input', new Uint8Array([42]));
    await pollUntil(() => echoed && announced.length === 1, 4000);
    const elapsed = performance.now() - t0;
    const floodStillRunning = next < 1000;
    await attack;
    clearInterval(sampler);
    expect(echoed).toBe(true);
    expect(announced.length).toBe(1);
    // Not a speed goal: the gap to the 10 s lockout. 1 s was too tight on a loaded 2-core machine (1.28 s seen).
    expect(elapsed).toBeLessThan(3000);
    expect(floodStillRunning).toBe(true);
    // The flood was real: (nearly) every attempt got an ACCEPT, none was announced, and the
    // pending table stayed within its caps.
    expect(outcomes.accepted).toBeGreaterThanOrEqual(950);
    expect(announced.length).toBe(1);
    expect(maxPending).toBeLessThanOrEqual(64);
    expect(maxPerAddress).toBeLessThanOrEqual(8);
    expect(listener.core.pending.dropped).toBeGreaterThanOrEqual(outcomes.accepted - 64);
    expect(listener.connections).toEqual(announced);
  }, 30_000);
});

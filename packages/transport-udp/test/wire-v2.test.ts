import { fc, test } from '@fast-check/vitest';
import { type ChannelSpec, type CloseEvent, TransportError } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import {
  CRC32_RESIDUE,
  crc32Of,
  DataFlag,
  encodeDataPacket,
  FrameType,
  HELLO_BYTES,
  PacketType,
  PROTOCOL_MAGIC_V1,
  putU32,
  RefuseReason,
  resolve16,
  seal,
  u32,
} from '../src/wire.js';
import { SimUdp } from './sim-harness.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];

/** Every datagram a client sends, recorded as the listener gets it. */
function recordClient(sim: SimUdp, name = 'client') {
  const sent: Uint8Array[] = [];
  const { client, server } = sim.pair(name);
  const origInput = sim.server.input.bind(sim.server);
  sim.server.input = (d, address) => {
    if (address === name) sent.push(d.slice());
    origInput(d, address);
  };
  return { client, server, sent };
}

describe('transport-udp wire version 2', () => {
  it('an unreliable message costs 7 bytes of header and frame; no CRC and no acks unless there are tracked packets to acknowledge', () => {
    const sim = new SimUdp(channels, { seed: 3, link: { latencyMs: 5 } });
    const { client, server, sent } = recordClient(sim);
    sim.net.advance(1000); // the handshake's Ping and its ack are done
    // The first two datagrams repeat the acks of the server's Ping (ack echoes), then none.
    for (let i = 0; i < 2; i++) {
      client.send('state', new Uint8Array(20));
      sim.net.advance(16);
    }
    sent.length = 0;
    let got = 0;
    server.on('message', () => got++);
    for (let i = 0; i < 100; i++) {
      client.send('state', new Uint8Array(20).fill(i));
      sim.net.advance(16);
    }
    expect(got).toBe(100);
    // One datagram per message: no ack-only datagrams, no pings from this side. The listener sends
    // nothing but a keepalive Ping every 250 ms (this stream is one-way); its acks ride on the
    // client's messages (that one and the next two: ack echoes) under a CRC.
    const carrying = sent.filter((d) => d.length >= 27);
    expect(carrying).toHaveLength(100);
    // Besides, an ack-only datagram when a Ping's ack is due before the next message (≤ 1 per 250 ms).
    expect(sent.length - carrying.length).toBeLessThanOrEqual(Math.ceil(1600 / 250));
    const plain = sent.filter((d) => d[0] === 0x80);
    for (const d of plain) {
      expect(d.length).toBe(7 + 20);
      expect((d[3]! >> 4) & 15).toBe(FrameType.Unreliable);
    }
    expect(plain.length).toBeGreaterThanOrEqual(80);
    for (const d of sent.filter((x) => x[0] !== 0x80)) {
      expect(d[0]).toBe(0x80 | DataFlag.Ack | DataFlag.Crc);
      expect(crc32Of(d) >>> 0).toBe(CRC32_RESIDUE);
    }
  });

  it('acks ride on data going the other way, with the bitfield cut to what is outstanding, under a CRC', () => {
    const sim = new SimUdp(channels, { seed: 4, link: { latencyMs: 5 } });
    const { client, server, sent } = recordClient(sim);
    sim.net.advance(1000);
    sent.length = 0;
    // The server sends reliable messages; the client answers with unreliable ones every 4 ms.
    for (let i = 0; i < 30; i++) {
      server.send('input', new Uint8Array([i]));
      client.send('state', new Uint8Array(8).fill(i));
      sim.net.advance(4);
    }
    sim.net.advance(200);
    const withAcks = sent.filter((d) => (d[0]! & DataFlag.Ack) !== 0);
    expect(withAcks.length).toBeGreaterThan(0);
    // Some acks share a datagram with an unreliable message (piggy-backed).
    const piggy = withAcks.filter((d) => d.some((_, i) => i > 3 && d[i]! >> 4 === FrameType.Unreliable));
    expect(piggy.length).toBeGreaterThan(0);
    for (const d of withAcks) {
      expect(d[0]! & DataFlag.Crc).toBe(DataFlag.Crc);
      expect(crc32Of(d) >>> 0).toBe(CRC32_RESIDUE);
      // flags, conn, ack (2), delay (1-2), n, bits: n ≤ 16 and no trailing zero byte.
      const delayEnd = d[5]! < 0x80 ? 6 : 7;
      const n = d[delayEnd]!;
      expect(n).toBeLessThanOrEqual(16);
      if (n > 0) expect(d[delayEnd + n]).not.toBe(0);
    }
    expect(server.stats.sendQueueLength).toBe(0);
  });

  test.prop([fc.integer({ min: 1, max: 2 ** 40 }), fc.integer({ min: -32767, max: 32767 })])(
    '16-bit sequence numbers resolve to the whole number within ±32,767 of the highest seen',
    (near, offset) => {
      const whole = near + offset;
      if (whole < 1) return;
      expect(resolve16(whole & 0xffff, near)).toBe(whole);
    },
  );

  test.prop([fc.uint8Array({ minLength: 0, maxLength: 1300 }), fc.boolean()], { numRuns: 300 })(
    'any DATA packet bytes with the right connection id are taken or dropped, never thrown; the peer still works',
    (body, crc) => {
      const sim = new SimUdp(channels, { seed: 9 });
      const { client, server } = sim.pair();
      const frames = body.slice(0, Math.max(0, body.length - 3));
      // (A forged tracked packet numbered like a real one would have the real one dropped as a
      // duplicate yet acknowledged: only an attacker who knows the connection id and the address
      // can do that, version 1 alike. So the forged numbers here are not the real ones.)
      const d = encodeDataPacket(client.session, frames, crc ? { seq: 1000 + (body[0] ?? 0) } : {});
      sim.server.input(d, 'client');
      sim.net.advance(20);
      const state = (): string => server.state;
      if (state() === 'open') {
        let got = 0;
        server.on('message', () => got++);
        client.send('input', new Uint8Array([1]));
        sim.net.runUntil(() => got > 0 || state() === 'closed', 5000);
        expect(got > 0 || state() === 'closed').toBe(true);
      }
    },
  );

  it('a version-1 client is challenged in its own magic and refused with reason 4 (version), typed', () => {
    const sim = new SimUdp(channels, { seed: 5 });
    const errors: unknown[] = [];
    sim.server.on('error', (e) => errors.push(e));
    const hello = new Uint8Array(HELLO_BYTES);
    hello[8] = PacketType.Hello;
    putU32(hello, 9, PROTOCOL_MAGIC_V1);
    putU32(hello, 13, 0xabcdef01);
    seal(hello);
    const before = sim.serverSent.length;
    const outputs: Uint8Array[] = [];
    const server = sim.server as unknown as { io: { output: (d: Uint8Array, to: string) => void } };
    const out = server.io.output;
    server.io.output = (d, to) => {
      if (to === 'old') outputs.push(d.slice());
      out(d, to);
    };
    sim.server.input(hello, 'old');
    expect(sim.serverSent.length).toBe(before + 1);
    const challenge = outputs[0]!;
    expect(challenge[8]).toBe(PacketType.Challenge);
    expect(u32(challenge, 9)).toBe(PROTOCOL_MAGIC_V1);
    const connect = new Uint8Array(HELLO_BYTES);
    connect[8] = PacketType.Connect;
    putU32(connect, 9, PROTOCOL_MAGIC_V1);
    putU32(connect, 13, 0xabcdef01);
    connect.set(challenge.subarray(17, 37), 17); // bucket + cookie
    seal(connect);
    sim.server.input(connect, 'old');
    const refuse = outputs[1]!;
    expect(refuse.length).toBe(18);
    expect(refuse[8]).toBe(PacketType.Refuse);
    expect(u32(refuse, 9)).toBe(PROTOCOL_MAGIC_V1);
    expect(refuse[17]).toBe(RefuseReason.Version);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TransportError);
    expect((errors[0] as TransportError).code).toBe('refused');
    expect((errors[0] as TransportError).message).toMatch(/wire version 1/);
    expect(sim.server.session('old')).toBeUndefined();
  });

  it('a version-2 client refused for its version rejects with a typed refused error naming it', () => {
    const sim = new SimUdp(channels, { seed: 6 });
    const client = sim.connect('c2');
    let closed: CloseEvent | undefined;
    client.on('close', (e) => {
      closed = e;
    });
    // Play a version-1 listener that answers CONNECT with REFUSE (reason 4): rewrite its reply.
    const server = sim.server as unknown as { io: { output: (d: Uint8Array, to: string) => void } };
    const out = server.io.output;
    server.io.output = (d, to) => {
      if (d.length >= 9 && d[8] === PacketType.Accept) {
        const r = new Uint8Array(18);
        r.set(d.subarray(0, 17));
        putU32(r, 4, 0);
        r[8] = PacketType.Refuse;
        r[17] = RefuseReason.Version;
        seal(r);
        out(r, to);
        return;
      }
      out(d, to);
    };
    sim.net.advance(3000);
    expect(client.state).toBe('closed');
    expect(closed?.error).toBeInstanceOf(TransportError);
    expect(closed?.error?.code).toBe('refused');
    expect(closed?.reason).toMatch(/another wire version/);
  });
});

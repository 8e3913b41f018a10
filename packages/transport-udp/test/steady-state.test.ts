import type { ChannelSpec } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config.js';
import { newDropCounters } from '../src/counters.js';
import { UdpPeer } from '../src/peer.js';
import { DataFlag, encodeDataPacket, resolve16, sealData, u16 } from '../src/wire.js';
import { Deferred } from './core-harness.js';
import { openCoreRig, STEADY_RATE_LIMITS } from './core-rig.js';
import { leastBytesPer } from './heap.js';
import { ReusingClock } from './reusing-clock.js';

/**
 * Heap allocation of the sans-I/O core in a steady state: a 16-byte message every 0.25 ms of
 * virtual time on a reliable channel (and, for both ends, on an unreliable one), everything acknowledged, 20 000 messages measured after
 * 5 000 of warm-up. The harness allocates nothing per message (datagrams are copied into
 * preallocated slots, deferred flushes go into a reused array, the clock reuses its timer
 * records), so what is measured is the core.
 *
 * Bounds, averaged per message (before the send queue, retransmit records and datagrams were
 * pooled, the same harness measured 1 234 B per message on the sender and 1 600 B for both ends):
 * - sender: at most {@link SENDER_BOUND} bytes (measured 30 to 70 B: boxed doubles of time and RTT
 *   arithmetic and the unsigned CRC, which V8 allocates when a call is not inlined);
 * - both ends: at most {@link E2E_SLACK} bytes above what the receiver must allocate anyway by the
 *   contract (the `message` event and the bytes it hands over, which the receiver owns: about
 *   270 B), measured in the same process (measured 0 to 50 B above it).
 */
const SENDER_BOUND = 128;
const E2E_SLACK = 96;
const N = 20_000;
const WARMUP = 5000;
/** Measurement windows of N / WINDOWS messages each; the least per-message figure is bounded. */
const WINDOWS = 4;
const STEP_MS = 0.25;

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];

describe('steady state allocation of the UDP core', () => {
  it(`a reliable sender allocates at most ${SENDER_BOUND} B per message (acks every 4 packets)`, () => {
    const clock = new ReusingClock();
    const config = resolveConfig({ rateLimits: STEADY_RATE_LIMITS });
    const deferred = new Deferred();
    // The receiving end is scripted: it records the highest packet sequence number and answers
    // with an ack-only DATA packet (all 128 bits set: nothing is lost) after every 4 packets.
    const SESSION = 0x1234_5678;
    // Wire v2: flags (ACK, CRC), connection id, u16 ack, delay 0, 16 bytes of bits, CRC.
    const ack = encodeDataPacket(SESSION, new Uint8Array(0), { ack: 1, ackBits: new Uint8Array(16).fill(0xff) });
    const ACK_AT = 3;
    const CRC_AT = ack.length - 4;
    const ackBody = ack.subarray(0, CRC_AT);
    let highest = 0;
    let unacked = 0;
    let packets = 0;
    const sender = UdpPeer.server(
      {
        clock,
        defer: deferred.defer,
        drops: newDropCounters(),
        output: (d) => {
          packets++;
          const seq = (d[0]! & DataFlag.Tracked) !== 0 ? resolve16(u16(d, 3), highest) : 0;
          if (seq !== 0) {
            if (seq > highest) highest = seq;
            unacked++;
          }
        },
      },
      config,
      channels,
      'receiver',
      SESSION,
      1,
    );
    const acknowledge = (): void => {
      if (unacked < 4) return;
      unacked = 0;
      ack[ACK_AT] = highest >>> 8;
      ack[ACK_AT + 1] = highest;
      sealData(ack, CRC_AT, ackBody);
      sender.input(ack);
    };
    const msg = new Uint8Array(16);
    const run = (n: number): void => {
      for (let i = 0; i < n; i++) {
        msg[0] = i;
        sender.send('input', msg);
        deferred.run();
        acknowledge();
        clock.advance(STEP_MS);
        deferred.run();
        acknowledge();
      }
    };
    clock.reuse = true;
    run(WARMUP);
    const perMessage = leastBytesPer(WINDOWS, N / WINDOWS, run);
    console.log(`reliable sender: ${perMessage.toFixed(1)} B per message (${packets} datagrams)`);
    // Everything sent was acknowledged except the last few packets (fewer than 4, plus the tail).
    expect(sender.stats.sendQueueLength).toBeLessThan(8);
    expect(sender.stats.packetsSent).toBeGreaterThanOrEqual(WARMUP + N);
    expect(sender.counters.packetsLost).toBe(0);
    expect(clock.staleCancels).toBe(0);
    expect(perMessage).toBeLessThanOrEqual(SENDER_BOUND);
  });

  it.each(['input', 'state'])(
    `both ends together allocate at most ${E2E_SLACK} B per message beyond the receiver's own copy (channel %s)`,
    (channel) => {
      const { clock, server, step } = openCoreRig(channels, 7);
      const peer = server.session('client')!;
      let received = 0;
      let mismatches = 0;
      peer.on('message', ({ data }) => {
        if (data.length !== 16 || data[0] !== (received & 0xff)) mismatches++;
        received++;
      });
      const msg = new Uint8Array(16);
      const run = (n: number): void => {
        for (let i = 0; i < n; i++) {
          msg[0] = received & 0xff;
          step(channel, msg, STEP_MS);
        }
      };
      run(WARMUP);
      const perMessage = leastBytesPer(WINDOWS, N / WINDOWS, run);
      // What the receiver allocates per message by contract: the bytes it hands over (a copy out of
      // the datagram, which the shell may reuse) and the event object.
      const datagram = new Uint8Array(67);
      const events: Array<{ channel: string; data: Uint8Array }> = [];
      const inherentPerMessage = leastBytesPer(WINDOWS, N / WINDOWS, (n) => {
        for (let i = 0; i < n; i++) events[i & 7] = { channel, data: datagram.slice(51, 67) };
      });
      console.log(
        `both ends (${channel}): ${perMessage.toFixed(1)} B per message; the receiver's copy and event: ${inherentPerMessage.toFixed(1)} B`,
      );
      expect(received).toBe(WARMUP + N);
      expect(mismatches).toBe(0);
      expect(clock.staleCancels).toBe(0);
      expect(perMessage - inherentPerMessage).toBeLessThanOrEqual(E2E_SLACK);
    },
  );
});

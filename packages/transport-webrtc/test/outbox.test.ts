import type { ChannelSpec } from '@netplay/transport';
import { ManualClock, SendLedger } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { type Chan, MutableStats } from '../src/channel-state.js';
import { resolveOptions } from '../src/options.js';
import { Outbox } from '../src/outbox.js';
import type { RtcDataChannelLike } from '../src/rtc.js';
import { UNRELIABLE_HEADER_BYTES } from '../src/wire.js';

/** A data channel whose buffer the test fills and drains by hand. */
class FakeChannel implements RtcDataChannelLike {
  readyState = 'open';
  bufferedAmount = 0;
  binaryType = 'arraybuffer';
  onopen = null;
  onclose = null;
  onerror = null;
  onmessage = null;
  readonly frames: Uint8Array[] = [];
  send(data: Uint8Array): void {
    this.frames.push(data.slice());
    this.bufferedAmount += data.length;
  }
  close(): void {
    this.readyState = 'closed';
  }
}

const SPEC: ChannelSpec = { name: 'state', kind: 'unreliable' };

function setup(highWaterBytes: number) {
  const clock = new ManualClock();
  const dc = new FakeChannel();
  const chan: Chan = {
    spec: SPEC,
    reliable: false,
    dc,
    reassembler: undefined,
    sent: 0,
    received: 0,
    ledger: new SendLedger(),
    nextSeq: 0,
    pending: undefined,
    got: false,
    lastSeq: 0,
  };
  const stats = new MutableStats();
  const outbox = new Outbox(
    [chan],
    resolveOptions({ channels: [SPEC], clock, highWaterBytes, pollMs: 5 }, [SPEC]),
    stats,
    {
      fail: (e) => {
        throw e;
      },
      open: () => true,
    },
  );
  return { clock, dc, chan, stats, outbox };
}

function seqOf(frame: Uint8Array): number {
  return frame[UNRELIABLE_HEADER_BYTES]! | (frame[UNRELIABLE_HEADER_BYTES + 1]! << 8);
}

describe('Outbox backpressure on unreliable channels', () => {
  it('holds only the newest message while the buffer is above highWaterBytes, and sends it once the buffer drains', () => {
    const { clock, dc, chan, stats, outbox } = setup(1000);
    const msg = new Uint8Array(800);
    const send = (i: number) => {
      msg[0] = i & 0xff;
      msg[1] = i >> 8;
      outbox.send(chan, msg);
    };
    send(0); // buffer 0 ≤ 1000: sent
    send(1); // buffer 804 ≤ 1000: sent
    expect(dc.frames.length).toBe(2);
    for (let i = 2; i < 50; i++) send(i); // buffer above 1000: each replaces the last
    expect(dc.frames.length).toBe(2);
    expect(stats.staleDropped).toBe(47);
    expect(stats.sendQueueLength).toBe(1);
    clock.advance(20);
    expect(dc.frames.length).toBe(2); // still backed up: nothing goes out
    dc.bufferedAmount = 0;
    clock.advance(5);
    expect(dc.frames.map(seqOf)).toEqual([0, 1, 49]);
    expect(stats.sendQueueLength).toBe(0);
    expect(dc.frames.length + stats.staleDropped).toBe(50);
  });
});

import { fc, test } from '@fast-check/vitest';
import {
  type ChannelSpec,
  type CloseEvent,
  ManualClock,
  type MessageEvent,
  sameChannels,
  TransportError,
  truncateCloseReason,
} from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { encodeReliable, encodeUnreliable, FrameType, WsCloseCode } from '../src/index.js';
import { fakeLink } from './fake-socket.js';

const CHANNELS: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'bulk', kind: 'reliable' },
  { name: 'pos', kind: 'unreliable' },
  { name: 'cursor', kind: 'unreliable' },
];
const TIMEOUTS = { interruptMs: 300, disconnectMs: 1500, connectMs: 2000 };

function collect(conn: { on: (t: 'message', h: (m: MessageEvent) => void) => unknown }): MessageEvent[] {
  const out: MessageEvent[] = [];
  conn.on('message', (m) => out.push(m));
  return out;
}

function closeOf(conn: { on: (t: 'close', h: (e: CloseEvent) => void) => unknown }): { event?: CloseEvent } {
  const box: { event?: CloseEvent } = {};
  conn.on('close', (e) => {
    box.event = e;
  });
  return box;
}

function tagged(n: number, size: number): Uint8Array {
  const m = new Uint8Array(Math.max(4, size));
  new DataView(m.buffer).setUint32(0, n);
  for (let i = 4; i < m.length; i++) m[i] = (n * 31 + i) & 0xff;
  return m;
}
const tagOf = (m: Uint8Array) => new DataView(m.buffer, m.byteOffset, m.byteLength).getUint32(0);

const channelArb = fc.record({
  name: fc.string({ minLength: 1, maxLength: 8 }),
  kind: fc.constantFrom('reliable' as const, 'unreliable' as const),
});
const channelListArb = fc.uniqueArray(channelArb, { minLength: 1, maxLength: 5, selector: (c) => c.name });

describe('handshake', () => {
  test.prop([channelListArb, channelListArb], { numRuns: 200 })(
    'opens exactly when both ends declare the same channels, else refuses with a reason',
    (a, b) => {
      const clock = new ManualClock();
      const link = fakeLink(clock, { channels: a, timeouts: TIMEOUTS }, { channels: b, timeouts: TIMEOUTS }, false);
      const closed = closeOf(link.client);
      let opened = false;
      link.client.on('open', () => {
        opened = true;
      });
      link.client.socketOpened();
      link.pump();
      if (sameChannels(a, b)) {
        expect(opened).toBe(true);
        expect(link.accepted).toBe(true);
        expect(link.client.state).toBe('open');
        expect(link.server.state).toBe('open');
      } else {
        expect(opened).toBe(false);
        expect(link.accepted).toBe(false);
        expect(closed.event?.code).toBe('refused');
        expect(closed.event?.error?.code).toBe('refused');
        expect(closed.event?.reason).toMatch(/^channel mismatch/);
        expect(link.serverErrors.map((e) => e.code)).toEqual(['refused']);
      }
    },
  );

  test.prop(
    [
      fc.integer({ min: 1, max: 1 << 26 }),
      fc.integer({ min: 1, max: 1 << 20 }),
      fc.integer({ min: 1, max: 1 << 26 }),
      fc.integer({ min: 1, max: 1 << 20 }),
    ],
    { numRuns: 100 },
  )('both ends use the smaller of the two limits', (cm, cu, sm, su) => {
    const clock = new ManualClock();
    const link = fakeLink(
      clock,
      { channels: CHANNELS, maxMessageBytes: cm, maxUnreliableBytes: cu },
      { channels: CHANNELS, maxMessageBytes: sm, maxUnreliableBytes: su },
    );
    for (const c of [link.client, link.server]) {
      expect(c.limits.maxMessageBytes).toBe(Math.min(cm, sm));
      expect(c.limits.maxUnreliableBytes).toBe(Math.min(cu, su));
    }
  });

  it('queues messages sent while connecting and sends them after open', () => {
    const clock = new ManualClock();
    const link = fakeLink(clock, { channels: CHANNELS }, { channels: CHANNELS }, false);
    const got = collect(link.server);
    link.client.send('input', tagged(1, 10));
    link.client.send('pos', tagged(2, 10));
    expect(link.client.stats.sendQueueLength).toBe(2);
    expect(link.client.stats.sendQueueBytes).toBe(20);
    link.client.socketOpened();
    link.pump();
    expect(got.map((m) => [m.channel, tagOf(m.data)])).toEqual([
      ['input', 1],
      ['pos', 2],
    ]);
    clock.advance(5); // the next poll of bufferedAmount sees the frames gone
    expect(link.client.stats.sendQueueLength).toBe(0);
  });

  it('times out a client whose handshake never completes', () => {
    const clock = new ManualClock();
    const link = fakeLink(clock, { channels: CHANNELS, timeouts: TIMEOUTS }, { channels: CHANNELS }, false);
    const closed = closeOf(link.client);
    clock.advance(TIMEOUTS.connectMs - 1);
    expect(link.client.state).toBe('connecting');
    clock.advance(1);
    expect(closed.event?.code).toBe('timeout');
    expect(closed.event?.error?.code).toBe('timeout');
  });

  it('reports refusals and timeouts through close only, protocol errors through error then close', () => {
    const seen: string[] = [];
    const watch = (c: { on: (t: 'error' | 'close', h: (e: { code: string }) => void) => unknown }) => {
      c.on('error', (e) => seen.push(`error:${e.code}`));
      c.on('close', (e) => seen.push(`close:${e.code}`));
    };
    const refused = fakeLink(new ManualClock(), { channels: CHANNELS }, { channels: CHANNELS.slice(1) }, false);
    watch(refused.client);
    refused.client.socketOpened();
    refused.pump();
    const clock = new ManualClock();
    const silent = fakeLink(clock, { channels: CHANNELS, timeouts: TIMEOUTS });
    watch(silent.client);
    clock.advance(TIMEOUTS.disconnectMs);
    const broken = fakeLink(new ManualClock(), { channels: CHANNELS });
    watch(broken.client);
    broken.client.socketFrame(new Uint8Array([0x7f]));
    expect(seen).toEqual(['close:refused', 'close:timeout', 'error:protocol', 'close:error']);
  });
});

describe('frames from a misbehaving peer', () => {
  const bad: Array<[string, Uint8Array]> = [
    ['empty frame', new Uint8Array(0)],
    ['unknown type', new Uint8Array([0x7f, 1, 2])],
    ['unknown channel index', encodeReliable(9, new Uint8Array(3))],
    ['reliable frame on an unreliable channel', encodeReliable(2, new Uint8Array(3))],
    ['unreliable frame on a reliable channel', encodeUnreliable(0, 1, new Uint8Array(3))],
    ['truncated unreliable header', new Uint8Array([FrameType.unreliable, 2, 0])],
    ['second HELLO', new Uint8Array([FrameType.hello, 0x4e, 0x50, 0x57, 0x53])],
    ['WELCOME to a server', new Uint8Array([FrameType.welcome])],
    ['short PING', new Uint8Array([FrameType.ping, 1])],
  ];
  for (const [what, frame] of bad) {
    it(`closes with a protocol error on: ${what}`, () => {
      const clock = new ManualClock();
      const link = fakeLink(clock, { channels: CHANNELS });
      const serverClosed = closeOf(link.server);
      const clientClosed = closeOf(link.client);
      const errors: TransportError[] = [];
      link.server.on('error', (e) => errors.push(e));
      link.server.socketFrame(frame);
      expect(serverClosed.event?.code).toBe('error');
      expect(serverClosed.event?.error?.code).toBe('protocol');
      expect(errors.map((e) => e.code)).toEqual(['protocol']);
      link.pump();
      // The client sees the server's close code 4002 and its reason.
      expect(clientClosed.event?.code).toBe('error');
      expect(clientClosed.event?.error?.code).toBe('protocol');
      expect(clientClosed.event?.reason).toBe(truncateCloseReason(serverClosed.event!.error!.message));
    });
  }

  it('closes with too-large on a message over the agreed limit', () => {
    const clock = new ManualClock();
    const link = fakeLink(clock, { channels: CHANNELS, maxMessageBytes: 1000 });
    const closed = closeOf(link.server);
    link.server.socketFrame(encodeReliable(0, new Uint8Array(1001)));
    expect(closed.event?.error?.code).toBe('too-large');
    expect(link.serverSocket.closing?.code).toBe(WsCloseCode.tooLarge);
  });

  test.prop([fc.uint8Array({ maxLength: 64 })], { numRuns: 300 })(
    'any bytes either deliver a message or close the connection with a typed error, never throw',
    (bytes) => {
      const clock = new ManualClock();
      const link = fakeLink(clock, { channels: CHANNELS });
      const got = collect(link.server);
      const closed = closeOf(link.server);
      link.server.socketFrame(bytes);
      if (closed.event) {
        expect(closed.event.error).toBeInstanceOf(TransportError);
        expect(['protocol', 'too-large']).toContain(closed.event.error?.code);
      } else {
        expect(link.server.state).toBe('open');
        expect(got.length + link.server.stats.staleReceived).toBeLessThanOrEqual(1);
      }
    },
  );
});

type Action =
  | { t: 'reliable'; ch: 'input' | 'bulk'; size: number }
  | { t: 'unreliable'; ch: 'pos' | 'cursor'; size: number }
  | { t: 'drain'; bytes: number }
  | { t: 'wait'; ms: number };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.record({
    t: fc.constant('reliable' as const),
    ch: fc.constantFrom('input' as const, 'bulk' as const),
    size: fc.integer({ min: 4, max: 300 }),
  }),
  fc.record({
    t: fc.constant('unreliable' as const),
    ch: fc.constantFrom('pos' as const, 'cursor' as const),
    size: fc.integer({ min: 4, max: 120 }),
  }),
  fc.record({ t: fc.constant('drain' as const), bytes: fc.integer({ min: 0, max: 800 }) }),
  fc.record({ t: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 20 }) }),
);

describe('backpressure', () => {
  test.prop([fc.array(actionArb, { maxLength: 120 }), fc.integer({ min: 0, max: 400 })], { numRuns: 150 })(
    'reliable messages all arrive in order; unreliable ones arrive in order, the newest always, stale ones dropped only while backed up',
    (actions, highWaterBytes) => {
      const clock = new ManualClock();
      const link = fakeLink(clock, {
        channels: CHANNELS,
        highWaterBytes,
        timeouts: { interruptMs: 1e6, disconnectMs: 1e7 },
      });
      const got = collect(link.server);
      const sent = new Map<string, number[]>();
      let n = 0;
      for (const a of actions) {
        if (a.t === 'drain') link.clientSocket.deliver(a.bytes);
        else if (a.t === 'wait') clock.advance(a.ms);
        else {
          const tag = n++;
          const list = sent.get(a.ch) ?? [];
          list.push(tag);
          sent.set(a.ch, list);
          const before = link.clientSocket.bufferedAmount;
          const queuedBefore = link.clientSocket.queue.length;
          link.client.send(a.ch, tagged(tag, a.size));
          if (a.t === 'reliable' || before <= highWaterBytes) {
            // Not backed up (or reliable): the frame went straight to the socket.
            expect(link.clientSocket.queue.length).toBe(queuedBefore + 1);
          } else {
            expect(link.clientSocket.queue.length).toBe(queuedBefore);
          }
        }
        expect(link.client.stats.sendQueueLength).toBeGreaterThanOrEqual(0);
      }
      // Let everything drain: deliver, then let the poll timer flush held-back messages.
      for (let i = 0; i < 50 && (link.client.stats.sendQueueLength > 0 || link.clientSocket.queue.length > 0); i++) {
        link.clientSocket.deliver();
        clock.advance(10);
      }
      link.clientSocket.deliver();
      expect(link.client.stats.sendQueueLength).toBe(0);
      expect(link.client.stats.sendQueueBytes).toBe(0);
      let delivered = 0;
      for (const ch of ['input', 'bulk', 'pos', 'cursor']) {
        const want = sent.get(ch) ?? [];
        const have = got.filter((m) => m.channel === ch).map((m) => tagOf(m.data));
        if (ch === 'input' || ch === 'bulk') {
          expect(have).toEqual(want);
        } else {
          for (let i = 1; i < have.length; i++) expect(have[i]!).toBeGreaterThan(have[i - 1]!);
          for (const t of have) expect(want).toContain(t);
          if (want.length > 0) expect(have[have.length - 1]).toBe(want[want.length - 1]);
          delivered += have.length;
        }
      }
      const unreliableSent = (sent.get('pos')?.length ?? 0) + (sent.get('cursor')?.length ?? 0);
      expect(delivered + link.client.stats.staleDropped).toBe(unreliableSent);
    },
  );

  it('send throws limit when the socket buffer would pass maxBufferedBytes', () => {
    const clock = new ManualClock();
    const link = fakeLink(clock, { channels: CHANNELS, maxBufferedBytes: 1000 });
    link.client.send('bulk', new Uint8Array(900));
    expect(() => link.client.send('bulk', new Uint8Array(200))).toThrow(
      expect.objectContaining({ code: 'limit' }) as unknown as Error,
    );
    expect(link.client.state).toBe('open');
    link.clientSocket.deliver();
    link.client.send('bulk', new Uint8Array(200));
  });
});

describe('liveness and RTT', () => {
  test.prop([fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 200 })], { numRuns: 50 })(
    'RTT is the PING/PONG round trip on the injected clock',
    (up, down) => {
      const clock = new ManualClock();
      const link = fakeLink(
        clock,
        { channels: CHANNELS, timeouts: { interruptMs: 3000, disconnectMs: 10000 } },
        undefined,
        false,
      );
      link.client.socketOpened();
      link.clientSocket.deliver(); // HELLO: the server opens, sends WELCOME and its first PING
      link.serverSocket.deliver(); // the client opens and sends its first PING (time 0)
      clock.advance(up);
      link.clientSocket.deliver();
      clock.advance(down);
      link.serverSocket.deliver();
      expect(link.client.stats.rttSamples).toBe(1);
      expect(link.client.stats.rttMs).toBe(up + down);
    },
  );

  it('silence: interrupted after interruptMs, resumed on traffic, timeout after disconnectMs', () => {
    const clock = new ManualClock();
    const link = fakeLink(clock, { channels: CHANNELS, timeouts: TIMEOUTS });
    const events: Array<[string, number]> = [];
    link.client.on('interrupted', (e) => events.push(['interrupted', e.silentMs]));
    link.client.on('resumed', (e) => events.push(['resumed', e.interruptedMs]));
    const closed = closeOf(link.client);
    const start = clock.now();
    clock.advance(TIMEOUTS.interruptMs - 1);
    expect(events).toEqual([]);
    clock.advance(1);
    expect(events).toEqual([['interrupted', TIMEOUTS.interruptMs]]);
    clock.advance(100);
    link.serverSocket.deliver();
    expect(events[1]).toEqual(['resumed', 100]);
    const heardAt = clock.now();
    clock.advance(TIMEOUTS.disconnectMs - 1);
    expect(link.client.state).toBe('open');
    clock.advance(1);
    expect(closed.event?.code).toBe('timeout');
    expect(closed.event?.error?.code).toBe('timeout');
    expect(clock.now() - heardAt).toBe(TIMEOUTS.disconnectMs);
    expect(heardAt - start).toBe(TIMEOUTS.interruptMs + 100);
  });

  it('pings keep a pumped connection alive indefinitely', () => {
    const clock = new ManualClock();
    const link = fakeLink(clock, { channels: CHANNELS, timeouts: TIMEOUTS });
    const events: string[] = [];
    for (const c of [link.client, link.server]) {
      c.on('interrupted', () => events.push('interrupted'));
      c.on('close', () => events.push('close'));
    }
    for (let t = 0; t < 10 * TIMEOUTS.disconnectMs; t += 10) {
      clock.advance(10);
      link.pump();
    }
    expect(events).toEqual([]);
    expect(link.client.stats.rttSamples).toBeGreaterThan(10);
    expect(link.server.stats.rttSamples).toBeGreaterThan(10);
  });
});

describe('closing', () => {
  test.prop([fc.string({ maxLength: 200 })], { numRuns: 100 })(
    'the reason reaches the peer truncated to 120 UTF-8 bytes, after earlier messages',
    (reason) => {
      const clock = new ManualClock();
      const link = fakeLink(clock, { channels: CHANNELS });
      const got = collect(link.server);
      const local = closeOf(link.client);
      const remote = closeOf(link.server);
      link.client.send('input', tagged(7, 8));
      link.client.close(reason);
      expect(local.event).toEqual({ code: 'local', reason });
      link.pump();
      expect(got.map((m) => tagOf(m.data))).toEqual([7]);
      expect(remote.event?.code).toBe('remote');
      expect(remote.event?.reason).toBe(truncateCloseReason(reason));
      expect(() => link.server.send('input', new Uint8Array(1))).toThrow(TransportError);
    },
  );

  it('terminates a socket whose closing handshake does not finish within closeGraceMs', () => {
    const clock = new ManualClock();
    const link = fakeLink(clock, { channels: CHANNELS, closeGraceMs: 500 });
    link.client.send('bulk', new Uint8Array(100)); // stays queued: the link never drains
    link.client.close('bye');
    clock.advance(499);
    expect(link.clientSocket.gone).toBe(false);
    clock.advance(1);
    expect(link.clientSocket.gone).toBe(true);
  });
});

describe('option checks', () => {
  it('rejects out-of-range options with invalid-argument', () => {
    for (const bad of [
      { maxMessageBytes: 0 },
      { pollMs: -1 },
      { highWaterBytes: -1 },
      { timeouts: { interruptMs: 0 } },
    ]) {
      expect(() => fakeLink(new ManualClock(), { channels: CHANNELS, ...bad }, undefined, false)).toThrow(
        TransportError,
      );
    }
  });
});

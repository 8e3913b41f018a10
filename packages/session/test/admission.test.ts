import { TestCore } from '@netplay/state/testing';
import { type Connection, DEFAULT_ADMISSION_LIMITS, Prng, type RateLimits, SimulatedNetwork } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import {
  NetplayClient,
  type NetplayClientOptions,
  NetplayHost,
  type NetplayHostOptions,
  SESSION_CHANNELS,
  type SessionError,
} from '../src/index.js';
import { CONTENT, clientFinals, compareFinals, FRAME_MS, hostFinals, inputSource } from './harness.js';

/** Listener slots the way the CLI sizes them: admitted peers + pending + a margin. */
const MAX_CONNECTIONS = 1 + 8 + DEFAULT_ADMISSION_LIMITS.maxPending + 8;

/**
 * A host on a low-latency simulated network whose listener has {@link MAX_CONNECTIONS} slots.
 * `transportRateLimits: false` switches the memory transport's own budget off, so that only the
 * session host's budget can stop a flooder.
 */
function env(
  seed: number,
  hostOptions: Partial<Omit<NetplayHostOptions, 'clock'>> = {},
  transportRateLimits?: RateLimits | false,
) {
  const net = new SimulatedNetwork({ seed, link: { latencyMs: 5, jitterMs: 1, loss: 0 } });
  const salt = new Prng(seed ^ 0x5a17);
  const host = new NetplayHost({
    core: new TestCore({ players: 2, seed: 7 }),
    content: CONTENT,
    clock: net.clock,
    randomU32: () => salt.nextU32(),
    fps: 1000 / FRAME_MS,
    ...hostOptions,
  });
  const rate = transportRateLimits === undefined ? {} : { rateLimits: transportRateLimits };
  const listener = net.listen('host', { channels: SESSION_CHANNELS, maxConnections: MAX_CONNECTIONS, ...rate });
  host.listen(listener);
  const refused: SessionError[] = [];
  /** Times at which the host checked a password and refused it. */
  const checked: number[] = [];
  host.on('peer-refused', ({ error }) => {
    refused.push(error);
    if (error.code === 'bad-password') checked.push(net.now());
  });
  const join = (
    name: string,
    options: Partial<Omit<NetplayClientOptions, 'clock'>> = {},
  ): { client: NetplayClient; conn: Connection } => {
    const conn = net.connect(name, 'host', { channels: SESSION_CHANNELS, ...rate });
    const client = new NetplayClient(conn, {
      core: new TestCore({ players: 2, seed: 7 }),
      content: CONTENT,
      clock: net.clock,
      nick: name.replace(/:.*/, ''),
      fps: 1000 / FRAME_MS,
      ...options,
    });
    return { client, conn };
  };
  return { net, host, listener, join, refused, checked };
}

type Env = ReturnType<typeof env>;

/**
 * Checked (and failed) password attempts, at the default limits: the first 4 come as fast as the
 * client sends them; from then on each one waits at least 1 s, 2 s, 4 s… after the one before.
 */
function checkedAttemptGaps(times: readonly number[]): true | string {
  for (let i = 4; i < times.length; i++) {
    const wait = Math.min(60_000, 1000 * 2 ** (i - 4));
    const gap = times[i]! - times[i - 1]!;
    if (gap < wait) return `attempt ${i} came ${gap} ms after the previous one, before its ${wait} ms wait`;
  }
  return true;
}

/** Opens `count` connections that never say HELLO, one every `everyMs`, named by `name(i)`. */
function halfOpen(e: Env, count: number, everyMs: number, name: (i: number) => string): Connection[] {
  const conns: Connection[] = [];
  for (let i = 0; i < count; i++) {
    conns.push(e.net.connect(name(i), 'host', { channels: SESSION_CHANNELS }));
    if (everyMs > 0) e.net.advance(everyMs);
  }
  return conns;
}

/** Opens half-open connections in the background: `count` of them, one per ms, while `run` goes on. */
function floodWhile(e: Env, count: number, name: (i: number) => string, during: () => boolean): number {
  let i = 0;
  while (i < count && during()) {
    e.net.connect(name(i++), 'host', { channels: SESSION_CHANNELS });
    e.net.advance(1);
  }
  return i;
}

describe('admission: half-open connections cannot lock players out', () => {
  it('1,000 half-open connections from 1,000 other addresses: a player joins within 1 s', () => {
    const e = env(1);
    // 300 attackers first, then the player while 700 more keep arriving (1,000/s).
    halfOpen(e, 300, 1, (i) => `evil-${i}`);
    expect(e.host.peerList().length).toBeLessThanOrEqual(DEFAULT_ADMISSION_LIMITS.maxPending);
    const start = e.net.now();
    const { client } = e.join('alice');
    let n = 300;
    n += floodWhile(
      e,
      700,
      (i) => `evil-${300 + i}`,
      () => client.state === 'handshaking',
    );
    const joinedAfter = e.net.now() - start;
    expect(client.state).toBe('playing');
    expect(joinedAfter).toBeLessThan(1000);
    floodWhile(
      e,
      1000 - n,
      (i) => `evil-${n + i}`,
      () => true,
    );
    expect(e.host.started).toBe(true);
    // Never more than the pending cap besides the admitted player; the evicted ones were told why.
    expect(e.host.peerList().length).toBeLessThanOrEqual(DEFAULT_ADMISSION_LIMITS.maxPending + 1);
    expect(e.refused.some((r) => r.code === 'timeout' && r.message.includes('newer connections'))).toBe(true);
  });

  it('1,000 half-open connections from 5 addresses (other ports): per-address cap, a player joins within 1 s', () => {
    const e = env(2);
    const name = (i: number): string => `evil-${i % 5}:${10_000 + i}`;
    // 10 per ms, all 1,000 within 100 ms, the player in the middle.
    for (let i = 0; i < 500; i++) {
      e.net.connect(name(i), 'host', { channels: SESSION_CHANNELS });
      if (i % 10 === 9) e.net.advance(1);
    }
    const start = e.net.now();
    const { client } = e.join('alice');
    for (let i = 500; i < 1000; i++) {
      e.net.connect(name(i), 'host', { channels: SESSION_CHANNELS });
      if (i % 10 === 9) e.net.advance(1);
    }
    e.net.runUntil(() => client.state !== 'handshaking', 1000);
    expect(client.state).toBe('playing');
    expect(e.net.now() - start).toBeLessThan(1000);
    expect(e.refused.some((r) => r.code === 'server-full' && r.message.includes('still in the handshake'))).toBe(true);
    // At most 8 pending per attacking address.
    const pending = e.host.peerList().filter((p) => p.stage === 'handshaking');
    expect(pending.length).toBeLessThanOrEqual(5 * DEFAULT_ADMISSION_LIMITS.maxPendingPerAddress);
  });

  it('a half-open connection is closed after the pre-auth timeout (default 5 s) with timeout', () => {
    const e = env(3);
    const [conn] = halfOpen(e, 1, 0, () => 'mute');
    let reason: string | undefined;
    conn!.on('close', (ev) => {
      reason = ev.reason;
    });
    e.net.runUntil(() => reason !== undefined, 10_000);
    expect(reason).toMatch(/^timeout: handshake not done within 5000 ms/);
    expect(e.net.now()).toBeGreaterThanOrEqual(5000);
    expect(e.net.now()).toBeLessThan(5200);
  });

  it('player and spectator slots count only authenticated peers', () => {
    const e = env(4, { maxSpectators: 1 });
    // Two clients in the handshake at once (HELLO sent, INFO not yet) do not take each other's slot.
    halfOpen(e, 20, 1, (i) => `evil-${i}`);
    const { client: s } = e.join('sam', { spectate: true });
    const { client: a } = e.join('alice');
    e.net.runUntil(() => s.state !== 'handshaking' && a.state !== 'handshaking', 1000);
    expect(s.state).toBe('spectating');
    expect(a.state).toBe('playing');
  });
});

describe('admission: password attempts are limited per address', () => {
  it('150 wrong passwords from one address back off (too-many-attempts, no check); another address gets in', () => {
    const e = env(5, { password: 'sesame', maxSpectators: 4 });
    const codes: string[] = [];
    for (let i = 0; i < 150; i++) {
      const spectate = i % 2 === 1;
      const { client } = e.join(`mallory:${20_000 + i}`, { password: `guess-${i}`, spectate });
      e.net.runUntil(() => client.state === 'closed', 2000);
      codes.push(client.error?.code ?? 'none');
    }
    // 3 free failures, each answered bad-password; the 4th fails and starts the back-off.
    expect(codes.slice(0, 4)).toEqual(['bad-password', 'bad-password', 'bad-password', 'bad-password']);
    // Then too-many-attempts (not bad-password, not server-full) until the wait is over.
    expect(codes.slice(4).every((c) => c === 'too-many-attempts' || c === 'bad-password')).toBe(true);
    expect(checkedAttemptGaps(e.checked)).toEqual(true);
    expect(codes.filter((c) => c === 'bad-password').length).toBe(e.checked.length);
    expect(e.checked.length).toBeLessThanOrEqual(8);
    // Blocked means unchecked: the right password from the same address is refused as well.
    const { client: right } = e.join('mallory:30000', { password: 'sesame' });
    e.net.runUntil(() => right.state === 'closed', 2000);
    expect(right.error?.code).toBe('too-many-attempts');
    // Another address gets in at once with the right password.
    const { client: alice } = e.join('alice:1', { password: 'sesame' });
    e.net.runUntil(() => alice.state !== 'handshaking', 1000);
    expect(alice.state).toBe('playing');
  });

  it('the back-off doubles with each failure once it is over, and the right password resets it', () => {
    const e = env(6, { password: 'sesame', attempts: { freeFailures: 1, baseBackoffMs: 500 } });
    const attempt = (i: number, password: string): SessionError | undefined => {
      const { client } = e.join(`mallory:${i}`, { password, spectate: true });
      e.net.runUntil(() => client.state !== 'handshaking', 2000);
      if (client.state === 'closed') return client.error;
      client.close();
      e.net.advance(100);
      return undefined;
    };
    expect(attempt(1, 'x')?.message).toBe('wrong password');
    expect(attempt(2, 'x')?.message).toBe('wrong password (next attempt in 500 ms)');
    const blocked = attempt(3, 'sesame');
    expect(blocked?.code).toBe('too-many-attempts');
    // The wait travels in the message and is parsed back on the client.
    expect(blocked?.retryAfterMs).toBeGreaterThan(400);
    expect(blocked?.retryAfterMs).toBeLessThanOrEqual(500);
    e.net.advance(500);
    expect(attempt(4, 'x')?.message).toBe('wrong password (next attempt in 1000 ms)');
    e.net.advance(1000);
    expect(attempt(5, 'sesame')).toBeUndefined();
    expect(attempt(6, 'x')?.message).toBe('wrong password');
  });

  it('spectators joining mid-game are limited the same way; the game goes on', () => {
    const e = env(7, { password: 'sesame', maxSpectators: 4 });
    const { client: alice } = e.join('alice', { password: 'sesame' });
    e.net.runUntil(() => alice.state !== 'handshaking', 1000);
    const hi = inputSource(1);
    const ai = inputSource(2);
    const codes: string[] = [];
    for (let i = 0; i < 100; i++) {
      const { client } = e.join(`eve:${i}`, { password: 'nope', spectate: true });
      for (let f = 0; f < 40 && client.state !== 'closed'; f++) {
        e.host.tick(hi());
        alice.tick(ai());
        e.net.advance(FRAME_MS);
      }
      codes.push(client.error?.code ?? client.state);
    }
    expect(codes.slice(0, 4)).toEqual(['bad-password', 'bad-password', 'bad-password', 'bad-password']);
    expect(codes.filter((c) => c === 'bad-password').length).toBe(e.checked.length);
    expect(codes.filter((c) => c === 'too-many-attempts').length).toBe(100 - e.checked.length);
    expect(checkedAttemptGaps(e.checked)).toEqual(true);
    expect(alice.state).toBe('playing');
    expect(e.host.frame).toBeGreaterThan(200);
  });
});

describe('admission: a flooding client is disconnected with flood', () => {
  it('a spectator flooding the host is cut off within 1 s; the players play on and agree', () => {
    // The memory transport's own budget is off: only the session host's can stop the flood.
    const e = env(8, { maxSpectators: 2 }, false);
    const { client: alice } = e.join('alice');
    e.net.runUntil(() => alice.state !== 'handshaking', 1000);
    const { client: evil, conn } = e.join('evil', { spectate: true });
    e.net.runUntil(() => evil.state !== 'handshaking', 1000);
    expect(evil.state).toBe('spectating');
    const hf = hostFinals(e.host);
    const af = clientFinals(alice);
    const hi = inputSource(3);
    const ai = inputSource(4);
    const junk = new Uint8Array(40);
    let floodStart: number | undefined;
    let cutAfter: number | undefined;
    for (let f = 0; f < 600; f++) {
      if (f >= 60 && conn.state === 'open') {
        floodStart ??= e.net.now();
        // 1,000 messages a frame: 62,500 a second.
        for (let k = 0; k < 1000; k++) conn.send('rb-control', junk);
      }
      if (floodStart !== undefined && cutAfter === undefined && evil.state === 'closed')
        cutAfter = e.net.now() - floodStart;
      e.host.tick(hi());
      alice.tick(ai());
      evil.tick(new Uint8Array(2));
      e.net.advance(FRAME_MS);
      hf.record();
      af.record();
    }
    expect(cutAfter).toBeDefined();
    expect(cutAfter!).toBeLessThan(1000);
    expect(evil.error?.code).toBe('flood');
    expect(e.refused.map((r) => r.code)).toEqual(['flood']);
    expect(alice.state).toBe('playing');
    expect(e.host.frame).toBeGreaterThan(500);
    const cmp = compareFinals(hf, af);
    expect(cmp.compared).toBeGreaterThan(400);
    expect(cmp.differing).toBe(0);
  });

  it('rateLimits: false lets the same flood through (the limit is what cuts it)', () => {
    const e = env(9, { maxSpectators: 2, rateLimits: false }, false);
    const { client: alice } = e.join('alice');
    e.net.runUntil(() => alice.state !== 'handshaking', 1000);
    const { client: evil, conn } = e.join('evil', { spectate: true });
    e.net.runUntil(() => evil.state !== 'handshaking', 1000);
    const junk = new Uint8Array(40);
    for (let f = 0; f < 60; f++) {
      for (let k = 0; k < 1000; k++) conn.send('rb-control', junk);
      e.host.tick(new Uint8Array(2));
      alice.tick(new Uint8Array(2));
      e.net.advance(FRAME_MS);
    }
    expect(evil.state).toBe('spectating');
  });
});

import { TestCore } from '@netplay/state/testing';
import type { CloseEvent, Connection } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import {
  decodeSessionMessage,
  encodeChallenge,
  encodeSync,
  NetplayClient,
  NetplayHost,
  SESSION_CHANNELS,
  SESSION_CONTROL_CHANNEL,
  SESSION_PROTOCOL_VERSION,
  SessionError,
  SessionMessageType,
} from '../src/index.js';
import {
  CONTENT,
  clientFinals,
  compareFinals,
  type Finals,
  FRAME_MS,
  hostFinals,
  inputSource,
  setup,
} from './harness.js';

type Env = ReturnType<typeof setup>;

function joined(env: Env, c: NetplayClient): void {
  env.net.runUntil(() => c.state !== 'handshaking', 15_000);
}

/** Ticks host and clients for `n` frames with generated inputs. */
function run(env: Env, clients: NetplayClient[], n: number, finals: Finals[] = []): void {
  const hi = inputSource(n);
  const ci = inputSource(n + 1);
  for (let i = 0; i < n; i++) {
    env.host.tick(hi());
    for (const c of clients) c.tick(ci());
    env.net.advance(FRAME_MS);
    for (const f of finals) f.record();
  }
}

function closeOf(conn: Connection): { event: CloseEvent | undefined } {
  const box: { event: CloseEvent | undefined } = { event: undefined };
  conn.on('close', (e) => {
    box.event = e;
  });
  return box;
}

describe('refusals', () => {
  it('content mismatch names both hashes; the host keeps its player', () => {
    const env = setup(10, { maxSpectators: 2 });
    const alice = env.join('alice');
    joined(env, alice);
    const bad = env.join('carol', { spectate: true, content: { ...CONTENT, contentHash: 'ffffffffffffffff' } });
    run(env, [alice, bad], 60);
    expect(bad.state).toBe('closed');
    expect(bad.error?.code).toBe('content-mismatch');
    expect(bad.error?.message).toBe(`content mismatch: host runs ${CONTENT.contentHash}, you have ffffffffffffffff`);
    expect(alice.state).toBe('playing');
    expect(env.host.frame).toBeGreaterThan(30);
  });

  it('core mismatch names both cores', () => {
    const env = setup(11);
    const c = env.join('alice', { content: { ...CONTENT, coreVersion: '2.0.0' } });
    joined(env, c);
    expect(c.error?.code).toBe('core-mismatch');
    expect(c.error?.message).toBe('core mismatch: host runs test-core 1.0.0, you have test-core 2.0.0');
    expect(env.host.started).toBe(false);
  });

  it('version mismatch (the client is newer) names both versions', () => {
    const env = setup(12);
    const c = env.join('alice', { protocolVersion: SESSION_PROTOCOL_VERSION + 1 });
    joined(env, c);
    expect(c.error?.code).toBe('version-mismatch');
    expect(c.error?.message).toBe(
      `version mismatch: host speaks session protocol ${SESSION_PROTOCOL_VERSION}, you speak ${SESSION_PROTOCOL_VERSION + 1}`,
    );
  });

  it('version mismatch (the host is newer) is refused by the client, naming both versions', () => {
    const env = setup(13);
    const fake = env.net.listen('fake', { channels: SESSION_CHANNELS });
    let hostSide: CloseEvent | undefined;
    fake.on('connection', (conn) => {
      conn.on('close', (e) => {
        hostSide = e;
      });
      conn.on('message', ({ data }) => {
        if (decodeSessionMessage(data).type === SessionMessageType.Hello)
          conn.send(
            SESSION_CONTROL_CHANNEL,
            encodeChallenge({ version: 9, passwordRequired: false, salt: 1, nick: 'x', hostNick: 'h' }),
          );
      });
    });
    const c = new NetplayClient(env.net.connect('alice', 'fake', { channels: SESSION_CHANNELS }), {
      core: new TestCore({ players: 2 }),
      content: CONTENT,
      clock: env.net.clock,
      nick: 'alice',
    });
    env.net.runUntil(() => hostSide !== undefined, 10_000);
    expect(c.error?.code).toBe('version-mismatch');
    expect(c.error?.message).toBe(
      `version mismatch: host speaks session protocol 9, you speak ${SESSION_PROTOCOL_VERSION}`,
    );
    expect(hostSide?.reason).toBe(c.error?.closeReason);
  });

  it('a lockstep-p2p SYNC whose roster lacks the host is refused with protocol', () => {
    const env = setup(14);
    const fake = env.net.listen('fake', { channels: SESSION_CHANNELS });
    let hostSide: CloseEvent | undefined;
    fake.on('connection', (conn) => {
      conn.on('close', (e) => {
        hostSide = e;
      });
      conn.on('message', ({ data }) => {
        const m = decodeSessionMessage(data);
        if (m.type === SessionMessageType.Hello)
          conn.send(
            SESSION_CONTROL_CHANNEL,
            encodeChallenge({ passwordRequired: false, salt: 1, nick: 'a', hostNick: 'h' }),
          );
        if (m.type === SessionMessageType.Info)
          conn.send(
            SESSION_CONTROL_CHANNEL,
            encodeSync({
              mode: 'lockstep-p2p',
              frame: 0,
              players: 2,
              slot: 1,
              inputDelay: 0,
              inputBytes: 2,
              roster: [],
              state: new Uint8Array(0),
            }),
          );
      });
    });
    const c = new NetplayClient(env.net.connect('alice', 'fake', { channels: SESSION_CHANNELS }), {
      core: new TestCore({ players: 2 }),
      content: CONTENT,
      clock: env.net.clock,
      nick: 'alice',
    });
    env.net.runUntil(() => hostSide !== undefined, 10_000);
    expect(c.error?.code).toBe('protocol');
    expect(c.error?.message).toMatch(/roster in SYNC lacks the host/);
    expect(SessionError.fromCloseReason(hostSide?.reason ?? '').code).toBe('protocol');
  });

  it('a host cannot be created with a mode or player count this version does not run', () => {
    const core = new TestCore({ players: 4 });
    const make = (o: object) => () =>
      new NetplayHost({ core, content: CONTENT, clock: setup(1).net.clock, randomU32: () => 1, ...o });
    expect(make({ mode: 'teleport' })).toThrow(expect.objectContaining({ code: 'unsupported-mode' }));
    expect(make({ mode: 'frame-advance', players: 17 })).toThrow(expect.objectContaining({ code: 'bad-argument' }));
    expect(make({ mode: 'lockstep-p2p', players: 1 })).toThrow(expect.objectContaining({ code: 'bad-argument' }));
    expect(make({ mode: 'lockstep-cs', players: 1 })).toThrow(expect.objectContaining({ code: 'bad-argument' }));
    expect(make({ players: 17 })).toThrow(expect.objectContaining({ code: 'bad-argument' }));
  });

  it('server full: a second player and spectators beyond the limit are refused', () => {
    const env = setup(15, { maxSpectators: 1 });
    const alice = env.join('alice');
    joined(env, alice);
    const bob = env.join('bob');
    const s1 = env.join('s1', { spectate: true });
    joined(env, bob);
    joined(env, s1);
    const s2 = env.join('s2', { spectate: true });
    joined(env, s2);
    expect(bob.error?.code).toBe('server-full');
    expect(bob.error?.message).toBe('server full: all 2 player slots are taken');
    expect(s1.state).toBe('spectating');
    expect(s2.error?.code).toBe('server-full');
    expect(alice.state).toBe('playing');
  });

  it('a client that never speaks is dropped with timeout', () => {
    const env = setup(16, { handshakeTimeoutMs: 2000 });
    const conn = env.net.connect('mute', 'host', { channels: SESSION_CHANNELS });
    const box = closeOf(conn);
    env.net.runUntil(() => box.event !== undefined, 10_000);
    expect(box.event?.code).toBe('remote');
    expect(SessionError.fromCloseReason(box.event?.reason ?? '').code).toBe('timeout');
    expect(env.net.clock.now()).toBeGreaterThanOrEqual(2000);
  });
});

describe('garbage and departures', () => {
  it('garbage on the control channel disconnects that peer only, with a protocol reason', () => {
    const env = setup(17, { maxSpectators: 4 });
    const alice = env.join('alice');
    joined(env, alice);
    const finals = [hostFinals(env.host), clientFinals(alice)];
    run(env, [alice], 50, finals);
    // a peer in the handshake
    const raw = env.net.connect('raw', 'host', { channels: SESSION_CHANNELS });
    const rawClose = closeOf(raw);
    raw.send(SESSION_CONTROL_CHANNEL, new Uint8Array([0xee, 1, 2, 3]));
    // an admitted spectator that turns bad
    const specConn = env.net.connect('spec', 'host', { channels: SESSION_CHANNELS });
    const specClose = closeOf(specConn);
    const spec = new NetplayClient(specConn, {
      core: new TestCore({ players: 2, seed: 7 }),
      content: CONTENT,
      clock: env.net.clock,
      nick: 'spec',
      spectate: true,
    });
    run(env, [alice, spec], 50, finals);
    expect(spec.state).toBe('spectating');
    specConn.send(SESSION_CONTROL_CHANNEL, new Uint8Array([SessionMessageType.Hello]));
    run(env, [alice, spec], 100, finals);
    expect(rawClose.event?.code).toBe('remote');
    expect(SessionError.fromCloseReason(rawClose.event?.reason ?? '').code).toBe('protocol');
    expect(specClose.event?.code).toBe('remote');
    expect(spec.error?.code).toBe('protocol');
    expect(alice.state).toBe('playing');
    expect(env.host.peerList().map((p) => p.nick)).toEqual(['alice']);
    for (let i = 0; i < 60; i++) {
      env.host.rollback?.poll();
      alice.rollback?.poll();
      env.net.advance(FRAME_MS);
      for (const f of finals) f.record();
    }
    const { compared, differing } = compareFinals(finals[0] as Finals, finals[1] as Finals);
    expect(compared).toBeGreaterThan(150);
    expect(differing).toBe(0);
  });

  it('game messages before the handshake are refused as protocol errors', () => {
    const env = setup(18);
    const raw = env.net.connect('raw', 'host', { channels: SESSION_CHANNELS });
    const box = closeOf(raw);
    raw.send('rb-control', new Uint8Array([4]));
    env.net.runUntil(() => box.event !== undefined, 10_000);
    expect(SessionError.fromCloseReason(box.event?.reason ?? '').code).toBe('protocol');
  });

  it('a player that leaves mid-game: the host is told and keeps running', () => {
    const env = setup(19);
    const left: string[] = [];
    env.host.on('peer-left', ({ nick }) => left.push(nick));
    const alice = env.join('alice');
    joined(env, alice);
    run(env, [alice], 100);
    const at = env.host.frame;
    alice.close();
    run(env, [alice], 200);
    expect(left).toEqual(['alice']);
    expect(alice.error?.code).toBe('closed');
    expect(env.host.frame).toBeGreaterThan(at + 150);
  });
});

describe('spectators', () => {
  it('a spectator joining mid-game starts from the host savestate and agrees on hashes', () => {
    const env = setup(20);
    const alice = env.join('alice');
    joined(env, alice);
    const finals = [hostFinals(env.host), clientFinals(alice)];
    run(env, [alice], 150, finals);
    const spec = env.join('watcher', { spectate: true });
    const specFinals = clientFinals(spec);
    finals.push(specFinals);
    run(env, [alice, spec], 250, finals);
    expect(spec.state).toBe('spectating');
    const joinFrame = spec.spectator?.joinFrame ?? -1;
    expect(joinFrame).toBeGreaterThan(100);
    expect(Math.min(...specFinals.hashes.keys())).toBeGreaterThanOrEqual(joinFrame);
    const { compared, differing } = compareFinals(finals[0] as Finals, specFinals);
    expect(compared).toBeGreaterThan(150);
    expect(differing).toBe(0);
  });

  it('a spectator that arrives before the game waits and is synced at the start', () => {
    const env = setup(21);
    const spec = env.join('early', { spectate: true });
    joined(env, spec);
    expect(spec.state).toBe('spectating');
    // longer than the handshake timeouts: an admitted spectator just waits for the game
    for (let i = 0; i < 1000; i++) {
      spec.tick();
      env.net.advance(FRAME_MS);
    }
    expect(spec.state).toBe('spectating');
    expect(spec.frame).toBeUndefined();
    expect(env.host.started).toBe(false);
    const alice = env.join('alice');
    joined(env, alice);
    const finals = [hostFinals(env.host), clientFinals(spec)];
    run(env, [alice, spec], 200, finals);
    const { compared, differing } = compareFinals(finals[0] as Finals, finals[1] as Finals);
    expect(compared).toBeGreaterThan(100);
    expect(differing).toBe(0);
  });
});

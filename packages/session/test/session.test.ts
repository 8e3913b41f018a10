import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { NetplayClient, SESSION_CHANNELS } from '../src/index.js';
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

/** Plays until the host and every playing client reached `frames` (or a budget runs out), recording finals. */
function play(env: Env, clients: NetplayClient[], frames: number, finals: Finals[] = [], seed = 1): void {
  const hi = inputSource(seed * 31 + 1);
  const ci = clients.map((_, i) => inputSource(seed * 31 + 2 + i));
  for (let i = 0; i < frames * 3; i++) {
    env.host.tick(hi());
    clients.forEach((c, k) => {
      c.tick(ci[k]?.());
    });
    env.net.advance(FRAME_MS);
    for (const f of finals) f.record();
    const done = env.host.frame >= frames && clients.every((c) => c.state !== 'playing' || (c.frame ?? 0) >= frames);
    if (done) break;
  }
}

/** Lets the last inputs arrive without advancing, so final frames catch up. */
function settle(env: Env, clients: NetplayClient[], finals: Finals[]): void {
  for (let i = 0; i < 60; i++) {
    env.host.rollback?.poll();
    for (const c of clients) c.rollback?.poll();
    env.net.advance(FRAME_MS);
    for (const f of finals) f.record();
  }
}

function joined(env: Env, c: NetplayClient): void {
  env.net.runUntil(() => c.state !== 'handshaking', 10_000);
}

describe('handshake and rollback game', () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 2 ** 30 }),
      fc.integer({ min: 0, max: 60 }),
      fc.integer({ min: 0, max: 10 }),
      fc.double({ min: 0, max: 0.05, noNaN: true }),
      fc.integer({ min: 0, max: 3 }),
    ],
    { numRuns: 8 },
  )('host + client agree on every final state over 300 frames', (seed, latencyMs, jitterMs, loss, inputDelay) => {
    const env = setup(seed, { inputDelay }, { latencyMs, jitterMs, loss });
    const client = env.join('alice');
    joined(env, client);
    expect(client.state).toBe('playing');
    expect(client.info).toMatchObject({
      nick: 'alice',
      hostNick: 'host',
      slot: 1,
      players: 2,
      inputDelay,
      mode: 'rollback',
    });
    const finals = [hostFinals(env.host), clientFinals(client)];
    play(env, [client], 300, finals, seed);
    settle(env, [client], finals);
    expect(env.host.frame).toBeGreaterThanOrEqual(300);
    expect(client.frame).toBeGreaterThanOrEqual(300);
    const [h, c] = finals as [Finals, Finals];
    const { compared, differing } = compareFinals(h, c);
    expect(compared).toBeGreaterThan(250);
    expect(differing).toBe(0);
  });

  it('the client starts from the host state, not its own power-on state', () => {
    // The host's core has advanced (loaded state) before the session: the client's own core starts elsewhere.
    const hostCore = new TestCore({ players: 2, seed: 7 });
    for (let i = 0; i < 37; i++) hostCore.advance();
    const env = setup(3, { core: hostCore });
    const client = env.join('alice');
    joined(env, client);
    expect(client.core.checksum()).toBe(hostCore.checksum());
    const finals = [hostFinals(env.host), clientFinals(client)];
    play(env, [client], 120, finals, 3);
    settle(env, [client], finals);
    const { compared, differing } = compareFinals(finals[0] as Finals, finals[1] as Finals);
    expect(compared).toBeGreaterThan(100);
    expect(differing).toBe(0);
  });
});

describe('nicks', () => {
  it('renames duplicates and tells the client its assigned nick', () => {
    const env = setup(4, { nick: 'bob', maxSpectators: 4 });
    const player = env.join('bob');
    joined(env, player);
    const s1 = env.join('bob', { spectate: true });
    joined(env, s1);
    const s2 = env.join('bob', { spectate: true });
    joined(env, s2);
    expect(player.info?.nick).toBe('bob (2)');
    expect(new Set([s1.info?.nick, s2.info?.nick])).toEqual(new Set(['bob (3)', 'bob (4)']));
    expect(
      env.host
        .peerList()
        .map((p) => p.nick)
        .sort(),
    ).toEqual(['bob (2)', 'bob (3)', 'bob (4)']);
  });

  it('refuses an empty nick', () => {
    const env = setup(5);
    const c = env.join('');
    joined(env, c);
    expect(c.state).toBe('closed');
    expect(c.error?.code).toBe('bad-nick');
  });
});

describe('password', () => {
  it('admits the right password, refuses a wrong or missing one, and the game goes on', () => {
    const env = setup(6, { password: 's3cret' });
    const refused: string[] = [];
    env.host.on('peer-refused', ({ error }) => refused.push(error.code));
    const alice = env.join('alice', { password: 's3cret' });
    joined(env, alice);
    expect(alice.state).toBe('playing');
    const finals = [hostFinals(env.host), clientFinals(alice)];
    play(env, [alice], 60, finals, 6);
    const mallory = env.join('mallory', { password: 'guess', spectate: true });
    const anon = env.join('anon', { spectate: true });
    // the game keeps running during the refusals
    play(env, [alice, mallory, anon], 200, finals, 7);
    expect(mallory.state).toBe('closed');
    expect(mallory.error?.code).toBe('bad-password');
    expect(mallory.error?.message).toBe('wrong password');
    expect(anon.error?.code).toBe('bad-password');
    expect(refused.sort()).toEqual(['bad-password', 'bad-password']);
    expect(alice.state).toBe('playing');
    settle(env, [alice], finals);
    expect(env.host.frame).toBeGreaterThanOrEqual(200);
    const { compared, differing } = compareFinals(finals[0] as Finals, finals[1] as Finals);
    expect(compared).toBeGreaterThan(150);
    expect(differing).toBe(0);
  });

  it('never sends the password in clear', () => {
    const env = setup(7, { password: 'hunter2-password' });
    const conn = env.net.connect('eve', 'host', { channels: SESSION_CHANNELS });
    const sent: Uint8Array[] = [];
    const original = conn.send.bind(conn);
    conn.send = (channel, data) => {
      sent.push(data.slice());
      original(channel, data);
    };
    const c = new NetplayClient(conn, {
      core: new TestCore({ players: 2, seed: 7 }),
      content: CONTENT,
      clock: env.net.clock,
      nick: 'eve',
      password: 'hunter2-password',
    });
    joined(env, c);
    expect(c.state).toBe('playing');
    const needle = new TextEncoder().encode('hunter2');
    const contains = (hay: Uint8Array) => hay.some((_, i) => needle.every((b, j) => hay[i + j] === b));
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.some(contains)).toBe(false);
  });
});

import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import {
  encodeChallenge,
  encodeHello,
  encodeInfo,
  encodeRefuse,
  encodeSync,
  NetplayClient,
  SESSION_CHANNELS,
  SESSION_CONTROL_CHANNEL,
  SESSION_ERROR_CODES,
  SESSION_MODES,
  SessionError,
} from '../src/index.js';
import { CONTENT, FRAME_MS, inputSource, setup } from './harness.js';

const channelName = fc.constantFrom(...SESSION_CHANNELS.map((c) => c.name));
const smallString = fc.constantFrom('', 'a', 'host', CONTENT.coreId, CONTENT.coreVersion, CONTENT.contentHash);

/** Messages a hostile or broken client may send: valid handshake messages with odd fields, or garbage. */
const clientMessage = fc.oneof(
  fc.record({ channel: channelName, data: fc.uint8Array({ maxLength: 40 }) }),
  fc
    .record({ spectate: fc.boolean(), nick: smallString, version: fc.constantFrom(1, 2) })
    .map((m) => ({ channel: SESSION_CONTROL_CHANNEL, data: encodeHello(m) })),
  fc
    .record({
      passwordHash: fc.constantFrom(new Uint8Array(0), new Uint8Array(32)),
      coreId: smallString,
      coreVersion: smallString,
      contentHash: smallString,
    })
    .map((m) => ({ channel: SESSION_CONTROL_CHANNEL, data: encodeInfo(m) })),
  fc
    .record({ code: fc.constantFrom(...SESSION_ERROR_CODES), message: smallString })
    .map((m) => ({ channel: SESSION_CONTROL_CHANNEL, data: encodeRefuse(m) })),
);

/** Messages a hostile or broken host may send. */
const hostMessage = fc.oneof(
  fc.record({ channel: channelName, data: fc.uint8Array({ maxLength: 40 }) }),
  fc
    .record({ passwordRequired: fc.boolean(), salt: fc.nat(), nick: smallString, hostNick: smallString })
    .map((m) => ({ channel: SESSION_CONTROL_CHANNEL, data: encodeChallenge(m) })),
  fc
    .record({
      mode: fc.constantFrom(...SESSION_MODES),
      frame: fc.nat(1000),
      players: fc.integer({ min: 0, max: 40 }),
      slot: fc.constantFrom(0, 1, 2, 255),
      inputDelay: fc.nat(255),
      inputBytes: fc.constantFrom(0, 1, 2),
      roster: fc.array(fc.record({ slot: fc.nat(255), nick: smallString }), { maxLength: 3 }),
      state: fc.uint8Array({ maxLength: 30 }),
    })
    .map((m) => ({ channel: SESSION_CONTROL_CHANNEL, data: encodeSync(m) })),
  fc
    .record({ code: fc.constantFrom(...SESSION_ERROR_CODES), message: smallString })
    .map((m) => ({ channel: SESSION_CONTROL_CHANNEL, data: encodeRefuse(m) })),
);

describe('hostile peers', () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 2 ** 30 }),
      fc.constantFrom('rollback', 'lockstep-cs'),
      fc.array(clientMessage, { maxLength: 12 }),
    ],
    { numRuns: 30 },
  )('a client sending anything never breaks the host or its player', (seed, mode, messages) => {
    const env = setup(seed, { mode: mode as 'rollback' | 'lockstep-cs' });
    const alice = env.join('alice');
    env.net.runUntil(() => alice.state !== 'handshaking', 10_000);
    expect(alice.state).toBe('playing');
    const raw = env.net.connect('raw', 'host', { channels: SESSION_CHANNELS });
    env.net.runUntil(() => raw.state === 'open', 5000);
    const hi = inputSource(seed);
    const ai = inputSource(seed + 1);
    for (const m of messages) {
      if (raw.state !== 'closed') raw.send(m.channel, m.data);
      env.host.tick(hi());
      alice.tick(ai());
      env.net.advance(FRAME_MS);
    }
    for (let i = 0; i < 120; i++) {
      env.host.tick(hi());
      alice.tick(ai());
      env.net.advance(FRAME_MS);
    }
    expect(alice.state).toBe('playing');
    expect(env.host.frame).toBeGreaterThan(60);
    expect(alice.frame ?? 0).toBeGreaterThan(60);
  });

  test.prop([fc.integer({ min: 1, max: 2 ** 30 }), fc.array(hostMessage, { maxLength: 8 })], { numRuns: 60 })(
    'a host sending anything ends the client with a SessionError or a running game, never a throw',
    (seed, messages) => {
      const env = setup(seed);
      const fake = env.net.listen('fake', { channels: SESSION_CHANNELS });
      fake.on('connection', (conn) => {
        let sent = false;
        conn.on('message', () => {
          if (sent) return;
          sent = true;
          for (const m of messages) if (conn.state !== 'closed') conn.send(m.channel, m.data);
        });
      });
      const c = new NetplayClient(env.net.connect('alice', 'fake', { channels: SESSION_CHANNELS }), {
        core: new TestCore({ players: 2 }),
        content: CONTENT,
        clock: env.net.clock,
        nick: 'alice',
        handshakeTimeoutMs: 3000,
      });
      const input = inputSource(seed);
      for (let i = 0; i < 300; i++) {
        c.tick(input());
        env.net.advance(FRAME_MS);
      }
      if (c.state === 'closed') expect(c.error).toBeInstanceOf(SessionError);
      else expect(c.info).toBeDefined();
    },
  );
});

describe('a host asking for a session the schedulers refuse', () => {
  it('ends the client with protocol, not a throw', () => {
    const env = setup(3);
    const fake = env.net.listen('fake', { channels: SESSION_CHANNELS });
    fake.on('connection', (conn) => {
      conn.on('message', () => {
        conn.send(
          SESSION_CONTROL_CHANNEL,
          encodeChallenge({ passwordRequired: false, salt: 1, nick: 'a', hostNick: 'h' }),
        );
        conn.send(
          SESSION_CONTROL_CHANNEL,
          encodeSync({
            mode: 'rollback',
            frame: 0,
            players: 40,
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
      core: new TestCore({ players: 64 }),
      content: CONTENT,
      clock: env.net.clock,
      nick: 'alice',
    });
    env.net.runUntil(() => c.state === 'closed', 10_000);
    expect(c.error?.code).toBe('protocol');
    expect(c.error?.message).toMatch(/^cannot run the host's session: /);
  });
});

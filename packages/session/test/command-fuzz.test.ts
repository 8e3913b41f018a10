import { fc, test } from '@fast-check/vitest';
import { DecodeError } from '@netplay/protocol';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import {
  decodeSessionMessage,
  encodeChat,
  encodeChatSend,
  encodeCommand,
  encodeCommandRequest,
  encodeHello,
  encodeSync,
  MAX_CHAT_BYTES,
  NetplayClient,
  SESSION_CHANNELS,
  SESSION_COMMAND_KINDS,
  SessionError,
  SessionMessageType,
  sanitizeChat,
} from '../src/index.js';
import { CORE_SEED, track } from './control-harness.js';
import { CONTENT, FRAME_MS, inputSource, setup } from './harness.js';

const utf8 = new TextEncoder();
const chatText = fc.string({ maxLength: 80, unit: 'binary' }).filter((t) => utf8.encode(t).length <= MAX_CHAT_BYTES);

describe('issue 15 messages: codecs', () => {
  test.prop([chatText])('CHAT_SEND round-trips', (text) => {
    expect(decodeSessionMessage(encodeChatSend({ text }))).toEqual({ type: SessionMessageType.ChatSend, text });
  });

  test.prop([fc.nat(0xffffffff), fc.nat(0xffffffff), fc.nat(255), fc.string({ maxLength: 32 }), chatText])(
    'CHAT round-trips',
    (seq, frame, slot, nick, text) => {
      expect(decodeSessionMessage(encodeChat({ seq, frame, slot, nick, text }))).toEqual({
        type: SessionMessageType.Chat,
        seq,
        frame,
        slot,
        nick,
        text,
      });
    },
  );

  test.prop([fc.constantFrom<'pause' | 'resume'>('pause', 'resume')])('COMMAND_REQUEST round-trips', (kind) => {
    expect(decodeSessionMessage(encodeCommandRequest({ kind }))).toEqual({
      type: SessionMessageType.CommandRequest,
      kind,
    });
  });

  test.prop([fc.constantFrom(...SESSION_COMMAND_KINDS), fc.nat(0xffffffff)])('COMMAND round-trips', (kind, frame) => {
    expect(decodeSessionMessage(encodeCommand({ kind, frame }))).toEqual({
      type: SessionMessageType.Command,
      kind,
      frame,
    });
  });

  test.prop([fc.integer({ min: 2, max: 255 }), fc.string({ maxLength: 20 })])(
    'HELLO carries local players (absent when 1: the bytes of a single player are as before)',
    (localPlayers, nick) => {
      expect(decodeSessionMessage(encodeHello({ spectate: false, nick, localPlayers }))).toMatchObject({
        localPlayers,
      });
      expect(encodeHello({ spectate: false, nick, localPlayers: 1 })).toEqual(encodeHello({ spectate: false, nick }));
    },
  );

  test.prop([
    fc.integer({ min: 1, max: 16 }),
    fc.boolean(),
    fc.array(fc.integer({ min: 1, max: 16 }), { maxLength: 4 }),
  ])('SYNC carries the slot layout', (portsPerSlot, commandByte, localPlayers) => {
    const roster = localPlayers.map((_, i) => ({ slot: i, nick: `p${i}` }));
    const m = {
      mode: 'rollback' as const,
      frame: 3,
      players: 4,
      slot: 1,
      inputDelay: 0,
      inputBytes: 2,
      roster,
      state: new Uint8Array(5),
      portsPerSlot,
      commandByte,
      localPlayers,
    };
    expect(decodeSessionMessage(encodeSync(m))).toEqual({ type: SessionMessageType.Sync, ...m });
  });

  test.prop([fc.constantFrom(7, 8, 9, 10), fc.uint8Array({ maxLength: 300 })], { numRuns: 2000 })(
    'any body after a new type: a message or DecodeError',
    (type, body) => {
      const bytes = new Uint8Array(body.length + 1);
      bytes[0] = type;
      bytes.set(body, 1);
      try {
        const m = decodeSessionMessage(bytes);
        if (m.type === SessionMessageType.ChatSend || m.type === SessionMessageType.Chat)
          expect(utf8.encode(m.text).length).toBeLessThanOrEqual(MAX_CHAT_BYTES);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
      }
    },
  );

  it('a chat line over 256 bytes does not decode (too-large), whatever the encoder does', () => {
    const body = new Uint8Array(3 + 257);
    body[0] = SessionMessageType.ChatSend;
    new DataView(body.buffer).setUint16(1, 257);
    body.fill(0x61, 3);
    expect(() => decodeSessionMessage(body)).toThrow(DecodeError);
    expect(() => decodeSessionMessage(body)).toThrow(/chat text of 257 bytes \(at most 256\)/);
  });

  it('sanitizing removes control and bidi characters, trims, and keeps other text', () => {
    expect(sanitizeChat(' hi\u0007\n there\u202e\u0085 ')).toBe('hi there');
    expect(sanitizeChat('héllo 👋')).toBe('héllo 👋');
    expect(sanitizeChat('a\ud800b')).toBe('a\ufffdb');
  });
});

/** Host + a well-behaved player + a raw connection that joins as a player (or spectator) and then sends `bytes`. */
function hostile(seed: number, bytes: Uint8Array, spectate = false) {
  const env = setup(seed, {
    players: spectate ? 2 : 3,
    maxSpectators: 2,
    core: new TestCore({ players: 3, seed: CORE_SEED }),
  });
  const good = env.join('good', { core: new TestCore({ players: 3, seed: CORE_SEED }) });
  const conn = env.net.connect('evil', 'host', { channels: SESSION_CHANNELS });
  const evil = new NetplayClient(conn, {
    core: new TestCore({ players: 3, seed: CORE_SEED }),
    content: CONTENT,
    clock: env.net.clock,
    nick: 'evil',
    fps: 1000 / FRAME_MS,
    spectate,
  });
  const refused: SessionError[] = [];
  env.host.on('peer-refused', ({ error }) => refused.push(error));
  const gt = track(good);
  const ht = track(env.host);
  env.net.runUntil(() => good.state !== 'handshaking' && evil.state !== 'handshaking', 10_000);
  const hi = inputSource(seed);
  const gi = inputSource(seed + 1);
  for (let t = 0; t < 300; t++) {
    if (t === 100) conn.send('np-session', bytes);
    env.host.tick(hi());
    good.tick(gi());
    evil.tick();
    env.net.advance(FRAME_MS);
  }
  return { env, good, evil, refused, gt, ht };
}

describe('issue 15 messages: hostile peers', () => {
  it('a player sending a chat line over 256 bytes is disconnected with protocol; the others play on', () => {
    const body = new Uint8Array(3 + 300);
    body[0] = SessionMessageType.ChatSend;
    new DataView(body.buffer).setUint16(1, 300);
    body.fill(0x41, 3);
    const { good, evil, refused, env } = hostile(11, body);
    expect(evil.state).toBe('closed');
    expect(evil.error?.code).toBe('protocol');
    expect(refused.map((e) => e.code)).toEqual(['protocol']);
    expect(refused[0]?.message).toMatch(/chat text of 300 bytes \(at most 256\)/);
    expect(good.state).toBe('playing');
    expect(env.host.rollback?.endReason).toBeUndefined();
  });

  it('a chat line with control characters from the wire reaches everyone sanitized, from the host-assigned nick', () => {
    const { good, evil, gt, ht } = hostile(12, encodeChatSend({ text: 'bad\u001b[2Jnews\r\n' }));
    expect(evil.state).toBe('playing');
    expect(good.state).toBe('playing');
    expect(ht.chats).toEqual(['0 evil: bad[2Jnews']);
    expect(gt.chats).toEqual(ht.chats);
  });

  it('a spectator asking for a pause is disconnected with protocol; the game is not paused', () => {
    const { good, evil, refused, env } = hostile(13, encodeCommandRequest({ kind: 'pause' }), true);
    expect(evil.state).toBe('closed');
    expect(refused.map((e) => `${e.code}: ${e.message}`)).toEqual(['protocol: pause request from a spectator']);
    expect(env.host.paused).toBe(false);
    expect(good.state).toBe('playing');
  });

  test.prop([fc.constantFrom(7, 9), fc.uint8Array({ maxLength: 40 })], { numRuns: 8 })(
    'any body after CHAT_SEND or COMMAND_REQUEST: accepted, or the sender alone is disconnected with protocol',
    (type, body) => {
      const bytes = new Uint8Array(body.length + 1);
      bytes[0] = type;
      bytes.set(body, 1);
      const { good, evil, refused } = hostile(14, bytes);
      expect(good.state).toBe('playing');
      if (evil.state === 'closed') expect(refused.map((e) => e.code)).toEqual(['protocol']);
      else expect(refused).toEqual([]);
    },
  );
});

describe('issue 15 API errors', () => {
  it('chat: empty or oversize text is bad-argument, nothing is sent', () => {
    const env = setup(21);
    const c = env.join('bob');
    env.net.runUntil(() => c.state !== 'handshaking', 5000);
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof SessionError ? `${e.code}: ${e.message}` : String(e);
      }
      return 'no error';
    };
    expect(err(() => env.host.chat('\n\t'))).toBe(
      'bad-argument: chat text is empty (after removing control characters)',
    );
    expect(err(() => c.chat('é'.repeat(129)))).toBe('bad-argument: chat text is 258 UTF-8 bytes; at most 256');
    expect(err(() => env.host.chat('x'.repeat(256)))).toBe('no error');
  });

  it('pause and reset before the start are bad-argument; a spectator cannot pause', () => {
    const env = setup(22, { players: 3, core: new TestCore({ players: 3, seed: CORE_SEED }) });
    expect(() => env.host.pause()).toThrow(/cannot pause: the game has not started/);
    expect(() => env.host.reset()).toThrow(/cannot reset: the game has not started/);
    const s = env.join('watcher', { spectate: true });
    env.net.runUntil(() => s.state !== 'handshaking', 5000);
    expect(() => s.pause()).toThrow(/only a player in a running game can pause/);
  });

  it('lockstep-p2p with a 4-byte core has no room for the command byte: pause is unsupported-mode', () => {
    const core = () => new TestCore({ players: 2, seed: CORE_SEED, inputBytes: 4 });
    const env = setup(23, { mode: 'lockstep-p2p', core: core() });
    const c = env.join('bob', { core: core() });
    env.net.runUntil(() => c.state !== 'handshaking', 5000);
    expect(c.state).toBe('playing');
    expect(() => env.host.pause()).toThrow(SessionError);
    expect(() => env.host.reset()).toThrow(/command byte does not fit/);
  });
});

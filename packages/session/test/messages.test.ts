import { fc, test } from '@fast-check/vitest';
import { DecodeError } from '@netplay/protocol';
import { describe, expect, it } from 'vitest';
import {
  decodeSessionMessage,
  encodeChallenge,
  encodeHello,
  encodeInfo,
  encodeRefuse,
  encodeSync,
  encodeWait,
  passwordProof,
  SESSION_ERROR_CODES,
  SESSION_MAGIC,
  SESSION_MODES,
  SESSION_PROTOCOL_VERSION,
  SessionError,
  SessionMessageType,
} from '../src/index.js';

const nick = fc.string({ maxLength: 20 });
const u32 = fc.integer({ min: 0, max: 0xffffffff });

describe('session messages', () => {
  test.prop([fc.boolean(), nick])('HELLO round-trips', (spectate, n) => {
    expect(decodeSessionMessage(encodeHello({ spectate, nick: n }))).toEqual({
      type: SessionMessageType.Hello,
      magic: SESSION_MAGIC,
      version: SESSION_PROTOCOL_VERSION,
      spectate,
      nick: n,
    });
  });

  test.prop([fc.integer({ min: 0, max: 0xffff }), fc.boolean(), nick])(
    'HELLO of another version decodes its header only',
    (version, spectate, n) => {
      fc.pre(version !== SESSION_PROTOCOL_VERSION);
      const m = decodeSessionMessage(encodeHello({ version, spectate, nick: n }));
      expect(m).toMatchObject({ type: SessionMessageType.Hello, version });
    },
  );

  test.prop([fc.boolean(), u32, nick, nick])('CHALLENGE round-trips', (passwordRequired, salt, n, h) => {
    expect(decodeSessionMessage(encodeChallenge({ passwordRequired, salt, nick: n, hostNick: h }))).toEqual({
      type: SessionMessageType.Challenge,
      magic: SESSION_MAGIC,
      version: SESSION_PROTOCOL_VERSION,
      passwordRequired,
      salt,
      nick: n,
      hostNick: h,
    });
  });

  test.prop([
    fc.oneof(fc.constant(new Uint8Array(0)), fc.uint8Array({ minLength: 32, maxLength: 32 })),
    nick,
    nick,
    nick,
  ])('INFO round-trips', (passwordHash, coreId, coreVersion, contentHash) => {
    expect(decodeSessionMessage(encodeInfo({ passwordHash, coreId, coreVersion, contentHash }))).toEqual({
      type: SessionMessageType.Info,
      passwordHash,
      coreId,
      coreVersion,
      contentHash,
    });
  });

  test.prop([
    fc.constantFrom(...SESSION_MODES),
    u32,
    fc.integer({ min: 0, max: 255 }),
    fc.integer({ min: 0, max: 255 }),
    fc.integer({ min: 0, max: 255 }),
    fc.integer({ min: 0, max: 0xffff }),
    fc.array(fc.record({ slot: fc.integer({ min: 0, max: 255 }), nick }), { maxLength: 5 }),
    fc.uint8Array({ maxLength: 300 }),
  ])('SYNC round-trips', (mode, frame, players, slot, inputDelay, inputBytes, roster, state) => {
    const m = { mode, frame, players, slot, inputDelay, inputBytes, roster, state };
    expect(decodeSessionMessage(encodeSync(m))).toEqual({ type: SessionMessageType.Sync, ...m });
  });

  test.prop([fc.nat(255), fc.nat(255)])('WAIT round-trips', (joined, players) => {
    expect(decodeSessionMessage(encodeWait({ joined, players }))).toEqual({
      type: SessionMessageType.Wait,
      joined,
      players,
    });
  });

  test.prop([fc.constantFrom(...SESSION_ERROR_CODES), fc.string({ maxLength: 300 })])(
    'REFUSE round-trips, and close reasons parse back to the code',
    (code, message) => {
      expect(decodeSessionMessage(encodeRefuse({ code, message }))).toEqual({
        type: SessionMessageType.Refuse,
        code,
        message,
      });
      const e = new SessionError(code, message);
      const back = SessionError.fromCloseReason(e.closeReason);
      expect(back.code).toBe(code);
      expect(back.message).toBe(message);
    },
  );

  test.prop([fc.uint8Array({ maxLength: 80 })], { numRuns: 2000 })('any bytes: a message or DecodeError', (bytes) => {
    try {
      decodeSessionMessage(bytes);
    } catch (e) {
      expect(e).toBeInstanceOf(DecodeError);
    }
  });

  test.prop([fc.constantFrom(1, 2, 3, 4, 5, 6), fc.uint8Array({ maxLength: 60 })], { numRuns: 2000 })(
    'any body after a known type: a message or DecodeError',
    (type, body) => {
      const bytes = new Uint8Array(body.length + 1);
      bytes[0] = type;
      bytes.set(body, 1);
      try {
        decodeSessionMessage(bytes);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
      }
    },
  );

  it('truncated messages throw DecodeError', () => {
    const full = encodeSync({
      mode: 'rollback',
      frame: 5,
      players: 2,
      slot: 1,
      inputDelay: 0,
      inputBytes: 2,
      roster: [{ slot: 0, nick: 'host' }],
      state: new Uint8Array(10),
    });
    for (let n = 0; n < full.length; n++) expect(() => decodeSessionMessage(full.subarray(0, n))).toThrow(DecodeError);
  });

  it('other close reasons become code closed', () => {
    expect(SessionError.fromCloseReason('peer went away').code).toBe('closed');
    expect(SessionError.fromCloseReason('nonsense: x').code).toBe('closed');
  });
});

describe('password proof', () => {
  test.prop([u32, fc.string({ maxLength: 40 })])(
    'is SHA-256 of the salt in 8 uppercase hex digits and the password',
    async (salt, password) => {
      const { createHash } = await import('node:crypto');
      const expected = createHash('sha256')
        .update(salt.toString(16).toUpperCase().padStart(8, '0') + password, 'utf8')
        .digest();
      expect(Buffer.from(passwordProof(salt, password))).toEqual(expected);
    },
  );

  test.prop([u32, u32, fc.string({ minLength: 1, maxLength: 20 })])('depends on the salt', (a, b, password) => {
    fc.pre(a !== b);
    expect(passwordProof(a, password)).not.toEqual(passwordProof(b, password));
  });
});

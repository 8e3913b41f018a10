import { createHash } from 'node:crypto';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  DecodeError,
  decodeRetroArchFrame,
  decodeRetroArchMessage,
  decodeRetroArchPayload,
  EncodeError,
  encodeRetroArchMessage,
  encodeRetroArchMessageToBytes,
  FrameDecoder,
  RETROARCH_COMMAND_OF,
  RetroArchCommand,
  type RetroArchMessage,
  type RetroArchSender,
  retroArchCommandOf,
  retroArchMessageSize,
  retroArchMessageTypeOf,
  retroArchPasswordHash,
} from '../src/index.js';
import { be32, field, IDS, KNOWN, messageArb, referenceBytes } from './retroarch-arbitraries.js';

const senderArb = fc.constantFrom<RetroArchSender>('client', 'host');
const senderAndMessage = senderArb.chain((sender) => fc.tuple(fc.constant(sender), messageArb(sender)));

function hex(s: string): Uint8Array {
  return Uint8Array.from(s.replace(/\s+/g, '').match(/../g) ?? [], (h) => Number.parseInt(h, 16));
}

/** Decodes and checks that only a DecodeError with a code and an in-range offset escapes. */
function decodeOrDecodeError(bytes: Uint8Array, sender: RetroArchSender): RetroArchMessage | DecodeError {
  try {
    return decodeRetroArchFrame(bytes, sender);
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    const err = e as DecodeError;
    expect(typeof err.code).toBe('string');
    expect(Number.isInteger(err.offset)).toBe(true);
    expect(err.offset).toBeGreaterThanOrEqual(0);
    expect(err.offset).toBeLessThanOrEqual(bytes.length);
    return err;
  }
}

describe('command ids', () => {
  it('match the RETROARCH.md table', () => {
    for (const [type, id] of Object.entries(IDS)) {
      expect(RETROARCH_COMMAND_OF[type as keyof typeof IDS]).toBe(id);
      expect(retroArchMessageTypeOf(id)).toBe(type);
    }
    expect(Object.keys(RETROARCH_COMMAND_OF).sort()).toEqual(Object.keys(IDS).sort());
    expect(RetroArchCommand.PlayerChat).toBe(0x1000);
    expect(RetroArchCommand.SettingInputLatencyFrames).toBe(0x2001);
  });
});

describe('RetroArch messages', () => {
  test.prop([senderAndMessage])('encode to the bytes RETROARCH.md lays out', ([, m]) => {
    const bytes = encodeRetroArchMessageToBytes(m);
    expect(bytes).toEqual(referenceBytes(m));
    expect(retroArchMessageSize(m)).toBe(bytes.length);
  });

  test.prop([senderAndMessage])('round trip: decode(encode(m)) equals m', ([sender, m]) => {
    expect(decodeRetroArchFrame(encodeRetroArchMessageToBytes(m), sender)).toEqual(m);
  });

  test.prop([senderAndMessage])('valid bytes: encode(decode(bytes)) equals bytes', ([sender, m]) => {
    const bytes = referenceBytes(m);
    const decoded = decodeRetroArchFrame(bytes, sender);
    expect(decoded).toEqual(m);
    expect(encodeRetroArchMessageToBytes(decoded)).toEqual(bytes);
  });

  test.prop([senderAndMessage, fc.nat({ max: 32 }), fc.nat({ max: 8 })])(
    'encode into a caller buffer at an offset and leave the rest alone',
    ([, m], offset, slack) => {
      const size = retroArchMessageSize(m);
      const target = new Uint8Array(offset + size + slack).fill(0x5a);
      expect(encodeRetroArchMessage(m, target, offset)).toBe(size);
      expect(target.subarray(offset, offset + size)).toEqual(referenceBytes(m));
      expect(target.subarray(0, offset).every((b) => b === 0x5a)).toBe(true);
      expect(target.subarray(offset + size).every((b) => b === 0x5a)).toBe(true);
    },
  );

  test.prop([senderAndMessage])('refuse a buffer one byte too small', ([, m]) => {
    const size = retroArchMessageSize(m);
    expect(() => encodeRetroArchMessage(m, new Uint8Array(size - 1))).toThrow(
      expect.objectContaining({ code: 'buffer-too-small' }),
    );
  });

  test.prop([senderAndMessage])('decode in place from a frame decoder payload', ([sender, m]) => {
    const decoder = new FrameDecoder();
    decoder.push(referenceBytes(m));
    expect(decoder.readFrame()).toBe(true);
    expect(
      decodeRetroArchPayload(decoder.command, decoder.bytes, decoder.payloadOffset, decoder.payloadLength, sender),
    ).toEqual(m);
  });

  test.prop([fc.array(senderAndMessage, { maxLength: 10 }), fc.array(fc.nat(), { maxLength: 20 })])(
    'a stream of messages decodes the same under any chunking',
    (pairs, cuts) => {
      const stream = Uint8Array.from(pairs.flatMap(([, m]) => [...referenceBytes(m)]));
      const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
      const decoder = new FrameDecoder();
      const out: RetroArchMessage[] = [];
      let at = 0;
      for (const p of [...points, stream.length]) {
        for (const f of decoder.feed(stream.subarray(at, p))) {
          out.push(decodeRetroArchMessage(f.command, f.payload, pairs[out.length]![0]));
        }
        at = p;
      }
      expect(out).toEqual(pairs.map(([, m]) => m));
    },
  );

  describe('robustness', () => {
    test.prop([fc.uint8Array({ maxLength: 300 }), senderArb])(
      'arbitrary bytes decode to a value or a DecodeError',
      (bytes, sender) => {
        decodeOrDecodeError(bytes, sender);
      },
    );

    test.prop([fc.constantFrom(...KNOWN), fc.uint8Array({ maxLength: 300 }), senderArb])(
      'arbitrary payloads of every known command decode to a value or a DecodeError',
      (command, payload, sender) => {
        const result = decodeOrDecodeError(
          Uint8Array.from([...be32(command), ...be32(payload.length), ...payload]),
          sender,
        );
        if (!(result instanceof DecodeError)) expect(retroArchCommandOf(result)).toBe(command);
      },
    );

    test.prop([
      senderAndMessage,
      fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 })), { minLength: 1, maxLength: 6 }),
      fc.integer({ min: -12, max: 12 }),
    ])('mutated and resized frames decode to a value or a DecodeError', ([sender, m], flips, resize) => {
      const valid = referenceBytes(m);
      const mutated = new Uint8Array(Math.max(0, valid.length + resize));
      mutated.set(valid.subarray(0, mutated.length));
      for (const [at, value] of flips) if (mutated.length > 0) mutated[at % mutated.length] = value;
      decodeOrDecodeError(mutated, sender);
    });

    it('reports truncation, trailing bytes and bad lengths with offsets', () => {
      const nick = referenceBytes({ type: 'nick', nick: 'x' });
      expect(() => decodeRetroArchFrame(nick.subarray(0, 20), 'client')).toThrow(
        expect.objectContaining({ code: 'truncated', offset: 20 }),
      );
      expect(() => decodeRetroArchFrame(Uint8Array.from([...nick, 0]), 'client')).toThrow(
        expect.objectContaining({ code: 'trailing-bytes', offset: 40 }),
      );
      const shortNick = Uint8Array.from([...be32(0x20), ...be32(31), ...new Array(31).fill(65)]);
      expect(() => decodeRetroArchFrame(shortNick, 'host')).toThrow(
        expect.objectContaining({ code: 'bad-length', offset: 8 }),
      );
      const ackWithPayload = Uint8Array.from([...be32(0), ...be32(1), 0]);
      expect(() => decodeRetroArchFrame(ackWithPayload, 'host')).toThrow(
        expect.objectContaining({ code: 'bad-length' }),
      );
      const oddInput = Uint8Array.from([...be32(3), ...be32(10), ...new Array(10).fill(0)]);
      expect(() => decodeRetroArchFrame(oddInput, 'client')).toThrow(expect.objectContaining({ code: 'bad-length' }));
      const shortInput = Uint8Array.from([...be32(3), ...be32(4), 0, 0, 0, 0]);
      expect(() => decodeRetroArchFrame(shortInput, 'client')).toThrow(expect.objectContaining({ code: 'bad-length' }));
      expect(() => decodeRetroArchMessage(0x23, new Uint8Array(183), 'host')).toThrow(
        expect.objectContaining({ code: 'bad-length', offset: 0 }),
      );
      expect(() => decodeRetroArchPayload(0x20, new Uint8Array(10), 4, 32, 'host')).toThrow(
        expect.objectContaining({ code: 'truncated' }),
      );
    });
  });

  describe('unknown commands', () => {
    test.prop([fc.nat({ max: 0xffffffff }).filter((c) => !KNOWN.has(c)), fc.uint8Array({ maxLength: 50 }), senderArb])(
      'decode to a typed unknown value (so a session can answer NAK) and re-encode identically',
      (command, payload, sender) => {
        const bytes = Uint8Array.from([...be32(command), ...be32(payload.length), ...payload]);
        const m = decodeRetroArchFrame(bytes, sender);
        expect(m).toEqual({ type: 'unknown', command, payload });
        expect(encodeRetroArchMessageToBytes(m)).toEqual(bytes);
      },
    );

    it('cannot be used to encode a known command id', () => {
      expect(() =>
        encodeRetroArchMessageToBytes({ type: 'unknown', command: 0x20, payload: new Uint8Array(32) }),
      ).toThrow(EncodeError);
    });
  });

  describe('field checks on encode', () => {
    it('refuses values that do not fit their fields', () => {
      const bad: RetroArchMessage[] = [
        { type: 'nick', nick: 'x'.repeat(32) },
        { type: 'nick', nick: 'a\0b' },
        { type: 'password', hash: 'f'.repeat(65) },
        { type: 'noInput', frame: -1 },
        { type: 'crc', frame: 0, crc: 2 ** 32 },
        { type: 'input', frame: 1.5, client: 0, input: new Uint32Array(0) },
        { type: 'play', slave: false, shareMode: 256, devices: 0 },
        { type: 'play', slave: false, shareMode: 0, devices: 0x10000 },
        { type: 'playerChat', text: '' },
        { type: 'playerChat', text: 'y'.repeat(96) },
        { type: 'settingInputLatencyFrames', min: 2 ** 31, max: 0 },
        {
          type: 'mode',
          frame: 0,
          you: true,
          playing: true,
          slave: false,
          client: 0x10000,
          devices: 1,
          shareModes: new Array(16).fill(0),
          nick: 'n',
        },
        {
          type: 'sync',
          frame: 0,
          paused: false,
          client: 0,
          devices: new Array(15).fill(0),
          shareModes: new Array(16).fill(0),
          deviceClients: new Array(16).fill(0),
          nick: 'n',
          sram: new Uint8Array(0),
        },
      ];
      for (const m of bad) expect(() => encodeRetroArchMessageToBytes(m), m.type).toThrow(EncodeError);
    });
  });

  describe('golden bytes from RETROARCH.md', () => {
    it('NICK from a host named rahost', () => {
      const bytes = hex(`00000020 00000020 7261686f7374 ${'00'.repeat(26)}`);
      expect(decodeRetroArchFrame(bytes, 'host')).toEqual({ type: 'nick', nick: 'rahost' });
      expect(encodeRetroArchMessageToBytes({ type: 'nick', nick: 'rahost' })).toEqual(bytes);
    });

    it('INFO from Nestopia', () => {
      const bytes = Uint8Array.from([
        ...hex('00000022 00000044 ec4b5f44'),
        ...field('Nestopia', 32),
        ...field('1.52.0 ', 32),
      ]);
      expect(bytes.length).toBe(8 + 68);
      const info = decodeRetroArchFrame(bytes, 'host');
      expect(info).toEqual({ type: 'info', contentCrc: 0xec4b5f44, coreName: 'Nestopia', coreVersion: '1.52.0 ' });
      expect(encodeRetroArchMessageToBytes(info)).toEqual(bytes);
    });

    it('SYNC is 184 bytes plus SRAM and MODE is 60 bytes', () => {
      const sync = encodeRetroArchMessageToBytes({
        type: 'sync',
        frame: 1,
        paused: true,
        client: 1,
        devices: new Array(16).fill(1),
        shareModes: new Array(16).fill(0),
        deviceClients: new Array(16).fill(0),
        nick: 'rahost',
        sram: Uint8Array.of(9, 9),
      });
      expect([...sync.subarray(0, 8)]).toEqual([...be32(0x23), ...be32(186)]);
      expect([...sync.subarray(12, 16)]).toEqual([0x80, 0, 0, 1]);
      const mode = encodeRetroArchMessageToBytes({
        type: 'mode',
        frame: 7,
        you: true,
        playing: true,
        slave: true,
        client: 2,
        devices: 1,
        shareModes: new Array(16).fill(0),
        nick: 'p2',
      });
      expect([...mode.subarray(0, 16)]).toEqual([...be32(0x26), ...be32(60), ...be32(7), 0xe0, 0, 0, 2]);
    });
  });
});

describe('password hash', () => {
  it('is the lowercase hex SHA-256 of the %08lX salt and the password', () => {
    // sprintf("%08lX", 0xBEEF) is "0000BEEF", written out by hand.
    const expected = createHash('sha256').update('0000BEEFhunter2').digest('hex');
    expect(retroArchPasswordHash(0xbeef, 'hunter2')).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
    const max = createHash('sha256').update('FFFFFFFFpässwörd').digest('hex');
    expect(retroArchPasswordHash(0xffffffff, 'pässwörd')).toBe(max);
  });

  test.prop([fc.nat({ max: 0xffffffff }), fc.string()])('matches node:crypto for any salt and password', (salt, pw) => {
    const salted = `00000000${salt.toString(16)}`.slice(-8).toUpperCase();
    expect(retroArchPasswordHash(salt, pw)).toBe(
      createHash('sha256')
        .update(Buffer.from(salted + pw, 'utf8'))
        .digest('hex'),
    );
  });

  it('fits the PASSWORD message exactly', () => {
    const hash = retroArchPasswordHash(1, 'x');
    const bytes = encodeRetroArchMessageToBytes({ type: 'password', hash });
    expect(bytes.length).toBe(8 + 64);
    expect(decodeRetroArchFrame(bytes, 'client')).toEqual({ type: 'password', hash });
  });

  it('refuses a salt that is not a u32', () => {
    expect(() => retroArchPasswordHash(-1, 'x')).toThrow(EncodeError);
  });
});

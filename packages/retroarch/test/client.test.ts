import { fc, test } from '@fast-check/vitest';
import {
  encodeRetroArchCrc,
  encodeRetroArchInput,
  encodeRetroArchNoInput,
  RETROARCH_1_14_IMPLEMENTATION_MAGIC,
  RetroArchHeaderMagic,
  retroArchHostHeader,
  retroArchPasswordHash,
  retroArchRefusalHeader,
} from '@netplay/protocol';
import { deflate } from 'pako';
import { describe, expect, it } from 'vitest';
import { inflateSavestate, type RetroArchClient, RetroArchError, retroArchInputWords } from '../src/index.js';
import { concat, decodeClientOutput, HOST_INFO, headerBytes, hostHandshake, msg, newClient, sync } from './helpers.js';

function input(frame: number, client: number, words: number[]): Uint8Array {
  const out = new Uint8Array(16 + 4 * words.length);
  encodeRetroArchInput(out, 0, frame, client, words);
  return out;
}

function noInput(frame: number): Uint8Array {
  const out = new Uint8Array(12);
  encodeRetroArchNoInput(out, 0, frame);
  return out;
}

/** Feeds `bytes` cut at `cuts` (sorted offsets). */
function feedCut(client: RetroArchClient, bytes: Uint8Array, cuts: number[], now = 0): void {
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    if (c > at) client.receive(bytes.slice(at, c), now);
    at = Math.max(at, c);
  }
}

function synced(options: Parameters<typeof newClient>[0] = {}) {
  const c = newClient(options);
  c.client.start(0);
  c.client.receive(hostHandshake(), 0);
  c.client.takeOutput();
  return c;
}

describe('handshake', () => {
  it('starts with the 1.14 client header and NICK', () => {
    const { client } = newClient({ nick: 'bot' });
    client.start(0);
    const { header, messages } = decodeClientOutput(client.takeOutput() ?? new Uint8Array(0), true);
    expect(header).toEqual({
      sender: 'client',
      magic: RetroArchHeaderMagic.Ranp,
      platformMagic: 0x00040008,
      compression: 1,
      highProtocol: 6,
      lowProtocol: 5,
      implementationMagic: RETROARCH_1_14_IMPLEMENTATION_MAGIC,
    });
    expect(messages).toEqual([{ type: 'nick', nick: 'bot' }]);
    expect(client.state).toBe('handshake');
  });

  test.prop(
    [fc.uniqueArray(fc.integer({ min: 0, max: 400 }), { maxLength: 20 }), fc.integer({ min: 1, max: 0xffffffff })],
    {
      numRuns: 100,
    },
  )('a salted handshake cut anywhere: PASSWORD, INFO echo, then SYNC', (cuts, salt) => {
    const { client, events } = newClient({ password: 'sesame' });
    client.start(0);
    client.takeOutput();
    const bytes = hostHandshake({ salt, frame: 77 });
    feedCut(
      client,
      bytes,
      cuts.filter((c) => c < bytes.length).sort((a, b) => a - b),
    );
    const { messages } = decodeClientOutput(client.takeOutput() ?? new Uint8Array(0), false);
    expect(messages).toEqual([{ type: 'password', hash: retroArchPasswordHash(salt, 'sesame') }, HOST_INFO]);
    expect(client.state).toBe('spectating');
    expect(client.hostFrame).toBe(77);
    expect(client.clientNumber).toBe(1);
    const s = events.find((e) => e.type === 'synced');
    expect(s?.type === 'synced' && s.session.hostNick).toBe('rahost');
    expect(s?.type === 'synced' && s.session.header.salt).toBe(salt);
    expect(events.filter((e) => e.type === 'settings')).toEqual([
      { type: 'settings', allowPausing: true },
      { type: 'settings', latencyMin: 0, latencyMax: 0 },
    ]);
  });

  it('answers the captured bytes of a real 1.14 host (RETROARCH.md) with the captured INFO', () => {
    const hex = (h: string) => Uint8Array.from(Buffer.from(h.replace(/\s/g, ''), 'hex'));
    const pad = (text: string, n: number) => {
      const b = new Uint8Array(n);
      b.set(new TextEncoder().encode(text));
      return b;
    };
    const header = hex('52414e50 00040008 00000001 00000000 00000006 00000469');
    const nick = concat(hex('00000020 00000020'), pad('rahost', 32));
    const info = concat(hex('00000022 00000044 ec4b5f44'), pad('Nestopia', 32), pad('1.52.0 ', 32));
    const { client } = newClient();
    client.start(0);
    client.takeOutput();
    client.receive(concat(header, nick, info), 0);
    expect(client.takeOutput()).toEqual(info);
    expect(client.state).toBe('handshake');
  });

  it('answers INFO with the configured core identity', () => {
    const info = { contentCrc: 1, coreName: 'nestopia', coreVersion: 'x' };
    const { client } = newClient({ info });
    client.start(0);
    client.takeOutput();
    client.receive(hostHandshake(), 0);
    expect(decodeClientOutput(client.takeOutput() ?? new Uint8Array(0), false).messages).toEqual([
      { type: 'info', ...info },
    ]);
  });

  const failures: [string, () => Uint8Array, string, { password?: string; passwordThenClose?: boolean }][] = [
    ['FULL', () => headerBytes(retroArchRefusalHeader(RetroArchHeaderMagic.Full)), 'host-full', {}],
    ['DENY', () => headerBytes(retroArchRefusalHeader(RetroArchHeaderMagic.Deny)), 'host-denied', {}],
    ['protocol 4', () => headerBytes(retroArchHostHeader({ protocol: 4 })), 'bad-header', {}],
    ['a salt without a password', () => headerBytes(retroArchHostHeader({ salt: 5 })), 'password-required', {}],
    [
      'NAK after PASSWORD',
      () => concat(headerBytes(retroArchHostHeader({ salt: 5 })), msg({ type: 'nak' })),
      'password-rejected',
      { password: 'x' },
    ],
    [
      'a hang-up after PASSWORD',
      () => headerBytes(retroArchHostHeader({ salt: 5 })),
      'password-rejected',
      { password: 'x', passwordThenClose: true },
    ],
    ['SYNC before INFO', () => concat(headerBytes(retroArchHostHeader()), msg(sync(1))), 'protocol', {}],
    ['INPUT during the handshake', () => concat(headerBytes(retroArchHostHeader()), input(1, 0, [0])), 'protocol', {}],
    ['NAK', () => concat(hostHandshake(), msg({ type: 'nak' })), 'nak', {}],
    [
      'a bad-length CRC',
      () => concat(hostHandshake(), Uint8Array.of(0, 0, 0, 0x40, 0, 0, 0, 4, 0, 0, 0, 1)),
      'protocol',
      {},
    ],
    ['a second SYNC', () => concat(hostHandshake(), msg(sync(3))), 'protocol', {}],
  ];
  it.each(failures)('%s fails with a typed error and emits closed', (_, bytes, code, o) => {
    const { client, events } = newClient(o.password === undefined ? {} : { password: o.password });
    client.start(0);
    client.receive(bytes(), 0);
    if (o.passwordThenClose) client.connectionClosed();
    expect(client.state).toBe('closed');
    expect(client.error).toBeInstanceOf(RetroArchError);
    expect(client.error?.code).toBe(code);
    expect(events.filter((e) => e.type === 'closed')).toEqual([{ type: 'closed', error: client.error }]);
  });

  it('a malformed frame is answered with NAK', () => {
    const { client } = synced();
    client.receive(Uint8Array.of(0, 0, 0, 0x40, 0, 0, 0, 4, 0, 0, 0, 1), 0);
    expect(decodeClientOutput(client.takeOutput() ?? new Uint8Array(0), false).messages).toEqual([{ type: 'nak' }]);
  });

  it('times out without SYNC, and not before', () => {
    const { client } = newClient({ handshakeTimeoutMs: 1000 });
    client.start(500);
    client.tick(1500);
    expect(client.state).toBe('handshake');
    client.tick(1501);
    expect(client.error?.code).toBe('timeout');
  });

  test.prop([fc.uint8Array({ maxLength: 300 }), fc.boolean()], { numRuns: 300 })(
    'any bytes from the host: receive never throws; failures are typed',
    (bytes, afterHandshake) => {
      const { client } = newClient({ password: 'p' });
      client.start(0);
      if (afterHandshake) client.receive(hostHandshake(), 0);
      expect(() => client.receive(bytes, 0)).not.toThrow();
      if (client.state === 'closed') expect(client.error).toBeInstanceOf(RetroArchError);
    },
  );
});

describe('spectating', () => {
  it('inflates LOAD_SAVESTATE and reports INPUT, NOINPUT and CRC', () => {
    const { client, events } = synced();
    const state = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7) & 0xff);
    const crc = new Uint8Array(16);
    encodeRetroArchCrc(crc, 0, 12, 0xdeadbeef);
    client.receive(
      concat(
        msg({ type: 'loadSavestate', frame: 11, uncompressedSize: state.length, data: deflate(state) }),
        input(11, 0, [0x100]),
        noInput(12),
        crc,
      ),
      0,
    );
    expect(events.slice(-4)).toEqual([
      { type: 'savestate', frame: 11, state },
      { type: 'input', frame: 11, client: 0, words: Uint32Array.of(0x100) },
      { type: 'noInput', frame: 12 },
      { type: 'crc', frame: 12, crc: 0xdeadbeef },
    ]);
    expect(client.hostFrame).toBe(12);
    expect(client.takeOutput()).toBeUndefined();
  });

  it('a savestate over the maximum fails before inflating', () => {
    const { client } = synced({ maxSavestateBytes: 100 });
    client.receive(
      msg({ type: 'loadSavestate', frame: 11, uncompressedSize: 101, data: deflate(new Uint8Array(101)) }),
      0,
    );
    expect(client.error?.code).toBe('savestate');
  });

  it('answers PING_REQUEST and reports pause, resume, chat, stall and reset', () => {
    const { client, events } = synced();
    client.receive(
      concat(
        msg({ type: 'pingRequest' }),
        msg({ type: 'pause', nick: 'rahost' }),
        msg({ type: 'resume' }),
        msg({ type: 'playerChat', nick: 'rahost', text: 'hi' }),
        msg({ type: 'stall', frames: 3 }),
        msg({ type: 'reset', frame: 20 }),
        msg({ type: 'unknown', command: 0x7777, payload: Uint8Array.of(1) }),
      ),
      0,
    );
    expect(decodeClientOutput(client.takeOutput() ?? new Uint8Array(0), false).messages).toEqual([
      { type: 'pingResponse' },
    ]);
    expect(events.slice(-6).map((e) => e.type)).toEqual(['pause', 'resume', 'chat', 'stall', 'reset', 'message']);
    expect(events.find((e) => e.type === 'chat')).toEqual({ type: 'chat', nick: 'rahost', text: 'hi' });
    expect(client.state).toBe('spectating');
  });

  it('sends chat, pause, resume, and a clean DISCONNECT', () => {
    const { client, events } = synced();
    client.chat('hello');
    client.pause();
    client.resume();
    client.disconnect();
    expect(decodeClientOutput(client.takeOutput() ?? new Uint8Array(0), false).messages).toEqual([
      { type: 'playerChat', text: 'hello' },
      { type: 'pause', nick: 'netplay' },
      { type: 'resume' },
      { type: 'disconnect' },
    ]);
    expect(events.at(-1)).toEqual({ type: 'closed' });
    expect(client.error).toBeUndefined();
  });

  test.prop(
    [
      fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 20 }),
      fc.uniqueArray(fc.integer({ min: 0, max: 400 })),
    ],
    {
      numRuns: 50,
    },
  )('onRawFrame sees every frame after the handshake as its exact bytes, however the stream is cut', (frames, cuts) => {
    const raw: Uint8Array[] = [];
    const c = newClient({ onRawFrame: (_, bytes) => raw.push(bytes.slice()) });
    c.client.start(0);
    const after = concat(
      ...frames.map((f, i) => (i % 2 ? input(f, 0, [f]) : noInput(f))),
      msg({ type: 'pingRequest' }),
    );
    const all = concat(hostHandshake(), after);
    feedCut(
      c.client,
      all,
      cuts.filter((x) => x < all.length).sort((a, b) => a - b),
    );
    // SYNC ends the handshake; the two settings frames that follow it are relayable frames too.
    const settings = concat(
      msg({ type: 'settingAllowPausing', allowPausing: true }),
      msg({ type: 'settingInputLatencyFrames', min: 0, max: 0 }),
    );
    expect(concat(...raw)).toEqual(concat(settings, after));
  });

  it('requestSavestate sends REQUEST_SAVESTATE', () => {
    const { client } = synced();
    client.requestSavestate();
    expect(decodeClientOutput(client.takeOutput() ?? new Uint8Array(0), false).messages).toEqual([
      { type: 'requestSavestate' },
    ]);
  });

  it('a DISCONNECT from the host closes without an error', () => {
    const { client, events } = synced();
    client.receive(msg({ type: 'disconnect' }), 0);
    expect(client.state).toBe('closed');
    expect(events.at(-1)).toEqual({ type: 'closed' });
  });

  it('refuses API calls in the wrong state', () => {
    const { client } = newClient();
    expect(() => client.play()).toThrow(RetroArchError);
    expect(() => client.chat('x')).toThrow(RetroArchError);
    client.start(0);
    expect(() => client.start(0)).toThrow(RetroArchError);
  });
});

describe('playing', () => {
  it('PLAY then MODE_REFUSED goes back to spectating', () => {
    const { client, events } = synced();
    client.play({ devices: 2 });
    expect(decodeClientOutput(client.takeOutput() ?? new Uint8Array(0), false).messages).toEqual([
      { type: 'play', slave: false, shareMode: 0, devices: 2 },
    ]);
    expect(client.state).toBe('requesting-play');
    client.receive(msg({ type: 'modeRefused', reason: 2 }), 0);
    expect(client.state).toBe('spectating');
    expect(events.at(-1)).toEqual({ type: 'modeRefused', reason: 2 });
  });

  test.prop(
    [
      fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 30 }),
      fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 0, max: 0xffffffff }),
    ],
    { numRuns: 100 },
  )(
    'after MODE, our input goes out for every frame, consecutively, lead frames ahead of the host',
    (steps, lead, word) => {
      const { client } = synced({ inputLead: lead });
      client.setInput([word]);
      client.play();
      client.takeOutput();
      const modeFrame = 15;
      client.receive(
        msg({
          type: 'mode',
          frame: modeFrame,
          you: true,
          playing: true,
          slave: false,
          client: 1,
          devices: 0b10,
          shareModes: new Array<number>(16).fill(0),
          nick: 'netplay',
        }),
        0,
      );
      expect(client.state).toBe('playing');
      let host = client.hostFrame;
      for (const s of steps) {
        host += s;
        client.receive(s % 2 ? input(host, 0, [0]) : noInput(host), 0);
      }
      const sent = decodeClientOutput(client.takeOutput() ?? new Uint8Array(0), false).messages;
      const last = Math.max(host, modeFrame) + lead;
      expect(sent.map((m) => (m.type === 'input' ? m.frame : -1))).toEqual(
        Array.from({ length: last - modeFrame + 1 }, (_, i) => modeFrame + i),
      );
      for (const m of sent) {
        expect(m.type === 'input' && [m.client, Array.from(m.input)]).toEqual([1, [word]]);
      }
    },
  );

  it('counts input words per device as RetroArch does', () => {
    // joypad 1, mouse 2, keyboard 5, lightgun 2, analog 3, none 0
    expect(retroArchInputWords([1, 2, 3, 4, 5, 0], 0b111111)).toBe(13);
    expect(retroArchInputWords([1, 2, 3, 4, 5, 0], 0b000101)).toBe(6);
    // the subclass bits above 0xff do not matter
    expect(retroArchInputWords([0x101], 1)).toBe(1);
  });
});

describe('inflateSavestate', () => {
  test.prop([fc.uint8Array({ maxLength: 2000 })], { numRuns: 50 })('inflates what zlib deflated', (state) => {
    expect(inflateSavestate(deflate(state), state.length, true, 1 << 20)).toEqual(state);
  });

  test.prop(
    [fc.uint8Array({ minLength: 1, maxLength: 2000 }), fc.integer({ min: -5, max: 5 }).filter((d) => d !== 0)],
    {
      numRuns: 50,
    },
  )('a wrong announced size fails with savestate', (state, delta) => {
    const size = Math.max(0, state.length + delta);
    fc.pre(size !== state.length);
    expect(() => inflateSavestate(deflate(state), size, true, 1 << 20)).toThrow(
      expect.objectContaining({ code: 'savestate' }),
    );
  });

  test.prop([fc.uint8Array({ maxLength: 200 })], { numRuns: 100 })('garbage fails only with savestate', (bytes) => {
    try {
      inflateSavestate(bytes, 1000, true, 1 << 20);
    } catch (e) {
      expect(e).toBeInstanceOf(RetroArchError);
    }
  });

  it('a tiny zlib stream announcing a large state is refused before anything is allocated', () => {
    // 20-odd bytes of zlib data announced as 16 MiB (the default maximum): zlib cannot inflate them
    // that far, so the announced size is a lie and no 16 MiB buffer may be reserved for it.
    const tiny = deflate(new Uint8Array(8));
    expect(() => inflateSavestate(tiny, 16 << 20, true, 16 << 20)).toThrow(/can inflate to/);
    // A large state that really is highly compressible still inflates.
    const zeros = new Uint8Array(1 << 20);
    expect(inflateSavestate(deflate(zeros), zeros.length, true, 16 << 20)).toEqual(zeros);
  });

  it('raw data must have the announced size', () => {
    expect(inflateSavestate(Uint8Array.of(1, 2), 2, false, 10)).toEqual(Uint8Array.of(1, 2));
    expect(() => inflateSavestate(Uint8Array.of(1, 2), 3, false, 10)).toThrow(RetroArchError);
  });
});

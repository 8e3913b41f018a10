import { fc, test } from '@fast-check/vitest';
import { encodeRetroArchCrc, encodeRetroArchInput, retroArchClientHeader } from '@netplay/protocol';
import { describe, expect, it } from 'vitest';
import {
  type RetroArchClient,
  RetroArchError,
  RetroArchHostConnection,
  type RetroArchHostEvent,
  type RetroArchHostOptions,
} from '../src/index.js';
import { concat, decodeClientOutput, headerBytes, msg, newClient } from './helpers.js';

const INFO = { contentCrc: 0xec4b5f44, coreName: 'Nestopia', coreVersion: '1.52.0 ' };

function newHost(options: Partial<RetroArchHostOptions> = {}, startFrame = 0) {
  const events: RetroArchHostEvent[] = [];
  const host = new RetroArchHostConnection(
    {
      info: INFO,
      ...options,
      onEvent: (e) => events.push(e.type === 'relay' ? { ...e, bytes: e.bytes.slice() } : e),
    },
    startFrame,
  );
  return { host, events };
}

/** Moves bytes both ways until neither side has output. */
function pump(client: RetroArchClient, host: RetroArchHostConnection): void {
  for (let i = 0; i < 100; i++) {
    const a = client.takeOutput();
    if (a) host.receive(a, 0);
    const b = host.takeOutput();
    if (b) client.receive(b, 0);
    if (!a && !b) return;
  }
}

function hostInput(frame: number): Uint8Array {
  const b = new Uint8Array(20);
  encodeRetroArchInput(b, 0, frame, 0, [0x10]);
  return b;
}

describe('RetroArchHostConnection with our client', () => {
  test.prop(
    [
      fc.integer({ min: 0, max: 1000 }),
      fc.option(fc.string({ minLength: 1, maxLength: 20 })),
      fc.integer({ min: 1, max: 0xffffffff }),
    ],
    {
      numRuns: 30,
    },
  )('handshake (with or without a password), then SYNC at the session frame', (startFrame, password, salt) => {
    const { host, events } = newHost(password === null ? {} : { password, salt }, startFrame);
    const c = newClient(password === null ? { nick: 'ra' } : { nick: 'ra', password });
    c.client.start(0);
    pump(c.client, host);
    expect(c.client.state).toBe('spectating');
    expect(host.state).toBe('spectating');
    expect(c.client.hostFrame).toBe(startFrame);
    expect(c.client.session?.header.salt).toBe(password === null ? 0 : salt);
    expect(events).toEqual([{ type: 'joined', nick: 'ra', info: INFO }]);
  });

  it('a wrong password is answered with NAK and closes both sides', () => {
    const { host } = newHost({ password: 'right', salt: 7 });
    const c = newClient({ password: 'wrong' });
    c.client.start(0);
    pump(c.client, host);
    expect(host.error?.code).toBe('password-rejected');
    expect(c.client.error?.code).toBe('password-rejected');
  });

  it('refuses a client with another core', () => {
    const { host } = newHost();
    const c = newClient({ info: { ...INFO, coreName: 'FCEUmm' } });
    c.client.start(0);
    pump(c.client, host);
    expect(host.error?.code).toBe('protocol');
    expect(c.client.error?.code).toBe('nak');
  });

  test.prop([fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 3 })], { numRuns: 30 })(
    'PLAY → MODE at the next frame; inputs relay both ways as opaque bytes',
    (frames, lead) => {
      const { host, events } = newHost({}, 0);
      const c = newClient({ inputLead: lead });
      c.client.start(0);
      pump(c.client, host);
      host.relay(concat(hostInput(0), hostInput(1)));
      pump(c.client, host);
      c.client.setInput([0x100]);
      c.client.play();
      pump(c.client, host);
      expect(c.client.state).toBe('playing');
      expect(events.find((e) => e.type === 'playing')).toEqual({ type: 'playing', frame: 2, device: 1 });
      for (let f = 2; f < 2 + frames; f++) {
        host.relay(hostInput(f));
        pump(c.client, host);
      }
      const relayed = events.filter((e) => e.type === 'relay');
      // Our client sends frames 2 .. last host frame + lead, each relayed whole.
      const last = 1 + frames + lead;
      expect(relayed.map((e) => e.type === 'relay' && e.frame)).toEqual(
        Array.from({ length: last - 1 }, (_, i) => 2 + i),
      );
      for (const e of relayed) {
        if (e.type !== 'relay') continue;
        expect(decodeClientOutput(e.bytes, false).messages).toEqual([
          { type: 'input', frame: e.frame, client: 1, input: Uint32Array.of(0x100) },
        ]);
      }
      // The client saw every host input.
      expect(c.events.filter((e) => e.type === 'input').length).toBe(2 + frames);
      expect(host.frame).toBe(2 + frames);
    },
  );

  it('answers pings, relays CRC and chat, refuses a slave PLAY, and ends on DISCONNECT', () => {
    const { host, events } = newHost();
    const c = newClient();
    c.client.start(0);
    pump(c.client, host);
    const crc = new Uint8Array(16);
    encodeRetroArchCrc(crc, 0, 9, 1234);
    host.receive(concat(msg({ type: 'pingRequest' }), crc, msg({ type: 'playerChat', text: 'hi' })), 0);
    host.receive(msg({ type: 'play', slave: true, shareMode: 0, devices: 0 }), 0);
    expect(decodeClientOutput(host.takeOutput() ?? new Uint8Array(0), false).messages).toEqual([
      { type: 'pingResponse' },
      { type: 'modeRefused', reason: 4 },
    ]);
    expect(events.filter((e) => e.type === 'relay').map((e) => e.type === 'relay' && [e.command, e.frame])).toEqual([
      [0x40, 9],
      [0x1000, 0],
    ]);
    c.client.disconnect();
    pump(c.client, host);
    expect(host.state).toBe('closed');
    expect(events.at(-1)).toEqual({ type: 'closed' });
  });

  it('rejects a bad client header and relayed bytes that are not whole frames', () => {
    const { host } = newHost();
    host.receive(headerBytes(retroArchClientHeader({ highProtocol: 4, lowProtocol: 4 })), 0);
    expect(host.error?.code).toBe('bad-header');
    const h2 = newHost();
    const c = newClient();
    c.client.start(0);
    pump(c.client, h2.host);
    expect(() => h2.host.relay(hostInput(0).subarray(0, 10))).toThrow(RetroArchError);
  });

  it("SYNC carries the relayed session's device → clients map and our client number", () => {
    const { host } = newHost({ deviceClients: [1, 1 << 3], clientNumber: 31 });
    const c = newClient();
    c.client.start(0);
    pump(c.client, host);
    expect(c.client.session?.sync.deviceClients).toEqual([1, 8, ...new Array<number>(14).fill(0)]);
    expect(c.client.clientNumber).toBe(31);
  });

  it('a password without a salt is a configuration error', () => {
    expect(() => newHost({ password: 'x' })).toThrow(RetroArchError);
  });

  test.prop([fc.uint8Array({ maxLength: 300 }), fc.boolean()], { numRuns: 300 })(
    'any bytes from a client: receive never throws; failures are typed',
    (bytes, afterHandshake) => {
      const { host } = newHost();
      if (afterHandshake) {
        const c = newClient();
        c.client.start(0);
        pump(c.client, host);
      }
      expect(() => host.receive(bytes, 0)).not.toThrow();
      if (host.state === 'closed') expect(host.error).toBeInstanceOf(RetroArchError);
    },
  );
});

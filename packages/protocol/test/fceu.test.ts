import { crc32 as zlibCrc32 } from 'node:zlib';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  crc32,
  DecodeError,
  decodeFceuClientInit,
  decodeFceuClientText,
  decodeFceuFrameData,
  decodeFceuServerInit,
  decodeFceuServerTcpMessage,
  decodeFceuTcpFrame,
  decodeFceuTcpPacket,
  decodeFceuUdpFrame,
  decodeFceuUdpInput,
  decodeFceuUdpPacket,
  describeFceuCommand,
  EncodeError,
  encodeFceuClientInit,
  encodeFceuClientText,
  encodeFceuServerInit,
  encodeFceuServerText,
  encodeFceuTcpFrame,
  encodeFceuTcpPacket,
  encodeFceuUdpFrame,
  encodeFceuUdpInput,
  encodeFceuUdpPacket,
  FCEU_UDP_FRAME_SIZE,
  FCEU_UDP_INPUT_SIZE,
  FceuCommand,
  type FceuFrameData,
  FceuUdpReceiver,
  fceuClientInitLayout,
  fceuDipSwitchCommand,
  fceuDisplayText,
  fceuSelectSlotCommand,
  fceuServerInitLayout,
  fceuServerTextLayout,
  fceuServerTextSize,
  fceuTcpFrameLayout,
  fceuUdpFrameLayout,
  fceuUdpInputLayout,
  isFceuCommand,
  readFceuClientText,
  readFceuServerTcpMessage,
} from '../src/index.js';
import {
  chunkArb,
  editsArb,
  frameArb,
  mutate,
  readInChunks,
  seedCommands,
  serverStream,
  serverStreamItemsArb,
  serverText,
  textArb,
  u32,
} from './fceu-arbitraries.js';

/** Runs `fn`; it may return anything, but if it throws it must be a DecodeError with a code and offset. */
function valueOrDecodeError(fn: () => unknown, length: number): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    const d = e as DecodeError;
    expect(typeof d.code).toBe('string');
    expect(Number.isInteger(d.offset) && d.offset >= 0 && d.offset <= length).toBe(true);
  }
}

const port = fc.integer({ min: 0, max: 0xffff });
const edits = editsArb(4);

describe('FCE Ultra byte order', () => {
  it('writes uint32 little-endian as FCE Ultra en32 does', () => {
    const bytes = new Uint8Array(12);
    encodeFceuServerInit({ udpPort: 0xfce, player: 1, magic: 0x12345678 }, bytes);
    expect([...bytes]).toEqual([0xce, 0x0f, 0, 0, 1, 0, 0, 0, 0x78, 0x56, 0x34, 0x12]);
  });
});

describe('FCE Ultra commands', () => {
  it('names the seed codes and only those', () => {
    for (let c = 0; c < 256; c++) expect(isFceuCommand(c)).toBe(seedCommands.includes(c));
    expect(FceuCommand.VsDipSwitchFirst).toBe(11);
    expect(FceuCommand.VsDipSwitchLast).toBe(18);
    expect(FceuCommand.SelectSlotFirst).toBe(42);
    expect(FceuCommand.SelectSlotLast).toBe(50);
  });
  test.prop([fc.integer({ min: 0, max: 7 })])('dip switch n is 11 + n and describes back', (n) => {
    expect(fceuDipSwitchCommand(n)).toBe(11 + n);
    expect(describeFceuCommand(11 + n)).toEqual({ kind: 'vs-dip-switch', index: n });
  });
  test.prop([fc.integer({ min: 0, max: 8 })])('slot n is 42 + n and describes back', (n) => {
    expect(fceuSelectSlotCommand(n)).toBe(42 + n);
    expect(describeFceuCommand(42 + n)).toEqual({ kind: 'select-slot', slot: n });
  });
  test.prop([fc.double({ noDefaultInfinity: false })])(
    'no number but the seed codes is a command (fractions, negatives, NaN, ±∞, ≥ 256)',
    (x) => {
      expect(isFceuCommand(x)).toBe(seedCommands.includes(x));
    },
  );
  it('refuses the edge numbers around the codes', () => {
    for (const x of [0.5, 1.5, -1, 50.000001, 256, 256 + 10, 2 ** 32, 2 ** 32 + 1, Number.NaN, -Infinity]) {
      expect(isFceuCommand(x)).toBe(false);
    }
  });
  it('rejects out-of-range switch and slot numbers', () => {
    expect(() => fceuDipSwitchCommand(8)).toThrow(RangeError);
    expect(() => fceuSelectSlotCommand(9)).toThrow(RangeError);
    expect(describeFceuCommand(20)).toBeUndefined();
  });
});

describe('FCE Ultra init messages', () => {
  test.prop([port, fc.integer({ min: 0, max: 3 }), u32])(
    'server init round-trips and matches its layout',
    (udpPort, player, magic) => {
      const msg = { udpPort, player, magic };
      const bytes = new Uint8Array(12);
      expect(encodeFceuServerInit(msg, bytes)).toBe(12);
      const oracle = new Uint8Array(fceuServerInitLayout.span);
      fceuServerInitLayout.encode(msg, oracle);
      expect(bytes).toEqual(oracle);
      expect(decodeFceuServerInit(bytes)).toEqual(msg);
    },
  );
  test.prop([port])('client init round-trips and matches its layout', (udpPort) => {
    const bytes = new Uint8Array(4);
    encodeFceuClientInit({ udpPort }, bytes);
    const oracle = new Uint8Array(4);
    fceuClientInitLayout.encode({ udpPort }, oracle);
    expect(bytes).toEqual(oracle);
    expect(decodeFceuClientInit(bytes)).toEqual({ udpPort });
  });
  test.prop([fc.uint8Array({ maxLength: 16 })])('arbitrary bytes decode or throw DecodeError', (bytes) => {
    valueOrDecodeError(() => decodeFceuServerInit(bytes), bytes.length);
    valueOrDecodeError(() => decodeFceuClientInit(bytes), bytes.length);
  });
  test.prop([fc.uint8Array({ minLength: 12, maxLength: 12 })])(
    'valid server init bytes re-encode identically',
    (bytes) => {
      let msg: ReturnType<typeof decodeFceuServerInit>;
      try {
        msg = decodeFceuServerInit(bytes);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
        return;
      }
      const again = new Uint8Array(12);
      encodeFceuServerInit(msg, again);
      expect(again).toEqual(bytes);
    },
  );
  it('refuses a player above 3 both ways', () => {
    expect(() => encodeFceuServerInit({ udpPort: 1, player: 4, magic: 0 }, new Uint8Array(12))).toThrow(EncodeError);
    const bytes = new Uint8Array([1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0]);
    expect(() => decodeFceuServerInit(bytes)).toThrow(expect.objectContaining({ code: 'bad-value', offset: 4 }));
  });
});

describe('FCE Ultra UDP and TCP packets', () => {
  test.prop([u32, u32, fc.uint8Array({ maxLength: 32 })])(
    'carries zlib crc32() of magic, counter and data, little-endian',
    (magic, counter, data) => {
      const bytes = new Uint8Array(12 + data.length);
      encodeFceuUdpPacket(magic, counter, data, bytes);
      const crc = zlibCrc32(bytes.subarray(4));
      expect([...bytes.subarray(0, 4)]).toEqual([crc & 255, (crc >>> 8) & 255, (crc >>> 16) & 255, crc >>> 24]);
    },
  );
  test.prop([u32, u32, frameArb])('UDP frame packet matches its layout and round-trips', (magic, counter, frame) => {
    const bytes = new Uint8Array(FCEU_UDP_FRAME_SIZE);
    expect(encodeFceuUdpFrame(magic, counter, frame, bytes)).toBe(17);
    const oracle = new Uint8Array(fceuUdpFrameLayout.span);
    const fields = { crc: 0, magic, counter, controllers: [...frame.controllers], command: frame.command };
    fceuUdpFrameLayout.encode(fields, oracle);
    fceuUdpFrameLayout.encode({ ...fields, crc: crc32(oracle, 4) }, oracle);
    expect(bytes).toEqual(oracle);
    expect(decodeFceuUdpFrame(bytes)).toEqual({ magic, counter, frame });
  });
  test.prop([u32, u32, fc.integer({ min: 0, max: 255 })])(
    'UDP input packet matches its layout and round-trips',
    (magic, counter, controller) => {
      const bytes = new Uint8Array(FCEU_UDP_INPUT_SIZE);
      encodeFceuUdpInput(magic, counter, controller, bytes);
      const oracle = new Uint8Array(fceuUdpInputLayout.span);
      fceuUdpInputLayout.encode({ crc: 0, magic, counter, controller }, oracle);
      fceuUdpInputLayout.encode({ crc: crc32(oracle, 4), magic, counter, controller }, oracle);
      expect(bytes).toEqual(oracle);
      expect(decodeFceuUdpInput(bytes)).toEqual({ magic, counter, controller });
    },
  );
  test.prop([u32, u32, fc.uint8Array({ maxLength: 64 }), fc.nat({ max: 8 })])(
    'generic UDP packet round-trips at any offset',
    (magic, counter, data, at) => {
      const target = new Uint8Array(at + 12 + data.length);
      const n = encodeFceuUdpPacket(magic, counter, data, target, at);
      const p = decodeFceuUdpPacket(target.subarray(at, at + n));
      expect(p.magic).toBe(magic);
      expect(p.counter).toBe(counter);
      expect(p.data).toEqual(data);
      expect(p.crc).toBe(crc32(target, at + 4, at + n));
    },
  );
  test.prop([fc.integer({ min: 0, max: 0xfffffffe }), fc.uint8Array({ maxLength: 32 })])(
    'generic TCP packet round-trips',
    (counter, data) => {
      const bytes = new Uint8Array(4 + data.length);
      expect(encodeFceuTcpPacket(counter, data, bytes)).toBe(bytes.length);
      expect([...bytes.subarray(0, 4)]).toEqual([
        counter & 255,
        (counter >>> 8) & 255,
        (counter >>> 16) & 255,
        counter >>> 24,
      ]);
      expect(decodeFceuTcpPacket(bytes)).toEqual({ counter, data });
      valueOrDecodeError(() => decodeFceuTcpPacket(bytes.subarray(0, data.length % 5)), data.length % 5);
    },
  );
  test.prop([fc.integer({ min: 0, max: 0xfffffffe }), frameArb])(
    'TCP frame matches its layout and round-trips',
    (counter, frame) => {
      const bytes = new Uint8Array(9);
      encodeFceuTcpFrame(counter, frame, bytes);
      const oracle = new Uint8Array(fceuTcpFrameLayout.span);
      fceuTcpFrameLayout.encode({ counter, controllers: [...frame.controllers], command: frame.command }, oracle);
      expect(bytes).toEqual(oracle);
      expect(decodeFceuTcpFrame(bytes)).toEqual({ counter, frame });
      expect(decodeFceuServerTcpMessage(bytes)).toEqual({ kind: 'frame', counter, frame });
    },
  );
  test.prop([fc.uint8Array({ maxLength: 24 }), edits])(
    'arbitrary and mutated packets decode or throw DecodeError',
    (junk, e) => {
      valueOrDecodeError(() => decodeFceuUdpPacket(junk), junk.length);
      valueOrDecodeError(() => decodeFceuUdpFrame(junk), junk.length);
      valueOrDecodeError(() => decodeFceuUdpInput(junk), junk.length);
      valueOrDecodeError(() => decodeFceuTcpFrame(junk), junk.length);
      valueOrDecodeError(() => decodeFceuFrameData(junk), junk.length);
      const good = new Uint8Array(17);
      encodeFceuUdpFrame(7, 9, { controllers: new Uint8Array(4), command: 0 }, good);
      const bad = mutate(good, e);
      valueOrDecodeError(() => decodeFceuUdpFrame(bad), bad.length);
    },
  );
  test.prop([fc.uint8Array({ minLength: 17, maxLength: 17 })])('valid UDP frame bytes re-encode identically', (raw) => {
    const bytes = raw.slice();
    bytes.set(new Uint8Array(new Uint32Array([crc32(bytes, 4)]).buffer), 0); // make the CRC right (host is LE)
    let decoded: ReturnType<typeof decodeFceuUdpFrame>;
    try {
      decoded = decodeFceuUdpFrame(bytes);
    } catch (err) {
      expect(err).toMatchObject({ code: 'unknown-type', offset: 16 });
      return;
    }
    const again = new Uint8Array(17);
    encodeFceuUdpFrame(decoded.magic, decoded.counter, decoded.frame, again);
    expect(again).toEqual(bytes);
  });
  test.prop([
    fc.integer({ min: 0, max: 0xfffffffe }),
    fc.uint8Array({ minLength: 4, maxLength: 4 }),
    fc.integer({ min: 0, max: 255 }).filter((c) => !seedCommands.includes(c)),
    fc.nat({ max: 8 }),
  ])(
    'a command byte the seed does not define is unknown-type at its own offset (TCP frame, stream)',
    (counter, controllers, command, at) => {
      // Laid out by hand from the seed: counter (LE), 4 controller bytes, command; `at` bytes in.
      const bytes = new Uint8Array(at + 9);
      bytes.set(
        [counter & 255, (counter >>> 8) & 255, (counter >>> 16) & 255, counter >>> 24, ...controllers, command],
        at,
      );
      const unknownAt = (offset: number) => expect.objectContaining({ code: 'unknown-type', offset });
      expect(() => decodeFceuTcpFrame(bytes.subarray(at))).toThrow(unknownAt(8));
      expect(() => readFceuServerTcpMessage(bytes, at)).toThrow(unknownAt(at + 8));
      expect(() => decodeFceuFrameData(bytes, at + 4)).toThrow(unknownAt(at + 8));
    },
  );
  it('rejects a bad CRC and an unknown command', () => {
    const bytes = new Uint8Array(17);
    encodeFceuUdpFrame(1, 2, { controllers: new Uint8Array(4), command: FceuCommand.Reset }, bytes);
    bytes[13] = bytes[13]! ^ 1;
    expect(() => decodeFceuUdpFrame(bytes)).toThrow(expect.objectContaining({ code: 'bad-checksum', offset: 0 }));
    expect(() => encodeFceuTcpFrame(0, { controllers: new Uint8Array(4), command: 3 }, new Uint8Array(9))).toThrow(
      EncodeError,
    );
    expect(() =>
      encodeFceuTcpFrame(0xffffffff, { controllers: new Uint8Array(4), command: 0 }, new Uint8Array(9)),
    ).toThrow(EncodeError);
  });
  it('decodes frame data into a caller object without replacing it', () => {
    const out: FceuFrameData = { controllers: new Uint8Array(4), command: 0 };
    const ctl = out.controllers;
    const r = decodeFceuFrameData(new Uint8Array([9, 8, 7, 6, 31]), 0, out);
    expect(r).toBe(out);
    expect(out.controllers).toBe(ctl);
    expect([...ctl]).toEqual([9, 8, 7, 6]);
    expect(out.command).toBe(FceuCommand.PowerToggle);
  });
});

describe('FCE Ultra text messages', () => {
  test.prop([textArb])('server text round-trips and matches its layout', (text) => {
    const bytes = new Uint8Array(fceuServerTextSize(text));
    encodeFceuServerText(text, bytes);
    const layout = fceuServerTextLayout(text.length);
    const oracle = new Uint8Array(layout.span);
    const body = Uint8Array.from(text, (ch) => ch.charCodeAt(0));
    layout.encode({ counter: 0xffffffff, length: text.length, text: body, nul: 0 }, oracle);
    expect(bytes).toEqual(oracle);
    expect(decodeFceuServerTcpMessage(bytes)).toEqual({ kind: 'text', text });
  });
  test.prop([textArb])('client text round-trips', (text) => {
    const bytes = new Uint8Array(text.length + 1);
    expect(encodeFceuClientText(text, bytes)).toBe(text.length + 1);
    expect(bytes[text.length]).toBe(0);
    expect(decodeFceuClientText(bytes)).toBe(text);
  });
  it('shows characters below 32 as spaces', () => {
    expect(fceuDisplayText('a\tb\nc\u001fd ~\u00e9')).toBe('a b c d ~\u00e9');
  });
  it('limits texts to 256 bytes including the NUL', () => {
    expect(() => encodeFceuClientText('x'.repeat(256), new Uint8Array(300))).toThrow(
      expect.objectContaining({ code: 'too-long' }),
    );
    expect(encodeFceuClientText('x'.repeat(255), new Uint8Array(256))).toBe(256);
    expect(() => readFceuClientText(new Uint8Array(256).fill(65))).toThrow(
      expect.objectContaining({ code: 'too-large', offset: 0 }),
    );
    expect(readFceuClientText(new Uint8Array(255).fill(65))).toBeUndefined();
  });
  it('refuses an oversized announced length before the text arrives', () => {
    const header = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    expect(() => readFceuServerTcpMessage(header)).toThrow(expect.objectContaining({ code: 'too-large', offset: 4 }));
    const long = 'y'.repeat(300);
    const bytes = new Uint8Array(8 + 301);
    bytes.set([0xff, 0xff, 0xff, 0xff, 300 & 0xff, 300 >> 8, 0, 0]);
    bytes.set(
      Uint8Array.from(long, (c) => c.charCodeAt(0)),
      8,
    );
    expect(readFceuServerTcpMessage(bytes, 0, { maxBytes: 512 })?.message).toEqual({ kind: 'text', text: long });
  });
  test.prop([serverStreamItemsArb, chunkArb])(
    'a server TCP stream reads back message by message under any chunk size',
    (items, chunk) => {
      const stream = serverStream(items);
      const got: unknown[] = [];
      const consumed = readInChunks(stream, chunk, (prefix, offset) => {
        const r = readFceuServerTcpMessage(prefix, offset);
        if (!r) return 0;
        got.push(r.message);
        return r.size;
      });
      expect(consumed).toBe(stream.length);
      expect(got).toEqual(
        items.map((it, i) => ('t' in it ? { kind: 'text', text: it.t } : { kind: 'frame', counter: i, frame: it.f })),
      );
    },
  );
  test.prop([fc.uint8Array({ maxLength: 300 })])('arbitrary TCP bytes decode or throw DecodeError', (bytes) => {
    valueOrDecodeError(() => decodeFceuServerTcpMessage(bytes), bytes.length);
    valueOrDecodeError(() => readFceuServerTcpMessage(bytes), bytes.length);
    valueOrDecodeError(() => decodeFceuClientText(bytes), bytes.length);
  });
  test.prop([textArb, edits])('mutated text messages decode or throw DecodeError', (text, e) => {
    const bad = mutate(serverText(text), e);
    valueOrDecodeError(() => decodeFceuServerTcpMessage(bad), bad.length);
  });
});

describe('FCE Ultra UDP receive rule', () => {
  const MAGIC = 0xc0ffee;
  function input(counter: number, pad: number, magic = MAGIC): Uint8Array {
    const b = new Uint8Array(13);
    encodeFceuUdpInput(magic, counter, pad, b);
    return b;
  }

  it('drops a wrong magic and a wrong CRC, and counts why', () => {
    const rx = new FceuUdpReceiver({ magic: MAGIC, dataLength: 1 });
    expect(rx.receive(input(0, 5, MAGIC + 1))).toBe('bad-magic');
    const corrupt = input(0, 5);
    corrupt[12] = corrupt[12]! ^ 0x40;
    expect(rx.receive(corrupt)).toBe('bad-crc');
    expect(rx.receive(new Uint8Array(12))).toBe('bad-length');
    expect(rx.drops).toEqual({ badLength: 1, badCrc: 1, badMagic: 1, stale: 0 });
    expect(rx.accepted).toBe(0);
    expect(rx.receive(input(0, 5))).toBe('accepted');
    expect(rx.data[0]).toBe(5);
  });

  test.prop([
    fc.array(fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 255 })), {
      minLength: 1,
      maxLength: 40,
    }),
  ])('out-of-order counters resolve to the highest; duplicates and older ones are stale', (arrivals) => {
    const rx = new FceuUdpReceiver({ magic: MAGIC, dataLength: 1 });
    // The sender's pad for counter c is a function of c, so duplicates carry the same data.
    const padOf = new Map<number, number>();
    for (const [c, p] of arrivals) if (!padOf.has(c)) padOf.set(c, p);
    let highest = -1;
    let stale = 0;
    for (const [c] of arrivals) {
      const res = rx.receive(input(c, padOf.get(c)!));
      if (c > highest) {
        expect(res).toBe('accepted');
        highest = c;
      } else {
        expect(res).toBe('stale');
        stale++;
      }
    }
    expect(rx.lastCounter).toBe(highest);
    expect(rx.nextCounter).toBe(highest + 1);
    expect(rx.data[0]).toBe(padOf.get(highest));
    expect(rx.drops.stale).toBe(stale);
  });

  it('in-order mode keeps only the next counter', () => {
    const frame = { controllers: new Uint8Array([1, 2, 3, 4]), command: 0 };
    const pkt = (c: number) => {
      const b = new Uint8Array(17);
      encodeFceuUdpFrame(MAGIC, c, frame, b);
      return b;
    };
    const rx = new FceuUdpReceiver({ magic: MAGIC, dataLength: 5, mode: 'in-order' });
    expect(rx.receive(pkt(1))).toBe('stale');
    expect(rx.receive(pkt(0))).toBe('accepted');
    expect(rx.receive(pkt(0))).toBe('stale');
    expect(rx.receive(pkt(1))).toBe('accepted');
    expect([...rx.data]).toEqual([1, 2, 3, 4, 0]);
  });

  test.prop([fc.uint8Array({ maxLength: 20 })])('never throws on arbitrary datagrams', (bytes) => {
    const rx = new FceuUdpReceiver({ magic: MAGIC, dataLength: 1 });
    expect(['accepted', 'bad-length', 'bad-crc', 'bad-magic', 'stale']).toContain(rx.receive(bytes));
  });
});

/**
 * fast-check arbitraries of RetroArch messages, and an independent byte builder that lays out the
 * canonical bytes of each message from RETROARCH.md (it shares no code with src/retroarch).
 */
import { fc } from '@fast-check/vitest';
import type { RetroArchMessage, RetroArchSender } from '../src/index.js';

const u32 = fc.nat({ max: 0xffffffff });
const i32 = fc.integer({ min: -0x80000000, max: 0x7fffffff });
const u8 = fc.nat({ max: 0xff });
const encoder = new TextEncoder();

/** A string without NUL whose UTF-8 form has at most `maxBytes` bytes. */
export function textArb(maxBytes: number, minBytes = 0): fc.Arbitrary<string> {
  return fc
    .string({ unit: fc.oneof(fc.constantFrom('a', 'Z', '0', ' ', '.'), fc.string({ unit: 'binary', maxLength: 1 })) })
    .map((s) => s.replaceAll('\0', ''))
    .filter((s) => {
      const n = encoder.encode(s).length;
      return n >= minBytes && n <= maxBytes;
    });
}

const nick = textArb(31);
const sixteen = (arb: fc.Arbitrary<number>) => fc.array(arb, { minLength: 16, maxLength: 16 });
const bytes = (maxLength: number) => fc.uint8Array({ maxLength });

/** Messages a client or a host can send; PLAYER_CHAT carries a nick exactly when the host sends it. */
export function messageArb(sender: RetroArchSender): fc.Arbitrary<RetroArchMessage> {
  const empty = fc.constantFrom(
    'ack',
    'nak',
    'disconnect',
    'spectate',
    'requestSavestate',
    'resume',
    'pingRequest',
    'pingResponse',
  ) as fc.Arbitrary<
    'ack' | 'nak' | 'disconnect' | 'spectate' | 'requestSavestate' | 'resume' | 'pingRequest' | 'pingResponse'
  >;
  const chat =
    sender === 'host'
      ? fc.record({ type: fc.constant('playerChat' as const), nick, text: textArb(95, 1) })
      : fc.record({ type: fc.constant('playerChat' as const), text: textArb(95, 1) });
  return fc.oneof(
    empty.map((type) => ({ type })),
    fc.record({
      type: fc.constant('input' as const),
      frame: u32,
      client: u32,
      input: fc.array(u32, { maxLength: 20 }).map((a) => Uint32Array.from(a)),
    }),
    fc.record({ type: fc.constant('noInput' as const), frame: u32 }),
    fc.record({ type: fc.constant('nick' as const), nick }),
    fc.record({ type: fc.constant('password' as const), hash: textArb(64) }),
    fc.record({ type: fc.constant('info' as const), contentCrc: u32, coreName: nick, coreVersion: nick }),
    fc.record({
      type: fc.constant('sync' as const),
      frame: u32,
      paused: fc.boolean(),
      client: fc.nat({ max: 0x7fffffff }),
      devices: sixteen(u32),
      shareModes: sixteen(u8),
      deviceClients: sixteen(u32),
      nick,
      sram: bytes(300),
    }),
    fc.record({
      type: fc.constant('play' as const),
      slave: fc.boolean(),
      shareMode: u8,
      devices: fc.nat({ max: 0xffff }),
    }),
    fc.record({
      type: fc.constant('mode' as const),
      frame: u32,
      you: fc.boolean(),
      playing: fc.boolean(),
      slave: fc.boolean(),
      client: fc.nat({ max: 0xffff }),
      devices: u32,
      shareModes: sixteen(u8),
      nick,
    }),
    fc.record({ type: fc.constant('modeRefused' as const), reason: u32 }),
    fc.record({ type: fc.constant('crc' as const), frame: u32, crc: u32 }),
    fc.record({ type: fc.constant('loadSavestate' as const), frame: u32, uncompressedSize: u32, data: bytes(300) }),
    fc.record({ type: fc.constant('pause' as const), nick }),
    fc.record({ type: fc.constant('stall' as const), frames: u32 }),
    fc.record({ type: fc.constant('reset' as const), frame: u32 }),
    chat,
    fc.record({ type: fc.constant('settingAllowPausing' as const), allowPausing: fc.boolean() }),
    fc.record({ type: fc.constant('settingInputLatencyFrames' as const), min: i32, max: i32 }),
    fc.record({
      type: fc.constant('unknown' as const),
      command: u32.filter((c) => !KNOWN.has(c)),
      payload: bytes(40),
    }),
  );
}

/** Command ids from the RETROARCH.md table, written out independently of the source. */
export const IDS = {
  ack: 0x00,
  nak: 0x01,
  disconnect: 0x02,
  input: 0x03,
  noInput: 0x04,
  nick: 0x20,
  password: 0x21,
  info: 0x22,
  sync: 0x23,
  spectate: 0x24,
  play: 0x25,
  mode: 0x26,
  modeRefused: 0x27,
  crc: 0x40,
  requestSavestate: 0x41,
  loadSavestate: 0x42,
  pause: 0x43,
  resume: 0x44,
  stall: 0x45,
  reset: 0x46,
  playerChat: 0x1000,
  pingRequest: 0x1100,
  pingResponse: 0x1101,
  settingAllowPausing: 0x2000,
  settingInputLatencyFrames: 0x2001,
} as const;

export const KNOWN: ReadonlySet<number> = new Set(Object.values(IDS));

/** Big-endian u32 bytes. */
export function be32(v: number): number[] {
  return [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
}

/** A NUL-padded char[size] field. */
export function field(text: string, size: number): number[] {
  const b = [...encoder.encode(text)];
  return [...b, ...new Array<number>(size - b.length).fill(0)];
}

/** The canonical wire bytes of a message, laid out by hand from RETROARCH.md. */
export function referenceBytes(m: RetroArchMessage): Uint8Array {
  let command: number;
  let payload: number[];
  switch (m.type) {
    case 'ack':
    case 'nak':
    case 'disconnect':
    case 'spectate':
    case 'requestSavestate':
    case 'resume':
    case 'pingRequest':
    case 'pingResponse':
      command = IDS[m.type];
      payload = [];
      break;
    case 'input':
      command = IDS.input;
      payload = [...be32(m.frame), ...be32(m.client), ...[...m.input].flatMap(be32)];
      break;
    case 'noInput':
      command = IDS.noInput;
      payload = be32(m.frame);
      break;
    case 'nick':
    case 'pause':
      command = IDS[m.type];
      payload = field(m.nick, 32);
      break;
    case 'password':
      command = IDS.password;
      payload = field(m.hash, 64);
      break;
    case 'info':
      command = IDS.info;
      payload = [...be32(m.contentCrc), ...field(m.coreName, 32), ...field(m.coreVersion, 32)];
      break;
    case 'sync':
      command = IDS.sync;
      payload = [
        ...be32(m.frame),
        ...be32(m.client + (m.paused ? 2 ** 31 : 0)),
        ...m.devices.flatMap(be32),
        ...m.shareModes,
        ...m.deviceClients.flatMap(be32),
        ...field(m.nick, 32),
        ...m.sram,
      ];
      break;
    case 'play':
      command = IDS.play;
      payload = be32((m.slave ? 2 ** 31 : 0) + m.shareMode * 2 ** 16 + m.devices);
      break;
    case 'mode':
      command = IDS.mode;
      payload = [
        ...be32(m.frame),
        ...be32((m.you ? 2 ** 31 : 0) + (m.playing ? 2 ** 30 : 0) + (m.slave ? 2 ** 29 : 0) + m.client),
        ...be32(m.devices),
        ...m.shareModes,
        ...field(m.nick, 32),
      ];
      break;
    case 'modeRefused':
      command = IDS.modeRefused;
      payload = be32(m.reason);
      break;
    case 'crc':
      command = IDS.crc;
      payload = [...be32(m.frame), ...be32(m.crc)];
      break;
    case 'loadSavestate':
      command = IDS.loadSavestate;
      payload = [...be32(m.frame), ...be32(m.uncompressedSize), ...m.data];
      break;
    case 'stall':
      command = IDS.stall;
      payload = be32(m.frames);
      break;
    case 'reset':
      command = IDS.reset;
      payload = be32(m.frame);
      break;
    case 'playerChat':
      command = IDS.playerChat;
      payload = [...(m.nick === undefined ? [] : field(m.nick, 32)), ...encoder.encode(m.text)];
      break;
    case 'settingAllowPausing':
      command = IDS.settingAllowPausing;
      payload = be32(m.allowPausing ? 1 : 0);
      break;
    case 'settingInputLatencyFrames':
      command = IDS.settingInputLatencyFrames;
      payload = [...be32(m.min >>> 0), ...be32(m.max >>> 0)];
      break;
    case 'unknown':
      command = m.command;
      payload = [...m.payload];
      break;
  }
  return Uint8Array.from([...be32(command), ...be32(payload.length), ...payload]);
}

/**
 * Decoding a RetroArch (protocol 6, 1.14) netplay session with @netplay/protocol: this script
 * builds both directions of a short session as RetroArch writes them (connection headers, then
 * [u32 command][u32 length][payload] frames), cuts each stream into chunks of random sizes as TCP
 * may deliver them, and decodes them back with a `FrameDecoder` and the RetroArch codecs. Every
 * decoded message must equal the one encoded, and the joypad words must show the buttons pressed.
 */
import assert from 'node:assert/strict';
import {
  decodeRetroArchHeader,
  decodeRetroArchPayload,
  encodeRetroArchHeader,
  encodeRetroArchMessage,
  FrameDecoder,
  type RetroArchHeader,
  type RetroArchMessage,
  type RetroArchSender,
  retroArchClientHeader,
  retroArchHostHeader,
  retroArchMessageSize,
  retroArchPasswordHash,
} from '@netplay/protocol';
import { Prng } from '@netplay/transport';

const RETRO_B = 1 << 0;
const RETRO_A = 1 << 8;
const salt = 0x1234abcd;
const sixteen = (v: number) => Array.from({ length: 16 }, () => v);

const client: RetroArchMessage[] = [
  { type: 'nick', nick: 'ann' },
  { type: 'password', hash: retroArchPasswordHash(salt, 'hunter2') },
  { type: 'info', contentCrc: 0x5a5a1234, coreName: 'Nestopia', coreVersion: '1.52.0' },
  { type: 'play', slave: false, shareMode: 0, devices: 0 },
];
const host: RetroArchMessage[] = [
  { type: 'nick', nick: 'host' },
  { type: 'info', contentCrc: 0x5a5a1234, coreName: 'Nestopia', coreVersion: '1.52.0' },
  {
    type: 'sync',
    frame: 100,
    paused: false,
    client: 1,
    devices: [1, 1, ...sixteen(0).slice(2)],
    shareModes: sixteen(0),
    deviceClients: [1, 0, ...sixteen(0).slice(2)],
    nick: 'ann',
    sram: new Uint8Array(0),
  },
  {
    type: 'mode',
    frame: 101,
    you: true,
    playing: true,
    slave: false,
    client: 1,
    devices: 2,
    shareModes: sixteen(0),
    nick: 'ann',
  },
];
// Frames 101..130: the host holds B from frame 110, ann presses A on frames 120..124.
for (let f = 101; f <= 130; f++) {
  host.push({ type: 'input', frame: f, client: 0, input: Uint32Array.of(f >= 110 ? RETRO_B : 0) });
  client.push({ type: 'input', frame: f, client: 1, input: Uint32Array.of(f >= 120 && f < 125 ? RETRO_A : 0) });
  if (f % 10 === 0) host.push({ type: 'crc', frame: f, crc: (0x9e3779b1 * f) >>> 0 });
}
host.push({ type: 'playerChat', nick: 'host', text: 'gg ✓' });
host.push({ type: 'pause', nick: 'host' });

/** One direction as bytes: the 24-byte header, then every message framed. */
function stream(header: RetroArchHeader, messages: readonly RetroArchMessage[]): Uint8Array {
  const size = 24 + messages.reduce((n, m) => n + retroArchMessageSize(m), 0);
  const out = new Uint8Array(size);
  let n = encodeRetroArchHeader(header, out);
  for (const m of messages) n += encodeRetroArchMessage(m, out, n);
  assert.equal(n, size);
  return out;
}

/** Decodes one direction fed in random chunks (1..64 bytes): the header, then every message. */
function decode(bytes: Uint8Array, sender: RetroArchSender, seed: number) {
  const prng = new Prng(seed);
  const decoder = new FrameDecoder({ copy: true });
  let header: RetroArchHeader | undefined;
  const messages: RetroArchMessage[] = [];
  for (let at = 0; at < bytes.length; ) {
    const end = Math.min(bytes.length, at + prng.int(1, 65));
    decoder.push(bytes.subarray(at, end));
    at = end;
    if (header === undefined) {
      const raw = decoder.readRaw(24);
      if (raw === undefined) continue;
      header = decodeRetroArchHeader(raw, sender);
    }
    while (decoder.readFrame())
      messages.push(
        decodeRetroArchPayload(decoder.command, decoder.bytes, decoder.payloadOffset, decoder.payloadLength, sender),
      );
  }
  return { header, messages };
}

const toHost = stream(retroArchClientHeader(), client);
const toClient = stream(retroArchHostHeader({ salt }), host);
const fromClient = decode(toHost, 'client', 1);
const fromHost = decode(toClient, 'host', 2);
console.log(`client → host: ${toHost.length} bytes, ${fromClient.messages.length} messages`);
console.log(`host → client: ${toClient.length} bytes, ${fromHost.messages.length} messages`);

assert.equal(fromHost.header?.sender, 'host');
assert.equal(fromHost.header.sender === 'host' ? fromHost.header.salt : -1, salt);
assert.deepEqual(fromClient.messages, client, 'every client message decodes to what was encoded');
assert.deepEqual(fromHost.messages, host, 'every host message decodes to what was encoded');

// What a session log would show.
const counts = new Map<string, number>();
for (const m of [...fromClient.messages, ...fromHost.messages]) counts.set(m.type, (counts.get(m.type) ?? 0) + 1);
console.log(`message types: ${[...counts].map(([t, n]) => `${t} ${n}`).join(', ')}`);
const pressed = (ms: RetroArchMessage[], bit: number) =>
  ms.flatMap((m) => (m.type === 'input' && (m.input[0]! & bit) !== 0 ? [m.frame] : []));
const annA = pressed(fromClient.messages, RETRO_A);
const hostB = pressed(fromHost.messages, RETRO_B);
console.log(`ann pressed A on frames ${annA.join(', ')}; host held B from frame ${hostB[0]}`);
assert.deepEqual(annA, [120, 121, 122, 123, 124]);
assert.equal(hostB.length, 21);
const chat = fromHost.messages.find((m) => m.type === 'playerChat');
console.log(`chat: <${chat?.type === 'playerChat' ? chat.nick : ''}> ${chat?.type === 'playerChat' ? chat.text : ''}`);
console.log('ok: both directions of the RetroArch session decode to the messages sent');

/**
 * Exact re-encoding of live RetroArch 1.14 traffic: every connection header and every frame a real
 * RetroArch host or client sends is decoded with `@netplay/protocol` and encoded again, and the
 * bytes must be the wire bytes (`encode(decode(bytes)) === bytes`).
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import {
  decodeRetroArchHeader,
  decodeRetroArchPayload,
  encodeRetroArchHeader,
  encodeRetroArchMessageToBytes,
  FrameDecoder,
  RETROARCH_HEADER_SIZE,
  RETROARCH_NICK_SIZE,
  type RetroArchSender,
} from '@netplay/protocol';
import { afterEach, expect, it } from 'vitest';
import { connectRetroArch, type RetroArchConnection } from '../src/node.js';
import { type RetroArchProcess, startClient, startHost, until, waitForPort } from './harness.js';

/** Bytes as hex, cut after `max` bytes (for mismatch reports). */
function hex(bytes: Uint8Array, max = 96): string {
  const h = Buffer.from(bytes.subarray(0, max)).toString('hex');
  return bytes.length > max ? `${h}… (${bytes.length} bytes)` : h;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Decodes one direction of a RetroArch connection (the 24-byte header, then frames) as `sender`
 * sends it, re-encodes each message and compares it with the wire bytes. `push` returns the
 * re-encoded bytes of the whole frames the chunk completed (the original bytes of anything that
 * did not decode, so a proxy keeps going and the mismatch is reported).
 */
class ReencodeCheck {
  private readonly decoder = new FrameDecoder();
  private headerSeen = false;
  /** Messages re-encoded, by type (`header` for the connection header). */
  readonly counts: Record<string, number> = {};
  /** One line per message whose re-encoding differs from the wire or that does not decode. */
  readonly mismatches: string[] = [];

  constructor(readonly sender: RetroArchSender) {}

  get total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }

  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    try {
      this.decoder.push(chunk);
      if (!this.headerSeen) {
        const raw = this.decoder.readRaw(RETROARCH_HEADER_SIZE);
        if (raw === undefined) return out;
        this.headerSeen = true;
        const again = new Uint8Array(RETROARCH_HEADER_SIZE);
        encodeRetroArchHeader(decodeRetroArchHeader(raw, this.sender), again);
        this.note('header', raw, again);
        out.push(again);
      }
      const d = this.decoder;
      while (d.readFrame()) {
        const wire = d.bytes.slice(d.payloadOffset - 8, d.payloadOffset + d.payloadLength);
        const m = decodeRetroArchPayload(d.command, d.bytes, d.payloadOffset, d.payloadLength, this.sender);
        if (m.type === 'playerChat' && this.sender === 'host') {
          // RetroArch 1.14 sends the chat nick with uninitialised stack bytes after its NUL
          // (observed): compare the canonical form, NUL-padded with zeros.
          const nul = wire.subarray(8, 8 + RETROARCH_NICK_SIZE).indexOf(0);
          if (nul >= 0) wire.fill(0, 8 + nul, 8 + RETROARCH_NICK_SIZE);
        }
        const again = encodeRetroArchMessageToBytes(m);
        this.note(m.type, wire, again);
        out.push(again);
      }
    } catch (e) {
      this.mismatches.push(`${this.sender}: does not decode: ${e instanceof Error ? e.message : String(e)}`);
      out.push(chunk.slice());
    }
    return out;
  }

  private note(type: string, wire: Uint8Array, again: Uint8Array): void {
    this.counts[type] = (this.counts[type] ?? 0) + 1;
    if (!sameBytes(wire, again)) {
      this.mismatches.push(`${this.sender} ${type}: wire ${hex(wire)} re-encoded ${hex(again)}`);
    }
  }
}

const procs: RetroArchProcess[] = [];
const conns: RetroArchConnection[] = [];
let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const c of conns.splice(0)) c.socket.destroy();
  for (const s of sockets.splice(0)) s.destroy();
  for (const p of procs.splice(0)) await p.stop();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

it('every message a real RetroArch host sends to a player re-encodes to its exact bytes', async () => {
  const port = 56018;
  procs.push(await startHost(port, { nick: 'rahost', checkFrames: 60 }));
  const chats: string[] = [];
  const conn = await connectRetroArch({
    port,
    nick: 'netplay-ts',
    onEvent: (e) => {
      if (e.type === 'chat') chats.push(e.text);
    },
  });
  conns.push(conn);
  // Tapped before any byte of the host can arrive (connectRetroArch resolves on 'connect').
  const check = new ReencodeCheck('host');
  conn.socket.on('data', (chunk: Buffer) => {
    check.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  });
  await until(() => conn.client.state === 'spectating', 15_000, 'SYNC');
  conn.client.setInput([1 << 8]); // A
  conn.client.play();
  await until(() => conn.client.state === 'playing', 10_000, 'MODE');
  const from = conn.client.hostFrame;
  await until(() => conn.client.hostFrame >= from + 120, 15_000, '120 frames as a player');
  conn.client.chat('hello from netplay-ts');
  await until(() => chats.includes('hello from netplay-ts'), 5_000, 'the host to relay our chat');
  // RetroArch sends CRCs only while a remote player is connected, every netplay_check_frames.
  await until(() => (check.counts.crc ?? 0) >= 3, 15_000, '3 host CRCs');

  expect(check.mismatches).toEqual([]);
  expect(conn.client.state).toBe('playing');
  for (const type of [
    'header',
    'nick',
    'info',
    'sync',
    'settingAllowPausing',
    'settingInputLatencyFrames',
    'loadSavestate',
    'mode',
    'playerChat',
  ]) {
    expect(check.counts[type], type).toBeGreaterThanOrEqual(1);
  }
  expect(check.counts.input).toBeGreaterThanOrEqual(120);
  console.log(`re-encoded ${check.total} host messages exactly:`, check.counts);
  conn.close();
  expect(await conn.closed).toBeUndefined();
});

it('a real RetroArch client and host play through a proxy that forwards only re-encoded bytes, identical to the wire', async () => {
  const hostPort = 56019;
  const proxyPort = 56020;
  const host = await startHost(hostPort, { nick: 'rahost', checkFrames: 60 });
  procs.push(host);
  const fromClient = new ReencodeCheck('client');
  const fromHost = new ReencodeCheck('host');
  let closedEarly = false;
  server = createServer((down) => {
    const up = netConnect(hostPort, '127.0.0.1');
    sockets.push(down, up);
    const pipe = (from: Socket, to: Socket, check: ReencodeCheck) => {
      from.on('data', (chunk: Buffer) => {
        for (const bytes of check.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))) {
          to.write(bytes);
        }
      });
      from.on('close', () => {
        closedEarly = true;
        to.destroy();
      });
      from.on('error', () => undefined);
    };
    pipe(down, up, fromClient);
    pipe(up, down, fromHost);
  });
  const listening = server;
  await new Promise<void>((r) => listening.listen(proxyPort, '127.0.0.1', () => r()));
  await waitForPort(proxyPort);
  const client = startClient(proxyPort, { nick: 'raclient', extra: ['netplay_start_as_spectator = "false"'] });
  procs.push(client);
  await until(() => (fromClient.counts.input ?? 0) >= 300, 30_000, '300 INPUT frames from the real client');
  await until(() => (fromHost.counts.crc ?? 0) >= 3, 15_000, '3 host CRCs');

  expect(fromClient.mismatches).toEqual([]);
  expect(fromHost.mismatches).toEqual([]);
  expect(closedEarly).toBe(false);
  for (const type of ['header', 'nick', 'info', 'play']) {
    expect(fromClient.counts[type], type).toBeGreaterThanOrEqual(1);
  }
  for (const type of ['header', 'nick', 'info', 'sync', 'loadSavestate', 'mode']) {
    expect(fromHost.counts[type], type).toBeGreaterThanOrEqual(1);
  }
  expect(fromClient.counts.nak).toBeUndefined();
  expect(fromHost.counts.nak).toBeUndefined();
  expect(client.log()).toMatch(/\[Netplay\] You have joined as player 2/);
  expect(client.log()).not.toMatch(/\[ERROR\] \[Netplay\]/);
  expect(host.log()).not.toMatch(/\[ERROR\] \[Netplay\]/);
  console.log(`re-encoded ${fromClient.total} client and ${fromHost.total} host messages exactly:`, {
    client: fromClient.counts,
    host: fromHost.counts,
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeRetroArchInput } from '@netplay/protocol';
import { parseRecording } from '@netplay/retroarch';
import { listenRetroArchHost, type RetroArchHostSocket } from '@netplay/retroarch/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';
import { runCli } from '../src/index.js';
import { memoryIo } from '../src/io.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('netplay record', () => {
  it('records a RetroArch-protocol session (our relaying host on loopback) to a JSON-lines file', async () => {
    let peer: RetroArchHostSocket | undefined;
    const server = await listenRetroArchHost({
      port: 0,
      host: { info: { contentCrc: 0xec4b5f44, coreName: 'Nestopia', coreVersion: '1.52.0' } },
      frame: () => 500,
      onEvent: (c, e) => {
        if (e.type === 'joined') peer = c;
      },
    });
    const dir = mkdtempSync(join(tmpdir(), 'netplay-record-'));
    dirs.push(dir);
    const out = join(dir, 'session.jsonl');
    // The "designated peer": once the recorder spectates, feed it host input frames 500, 501, ...
    let frame = 500;
    const buf = new Uint8Array(32);
    const feeder = setInterval(() => {
      if (peer === undefined) return;
      for (let i = 0; i < 5; i++) peer.relay(buf.subarray(0, encodeRetroArchInput(buf, 0, frame++, 0, [frame & 0xff])));
    }, 5);
    try {
      const { port } = server.address() as AddressInfo;
      const io = memoryIo();
      const code = await runCli(['record', `127.0.0.1:${port}`, '--out', out, '--frames', '40', '--timeout', '20'], io);
      expect(code, io.stderr.join('')).toBe(ExitCode.Ok);
      const recording = parseRecording(readFileSync(out, 'utf8'));
      const inputs = recording.entries.flatMap((e) => (e.t === 'input' ? [e] : []));
      expect(inputs.length).toBeGreaterThanOrEqual(40);
      // Frames arrive in order from the SYNC frame, each with the word the host sent for it.
      expect(inputs.map((e) => e.f)).toEqual(Array.from({ length: inputs.length }, (_, i) => 500 + i));
      for (const e of inputs) expect(e.w).toEqual([(e.f + 1) & 0xff]);
    } finally {
      clearInterval(feeder);
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 30_000);

  it('exits with the usage code and the usage line for missing arguments', async () => {
    const io = memoryIo();
    expect(await runCli(['record'], io)).toBe(ExitCode.Usage);
    expect(io.stderr.join('')).toMatch(/netplay record HOST:PORT --out FILE/);
  });

  it('refuses an --out path that cannot be written before connecting', async () => {
    const io = memoryIo();
    const code = await runCli(['record', '127.0.0.1:9', '--out', '/nonexistent-dir/x.jsonl'], io);
    expect(code).toBe(ExitCode.Usage);
    expect(io.stderr.join('')).toMatch(/cannot write \/nonexistent-dir\/x\.jsonl/);
  });

  it('exits with the network code when nothing listens on the port', async () => {
    const server = await listenRetroArchHost({
      port: 0,
      host: { info: { contentCrc: 0, coreName: 'x', coreVersion: '' } },
    });
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((r) => server.close(() => r()));
    const dir = mkdtempSync(join(tmpdir(), 'netplay-record-'));
    dirs.push(dir);
    const io = memoryIo();
    const code = await runCli(['record', `127.0.0.1:${port}`, '--out', join(dir, 'x.jsonl'), '--timeout', '5'], io);
    expect(code).toBe(ExitCode.Network);
    expect(io.stderr.join('')).toMatch(/cannot connect/);
  });
});

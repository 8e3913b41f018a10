/** `runRecordCommand` against a real headless RetroArch 1.14 host with one of our clients playing. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { parseRecording } from '../src/index.js';
import { connectRetroArch, type RetroArchConnection, runRecordCommand } from '../src/node.js';
import { type RetroArchProcess, startHost, until } from './harness.js';

let host: RetroArchProcess | undefined;
let player: RetroArchConnection | undefined;
let dir: string | undefined;
afterEach(async () => {
  player?.socket.destroy();
  await host?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

it('records 300 frames of a live session to a JSON-lines file that parses back', async () => {
  const port = 56014;
  host = await startHost(port, { nick: 'rahost', checkFrames: 60 });
  player = await connectRetroArch({ port, nick: 'player' });
  const p = player;
  await until(() => p.client.state === 'spectating', 15_000, 'player SYNC');
  p.client.setInput([1 << 0]); // B
  p.client.play();
  await until(() => p.client.state === 'playing', 10_000, 'player MODE');

  dir = mkdtempSync(join(tmpdir(), 'netplay-rec-'));
  const out = join(dir, 'session.jsonl');
  const log: string[] = [];
  const code = await runRecordCommand([`127.0.0.1:${port}`, '--out', out, '--frames', '300', '--timeout', '30'], (l) =>
    log.push(l),
  );
  expect(log.join('\n')).toMatch(/recorded 300 frames/);
  expect(code).toBe(0);
  const rec = parseRecording(readFileSync(out, 'utf8'));
  expect(rec.header.core).toBe('Nestopia');
  expect(rec.header.hostNick).toBe('rahost');
  // The joining spectator gets one savestate (the host may send some frames' input first).
  expect(rec.entries.filter((e) => e.t === 'savestate')).toHaveLength(1);
  expect(rec.entries.at(-1)).toEqual({ t: 'end', frames: 300 });
  const frames = new Set(rec.entries.flatMap((e) => (e.t === 'input' || e.t === 'noinput' ? [e.f] : [])));
  expect(frames.size).toBe(300);
  // Consecutive frames from the first recorded one.
  const sorted = [...frames].sort((a, b) => a - b);
  expect(sorted.at(-1)! - sorted[0]!).toBe(299);
  expect(rec.entries.some((e) => e.t === 'crc' && e.f % 60 === 0)).toBe(true);
  const playerInputs = rec.entries.filter((e) => e.t === 'input' && e.c === p.client.clientNumber);
  expect(playerInputs.length).toBeGreaterThan(0);
  expect(playerInputs.every((e) => e.t === 'input' && e.w[0] === 1)).toBe(true);
});

it('exits 2 on bad arguments', async () => {
  const log: string[] = [];
  expect(await runRecordCommand(['nohostport', '--out', '/dev/null'], (l) => log.push(l))).toBe(2);
  expect(await runRecordCommand(['127.0.0.1:1'], (l) => log.push(l))).toBe(2);
  expect(log.join('\n')).toMatch(/usage: netplay record/);
});

/**
 * The two-peer rollback game of rollback-two-peers, over real UDP between two processes
 * (@netplay/transport-udp on 127.0.0.1) and the wall clock. This process hosts (player 0) and
 * starts a second process that joins (player 1); both tick at 62.5 fps for 4 s, record the hash of
 * every frame as it becomes final, and the joiner sends its hashes back on stdout. Every frame
 * final on both must hash the same on both and equal an offline replay of the generated inputs.
 * PongCore lives in examples/pong-core (`@netplay-example/pong-core`, a private shared workspace).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ROLLBACK_CHANNELS, type RollbackGame, rollback } from '@netplay/rollback';
import type { Connection } from '@netplay/transport';
import { connectUdp, listenUdp } from '@netplay/transport-udp';
import { DOWN, fnv1a64, PongCore, UP } from '@netplay-example/pong-core';

const FRAME_MS = 16;
const TICKS = 250;

function inputOf(p: number, f: number): number {
  let h = Math.imul((f >> 3) + 1, 0x9e3779b1) ^ Math.imul(p + 7, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  return [0, UP, DOWN][(h >>> 0) % 3]!;
}

/** Plays `TICKS` frames on the wall clock; returns the hash of every frame that became final. */
async function play(local: number, connection: Connection): Promise<Map<number, string>> {
  const game: RollbackGame = rollback({ core: new PongCore(), players: 2, local, fps: 1000 / FRAME_MS })
    .remote(1 - local, connection)
    .start();
  const finals = new Map<number, string>();
  let checked = -1;
  const pad = new Uint8Array(1);
  const t0 = performance.now();
  for (let t = 0; t < TICKS; t++) {
    pad[0] = inputOf(local, game.currentFrame + game.session.inputDelay);
    game.tick(pad);
    for (let f = checked + 1; f <= Math.min(game.confirmedFrame, game.currentFrame); f++) {
      const state = game.driver.stateOf(f);
      if (state) finals.set(f, fnv1a64(state).toString(16));
      checked = f;
    }
    const wait = t0 + (t + 1) * FRAME_MS - performance.now();
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
  }
  const s = game.stats;
  console.log(
    `player ${local}: frame ${game.currentFrame}, final ${game.confirmedFrame}, rollbacks ${s.rollbacks}, rtt ${game.peerStats()[0]?.rttMs.toFixed(1)} ms`,
  );
  game.stop();
  return finals;
}

if (process.argv[2] === 'join') {
  // The second process: join the host, play, report the final hashes as one JSON line.
  const connection = await connectUdp({
    channels: ROLLBACK_CHANNELS,
    host: '127.0.0.1',
    port: Number(process.argv[3]),
  });
  const finals = await play(1, connection);
  console.log(`RESULT ${JSON.stringify([...finals])}`);
  await new Promise((r) => setTimeout(r, 200)); // let the last acknowledgements go out
  connection.close('done');
} else {
  const listener = await listenUdp({ channels: ROLLBACK_CHANNELS, host: '127.0.0.1', port: 0 });
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), 'join', String(listener.port)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let childOut = '';
  child.stdout.on('data', (d) => {
    childOut += d;
  });
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  const connection = await new Promise<Connection>((r) => listener.on('connection', r));
  console.log(`host: process ${child.pid} joined from ${connection.remoteAddress}`);
  const mine = await play(0, connection);
  const code = await exited;
  for (const line of childOut.trim().split('\n')) if (!line.startsWith('RESULT ')) console.log(`[joiner] ${line}`);
  listener.close('done');
  assert.equal(code, 0, 'the joining process exited cleanly');
  const resultLine = childOut.split('\n').find((l) => l.startsWith('RESULT '));
  assert.ok(resultLine, 'the joiner reported its final frames');
  const theirs = new Map<number, string>(JSON.parse(resultLine.slice(7)));
  const common = [...mine.keys()].filter((f) => theirs.has(f)).sort((a, b) => a - b);
  for (const f of common) assert.equal(mine.get(f), theirs.get(f), `frame ${f} is the same in both processes`);
  // Offline replay of the generated inputs up to the last common final frame.
  const last = common[common.length - 1] ?? 0;
  const offline = new PongCore();
  for (let f = 0; f < last; f++) {
    for (let p = 0; p < 2; p++) offline.setInput(p, Uint8Array.of(inputOf(p, f)));
    offline.advance();
  }
  console.log(
    `${common.length} frames final in both processes, last ${last}: ${mine.get(last)} (offline ${offline.checksum().toString(16)})`,
  );
  assert.ok(common.length >= 150, `at least 150 common final frames (got ${common.length})`);
  assert.equal(mine.get(last), offline.checksum().toString(16), 'equal to the offline replay');
  console.log('ok: two processes over UDP agree with the offline replay');
}

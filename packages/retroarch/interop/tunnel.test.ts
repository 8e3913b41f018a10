/**
 * Our tunnel relay as a real RetroArch 1.14 host's custom MITM server: the host gets a session,
 * our emulating client (Nestopia in-process) joins through the relay with the session id, plays
 * and matches every CRC of the host, our recorder (a second client
 * through the relay) records 3,000 frames with no gap, the host answers the relay's pings, and a
 * stopped host (SIGSTOP) is dropped after 3 unanswered pings. A real RetroArch client that
 * connects to the relay directly gets the outdated answer.
 */
import { spawnSync } from 'node:child_process';
import { afterEach, expect, it } from 'vitest';
import { parseRecording, type RetroArchClientEvent, RetroArchRecorder } from '../src/index.js';
import {
  connectRetroArch,
  connectRetroArchEmulating,
  listenRetroArchTunnel,
  type RetroArchConnection,
  type RetroArchTunnel,
  type RetroArchTunnelEvents,
} from '../src/node.js';
import { loadNestopia, scriptedInput } from './cores.js';
import { type RetroArchProcess, startClient, startHostUnwaited, until } from './harness.js';

/** Seconds our client plays through the relay (the issue asks 60). */
const PLAY_SECONDS = Number(process.env.NETPLAY_TUNNEL_SECONDS ?? 60);
const RECORD_FRAMES = 3000;
const PING_MS = 1000;

let relay: RetroArchTunnel | undefined;
let ra: RetroArchProcess | undefined;
const conns: RetroArchConnection[] = [];
const cleanup: Array<() => void> = [];
let stopped: number[] = [];
afterEach(async () => {
  for (const c of conns.splice(0)) c.socket.destroy();
  for (const c of cleanup.splice(0)) c();
  for (const pid of stopped.splice(0)) signal(pid, 'SIGCONT');
  await ra?.stop();
  ra = undefined;
  await relay?.close();
  relay = undefined;
});

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone
  }
}

/** RetroArch itself: the child of our `timeout` process. */
function retroarchPids(p: RetroArchProcess): number[] {
  const pid = p.child.pid;
  if (pid === undefined) return [];
  return (spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout ?? '')
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
}

it(`a real RetroArch host behind our relay: our client plays ${PLAY_SECONDS} s, ${RECORD_FRAMES} frames recorded with no gap, pings answered, a stopped host dropped`, {
  timeout: PLAY_SECONDS * 1000 + 60_000,
}, async () => {
  const relayPort = 56031;
  const t = await listenRetroArchTunnel({ port: relayPort, pingIntervalMs: PING_MS });
  relay = t;
  const sessions: string[] = [];
  const pings: RetroArchTunnelEvents['ping'][] = [];
  const closed: RetroArchTunnelEvents['sessionClosed'][] = [];
  const addresses: RetroArchTunnelEvents['address'][] = [];
  let links = 0;
  t.events.on('session', (e) => sessions.push(e.session));
  t.events.on('ping', (e) => pings.push(e));
  t.events.on('sessionClosed', (e) => closed.push(e));
  t.events.on('address', (e) => addresses.push(e));
  t.events.on('link', () => links++);

  ra = startHostUnwaited(
    56032,
    {
      nick: 'rahost',
      checkFrames: 60,
      extra: [
        'netplay_use_mitm_server = "true"',
        'netplay_mitm_server = "custom"',
        `netplay_custom_mitm_server = "127.0.0.1|${relayPort}"`,
      ],
    },
    PLAY_SECONDS + 50,
  );
  const host = ra;
  await until(() => sessions.length === 1, 20_000, 'the host’s tunnel session');
  const session = sessions[0]!;

  // Our emulating player (Nestopia in-process, checking every CRC of the host) joins through the
  // relay and plays device 1 (player 2) with scripted input.
  const core = loadNestopia();
  cleanup.push(() => core.close());
  const input = scriptedInput(1818);
  const sent = new Map<number, number>();
  let playingFrom = -1;
  const mismatches: number[] = [];
  const player = await connectRetroArchEmulating({
    relay: `127.0.0.1:${relayPort}`,
    session,
    nick: 'netplay-relay',
    core,
    onInputSent: (frame, words) => sent.set(frame, words[0]!),
    onEmulatorEvent: (e) => {
      if (e.type === 'crcChecked' && e.host !== e.ours) mismatches.push(e.frame);
    },
    onEvent: (e) => {
      if (e.type === 'synced') player.client.play();
      if (e.type === 'mode' && e.you && e.playing) playingFrom = e.frame;
      if ((e.type === 'input' || e.type === 'noInput') && playingFrom >= 0) player.client.setInput([input(e.frame)]);
    },
  });
  conns.push(player);
  await until(() => player.client.state === 'playing', 20_000, 'our player through the relay');
  const started = Date.now();

  // Our recorder spectates through the relay too (a second link of the same session).
  const lines: string[] = [];
  const recorder = new RetroArchRecorder((l) => lines.push(l), RECORD_FRAMES);
  const spectator = await connectRetroArch({
    relay: `127.0.0.1:${relayPort}`,
    session,
    nick: 'netplay-rec',
    onEvent: (e: RetroArchClientEvent) => recorder.onEvent(e),
  });
  conns.push(spectator);
  await until(() => recorder.done, PLAY_SECONDS * 1000 + 10_000, `${RECORD_FRAMES} recorded frames`);
  recorder.end();
  await until(() => Date.now() - started >= PLAY_SECONDS * 1000, PLAY_SECONDS * 1000, 'the play time');

  expect(player.client.state).toBe('playing');
  const emu = { ...player.emulator.stats };
  expect(mismatches).toEqual([]);
  expect(emu.crcsChecked).toBeGreaterThanOrEqual(PLAY_SECONDS - 5);
  expect(spectator.client.state).toBe('spectating');
  const during = t.sessions()[0]!;
  const log = host.log();
  expect(log).toMatch(/netplay-relay has joined as player 2/);
  expect(log).not.toMatch(/\[ERROR\] \[Netplay\]/);
  expect(links).toBe(2);
  expect(addresses).toEqual([
    { session, client: expect.any(String), known: true },
    { session, client: expect.any(String), known: true },
  ]);
  // The host answered every ping (each one was the first since the last answer).
  expect(pings.length).toBeGreaterThanOrEqual(PLAY_SECONDS / 2);
  expect(pings.every((p) => p.unanswered === 1)).toBe(true);

  // The recording: 3,000 consecutive frames, and our player's input in it exactly as we sent it.
  const rec = parseRecording(lines.join('\n'));
  expect(rec.header.core).toBe('Nestopia');
  expect(rec.header.hostNick).toBe('rahost');
  const frames = [...new Set(rec.entries.flatMap((e) => (e.t === 'input' || e.t === 'noinput' ? [e.f] : [])))].sort(
    (a, b) => a - b,
  );
  expect(frames).toHaveLength(RECORD_FRAMES);
  expect(frames.at(-1)! - frames[0]!).toBe(RECORD_FRAMES - 1);
  const ours = rec.entries.flatMap((e) => (e.t === 'input' && e.c === player.client.clientNumber ? [e] : []));
  expect(ours.length).toBeGreaterThan(RECORD_FRAMES - 120);
  for (const e of ours) expect(e.t === 'input' && e.w[0]).toBe(sent.get(e.f));
  expect(new Set(ours.map((e) => e.t === 'input' && e.w[0])).size).toBeGreaterThan(3);
  expect(rec.entries.filter((e) => e.t === 'crc').length).toBeGreaterThanOrEqual(RECORD_FRAMES / 60 - 2);

  player.close();
  spectator.close();
  await until(() => /"netplay-relay" has disconnected/.test(host.log()), 10_000, 'the host logs our disconnect');
  await until(() => t.stats().links === 0, 5000, 'both links closed');

  // Stop the host (SIGSTOP): it answers no more pings and the relay drops it after 3.
  const pids = retroarchPids(host);
  expect(pids.length).toBeGreaterThan(0);
  const pingsBefore = pings.length;
  const stopAt = Date.now();
  stopped = pids;
  for (const pid of pids) signal(pid, 'SIGSTOP');
  await until(() => closed.length === 1, PING_MS * 6 + 2000, 'the stopped host dropped');
  const dropMs = Date.now() - stopAt;
  expect(closed[0]).toMatchObject({ session, error: expect.objectContaining({ code: 'ping-timeout' }) });
  expect(pings.slice(pingsBefore).map((p) => p.unanswered)).toEqual(expect.arrayContaining([2, 3]));
  expect(t.sessions()).toEqual([]);
  const stats = t.stats();
  console.log(
    `tunnel: ${PLAY_SECONDS} s through the relay, ${frames.length} frames recorded (${frames[0]}–${frames.at(-1)}), ` +
      `${ours.length} of our inputs in the recording, emulating player: ${emu.frames} frames run, ${emu.crcsChecked} CRCs checked, ` +
      `${emu.crcMismatches} mismatches, ${emu.savestatesLoaded} savestates loaded; ${pings.length} pings, ` +
      `bytes to host ${during.bytesToHost}, to clients ${during.bytesToClients}; stopped host dropped after ${dropMs} ms`,
  );
  expect(stats.sessionsCreated).toBe(1);
});

it('a real RetroArch client that connects to the relay directly is told it is outdated', async () => {
  const relayPort = 56033;
  const t = await listenRetroArchTunnel({ port: relayPort });
  relay = t;
  const refused: string[] = [];
  t.events.on('refused', (e) => refused.push(e.error.code));
  ra = startClient(relayPort, { nick: 'raclient' }, 30);
  const client = ra;
  await until(
    () => /running an old version of RetroArch/.test(client.log()),
    20_000,
    'the client reading the outdated answer',
  );
  expect(refused).toEqual(['outdated']);
});

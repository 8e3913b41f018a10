/**
 * A real headless RetroArch 1.14 client joins our emulating host (Nestopia + efp on our side too)
 * and plays while the host's input changes every few frames. The client compares every CRC we send
 * with its own state and asks for a savestate (REQUEST_SAVESTATE) on a mismatch: the count of
 * requests is the count of mismatches it saw. Our CRCs are checked against an offline replay of the
 * inputs (the host's script and the client's INPUT as received) on a second core instance.
 */
import { crc32, type LibretroCore } from '@netplay/core-libretro';
import { afterEach, expect, it } from 'vitest';
import { type RetroArchGameServer, serveRetroArchGame } from '../src/node.js';
import { desyncingCore, loadNestopia, PAD_A, SECONDS, scriptedInput } from './cores.js';
import { type RetroArchProcess, startClient, until, waitForPort } from './harness.js';

let game: RetroArchGameServer | undefined;
let client: RetroArchProcess | undefined;
let spectator: RetroArchProcess | undefined;
const cores: LibretroCore[] = [];
afterEach(async () => {
  await client?.stop();
  await spectator?.stop();
  await game?.close();
  for (const c of cores.splice(0)) c.close();
});

it(`a real RetroArch client plays ${SECONDS} s against our emulating host: CRCs agree`, async () => {
  const port = 56021;
  const core = loadNestopia();
  cores.push(core);
  const powerOn = new Uint8Array(core.rawStateBytes);
  const powerOnLen = core.saveRawInto(powerOn);
  const input = scriptedInput(14);
  // Break on purpose after the measured run: the host's core alone holds A for 30 frames (not
  // sent to the client), so the client must see a CRC mismatch, ask for a savestate and recover.
  const desync = { at: Number.POSITIVE_INFINITY };
  const hostCore = desyncingCore(core, desync);
  const clientInput = new Map<number, number>();
  const crcs = new Map<number, number>();
  const requests: number[] = [];
  const requestClients: number[] = [];
  const joined = new Map<string, number>();
  let playingFrom = -1;
  game = await serveRetroArchGame({
    port,
    core: hostCore,
    checkFrames: 60,
    localInput: input,
    connection: { nick: 'netplay-host' },
    onEvent: (e) => {
      if (e.type === 'crc') crcs.set(e.frame, e.crc);
      if (e.type === 'savestateRequest') {
        requests.push(e.frame);
        requestClients.push(e.client);
      }
    },
    onConnectionEvent: (c, e) => {
      if (e.type === 'joined') joined.set(e.nick, c.host.client);
      if (e.type === 'playing') playingFrom = e.frame;
      if (e.type === 'relay' && e.command === 3 && e.bytes.length >= 20) {
        clientInput.set(e.frame, new DataView(e.bytes.buffer, e.bytes.byteOffset).getUint32(16));
      }
    },
  });
  await waitForPort(port);
  client = startClient(port, { nick: 'raclient', extra: ['netplay_start_as_spectator = "false"'] }, SECONDS + 40);
  await until(() => playingFrom >= 0, 30_000, 'the client to play');
  // A second real RetroArch joins mid-session as a spectator: SYNC's device map names the player.
  spectator = startClient(port, { nick: 'raspec', extra: ['netplay_start_as_spectator = "true"'] }, SECONDS + 40);
  await until(() => joined.has('raspec'), 30_000, 'the spectator to join');
  const started = Date.now();
  const until60 = game.game.frame + SECONDS * 60;
  await until(
    () => game !== undefined && game.game.frame >= until60,
    SECONDS * 1000 + 30_000,
    `${SECONDS} s of frames`,
  );
  const seconds = (Date.now() - started) / 1000;
  const measured = requests.length;
  const sentBefore = game.game.stats.savestatesSent;
  // The host presses A for 30 frames its clients never hear of. The window sits between two CRC
  // frames (every 60th: 60k + 10 .. 60k + 39), so the CRC after it is the first to differ and the
  // state sent then already holds the whole desync: one request, then none (CI: a window across a
  // CRC frame desynced the client again after the savestate, and it asked twice).
  desync.at = Math.ceil(game.game.frame / 60) * 60 + 10;
  await until(
    () => requests.length > measured,
    20_000,
    'a savestate request after the desync on purpose (the player, the spectator or both)',
  );
  await until(() => game !== undefined && game.game.stats.savestatesSent > sentBefore, 5_000, 'the savestate');
  const recovered = requests.length;
  const calm = game.game.frame + 240;
  await until(() => game !== undefined && game.game.frame >= calm, 20_000, '4 more CRCs');
  const log = client.log();
  const spectatorLog = spectator.log();
  await client.stop();
  client = undefined;
  await spectator.stop();
  spectator = undefined;

  // Offline replay of the inputs on a second instance, from the host's power-on state.
  const replay = loadNestopia();
  cores.push(replay);
  replay.loadRaw(powerOn.subarray(0, powerOnLen), 0);
  // RetroArch's CRC: the serialized bytes zero-padded to the power-on size (see the README).
  const padded = new Uint8Array(replay.rawStateBytes);
  const paddedCrc = (): number => {
    padded.fill(0);
    replay.saveRawInto(padded);
    return crc32(padded, 0, powerOnLen) >>> 0;
  };
  let replayed = 0;
  let agree = 0;
  const last = Math.max(...crcs.keys());
  for (let f = 0; f <= last; f++) {
    const crc = crcs.get(f);
    if (crc !== undefined) {
      replayed++;
      if (paddedCrc() === crc) agree++;
    }
    replay.setInputMask(0, (input(f) | (f >= desync.at && f < desync.at + 30 ? PAD_A : 0)) & 0xffff);
    replay.setInputMask(1, f >= playingFrom ? (clientInput.get(f) ?? 0) & 0xffff : 0);
    replay.advance();
  }
  console.log(
    `emulating host: ${game.game.stats.frames} frames in ${seconds.toFixed(1)} s of play, ${crcs.size} CRCs sent, ` +
      `${agree}/${replayed} equal to the offline replay, ${requests.length} savestate requests from the RetroArch client ` +
      `(= CRC mismatches they saw); desync on purpose at ${desync.at}: requests at [${requests.join(', ')}] from clients [${requestClients.join(', ')}] ` +
      `(player ${joined.get('raclient')}, spectator ${joined.get('raspec')}), ` +
      `${game.game.stats.savestatesSent} savestates sent in all, ${requests.length - recovered} requests after recovery`,
  );
  expect(log).toMatch(/\[Netplay\] You have joined as player 2/);
  expect(log).not.toMatch(/\[ERROR\] \[Netplay\]/);
  expect(spectatorLog).toMatch(/\[Netplay\] Connected to: "netplay-host"/);
  for (const c of requestClients) expect([joined.get('raclient'), joined.get('raspec')]).toContain(c);
  expect(spectatorLog).not.toMatch(/\[ERROR\] \[Netplay\]/);
  expect(agree).toBe(replayed);
  expect(replayed).toBeGreaterThanOrEqual(SECONDS - 2);
  expect(measured).toBe(0);
  expect(requests[measured]).toBeGreaterThan(desync.at);
  expect(requests.length).toBe(recovered); // no request after the savestate: the client recovered
});

/**
 * Our emulating client (Nestopia + efp through @netplay/core-libretro) joins a real headless
 * RetroArch 1.14 host (spectating) as player 1 and plays with input that changes every few frames; it compares
 * every CRC the host sends with its own state.
 */
import { afterEach, expect, it } from 'vitest';
import { connectRetroArchEmulating, type RetroArchEmulatingConnection } from '../src/node.js';
import { desyncingCore, loadNestopia, SECONDS, scriptedInput } from './cores.js';
import { type RetroArchProcess, startHost, until } from './harness.js';

let host: RetroArchProcess | undefined;
let conn: RetroArchEmulatingConnection | undefined;
const cleanup: (() => void)[] = [];
afterEach(async () => {
  conn?.close();
  conn = undefined;
  await host?.stop();
  for (const c of cleanup.splice(0)) c();
});

it(`our emulating client plays ${SECONDS} s on a real RetroArch host and checks every CRC`, async () => {
  const port = 56022;
  const core = loadNestopia();
  cleanup.push(() => core.close());
  // The host spectates, so our client plays device 0 (player 1): efp reads only controller 1
  // (holding A on port 1 changes no state), and the host's own input would be the null driver's 0.
  host = await startHost(
    port,
    { nick: 'rahost', checkFrames: 60, extra: ['netplay_start_as_spectator = "true"'] },
    SECONDS + 40,
  );
  const input = scriptedInput(1414);
  // Break on purpose after the measured run: our core alone holds A on our port (device 0) for
  // 30 frames, input the host never gets: a CRC must mismatch, and the host's savestate repair it.
  const desync = { at: Number.POSITIVE_INFINITY };
  const ours = desyncingCore(core, desync);
  const mismatches: number[] = [];
  let playing = -1;
  const c = await connectRetroArchEmulating({
    port,
    nick: 'netplay-emu',
    core: ours,
    onEvent: (e) => {
      if (e.type === 'synced') c.client.play();
      if (e.type === 'mode' && e.you && e.playing) playing = e.frame;
      if ((e.type === 'input' || e.type === 'noInput') && playing >= 0) c.client.setInput([input(e.frame)]);
    },
    onEmulatorEvent: (e) => {
      if (e.type === 'crcChecked' && e.host !== e.ours) mismatches.push(e.frame);
    },
  });
  conn = c;
  await until(() => playing >= 0 && c.emulator.running, 20_000, 'playing with a loaded savestate');
  const started = Date.now();
  await until(
    () => Date.now() - started >= SECONDS * 1000 || c.client.state === 'closed',
    SECONDS * 1000 + 5000,
    'the run',
  );
  const s = { ...c.emulator.stats };
  const measured = [...mismatches];
  desync.at = c.emulator.frame + 10;
  await until(
    () => c.emulator.stats.savestatesLoaded > s.savestatesLoaded,
    20_000,
    'a savestate after the desync on purpose',
  ).catch((e: unknown) => {
    throw new Error(
      `${String(e)}; stats ${JSON.stringify(c.emulator.stats)}; frame ${c.emulator.frame}; mismatches at [${mismatches.join(', ')}]`,
    );
  });
  // A repair that lands inside the 30 frames of the desync replays them with A held again, so a
  // second mismatch (and repair) is right; judge only once the window is past and every mismatch
  // so far had its savestate.
  await until(
    () =>
      c.emulator.frame >= desync.at + 30 &&
      c.emulator.stats.savestatesLoaded - s.savestatesLoaded >= c.emulator.stats.crcMismatches - s.crcMismatches,
    30_000,
    'every mismatch of the desync on purpose repaired',
  );
  const repaired = c.emulator.stats.crcMismatches;
  const checked = c.emulator.stats.crcsChecked;
  await until(() => c.emulator.stats.crcsChecked >= checked + 4, 20_000, '4 more CRCs');
  const log = host.log();
  console.log(
    `emulating client: ${SECONDS} s, ${s.frames} frames run, ${s.crcsChecked} CRCs checked, ${s.crcMismatches} mismatches ` +
      `at [${measured.join(', ')}], ${s.savestateRequests} savestate requests, ${s.savestatesLoaded} savestates loaded, ` +
      `${s.crcsSkipped} skipped; desync on purpose at ${desync.at}: mismatches at [${mismatches.slice(measured.length).join(', ')}], ` +
      `${c.emulator.stats.savestatesLoaded - s.savestatesLoaded} savestate(s) loaded, ${c.emulator.stats.crcMismatches - repaired} mismatches after it`,
  );
  expect(c.client.state).toBe('playing');
  expect(log).toMatch(/netplay-emu has joined as player 1/);
  expect(s.crcsChecked).toBeGreaterThanOrEqual(SECONDS - 3);
  expect(s.crcMismatches).toBe(0);
  expect(mismatches[measured.length]).toBeGreaterThan(desync.at);
  expect(c.emulator.stats.crcMismatches).toBe(repaired); // the host's savestate repaired it
  expect(log).not.toMatch(/\[ERROR\] \[Netplay\]/);
});

// Nestopia's turbo buttons (X/Y) against a RetroArch-only baseline: interop/turbo-baseline.test.ts
// (live) and interop/turbo-phase.test.ts (the cause, deterministic).

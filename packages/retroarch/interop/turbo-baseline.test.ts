/**
 * Nestopia's turbo buttons (RetroPad X/Y) under RetroArch netplay, live: a RetroArch-only baseline
 * and our emulating client, side by side in the same test with the same input pattern.
 */
import { afterEach, expect, it } from 'vitest';
import {
  connectRetroArch,
  connectRetroArchEmulating,
  type RetroArchConnection,
  type RetroArchEmulatingConnection,
} from '../src/node.js';
import { loadNestopia, turboInput } from './cores.js';
import { type CountingProxy, startCountingProxy } from './counting-proxy.js';
import { type RetroArchProcess, startClient, startHost, until } from './harness.js';

/** Seconds of measured play with turbo (all sessions run at once). */
const RUN = Number(process.env.NETPLAY_TURBO_SECONDS ?? 30);
const TURBO = (1 << 1) | (1 << 9); // RetroPad Y and X: Nestopia's turbo B and A
/** Savestate requests ours may exceed the baseline by (see the README: two 1-in-3 lotteries, 2 requests each). */
const TOLERANCE = 4;

const processes: RetroArchProcess[] = [];
const conns: RetroArchConnection[] = [];
const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of conns.splice(0)) c.close();
  await Promise.all(processes.splice(0).map((p) => p.stop()));
  for (const c of cleanup.splice(0)) await c();
});

const hostConfig = { nick: 'rahost', checkFrames: 60, extra: ['netplay_start_as_spectator = "true"'] };

/** The pattern: `turboInput(seed)`, with X/Y held back until `gate.from` (set once every checker is in). */
function gatedInput(seed: number, gate: { from: number }): (frame: number) => number {
  const input = turboInput(seed);
  return (frame) => (frame >= gate.from ? input(frame) : input(frame) & ~TURBO);
}

it(`turbo buttons: RetroArch-only baseline vs our emulating client, ${RUN} s each, at once`, async () => {
  const [hostA, hostB, hostC] = await Promise.all([
    startHost(56031, hostConfig, RUN + 60),
    startHost(56032, hostConfig, RUN + 60),
    startHost(56033, hostConfig, RUN + 60),
  ]);
  processes.push(hostA, hostB, hostC);

  // Baseline: a pad that only sends input (player 1) and a real RetroArch spectator through the proxy.
  const gateA = { from: Number.POSITIVE_INFINITY };
  const inputA = gatedInput(7, gateA);
  let padPlaying = false;
  let padFrame = 0;
  const pad = await connectRetroArch({
    port: 56031,
    nick: 'netplay-pad',
    onEvent: (e) => {
      if (e.type === 'synced') pad.client.play();
      if (e.type === 'mode' && e.you && e.playing) padPlaying = true;
      if (e.type === 'input' || e.type === 'noInput') {
        padFrame = e.frame;
        if (padPlaying) pad.client.setInput([inputA(e.frame)]);
      }
    },
  });
  conns.push(pad);
  const proxy: CountingProxy = await startCountingProxy(56034, 56031);
  cleanup.push(() => proxy.close());

  // Ours, and ours without the repair shift (the cause, live).
  const logs = new Map<number, string[]>();
  const checks = new Map<number, { frame: number; equal: boolean }[]>();
  const checksOf = (port: number) => checks.get(port) ?? [];
  const emulating = async (
    port: number,
    shiftOnRepair: boolean | undefined,
    gate: { from: number },
  ): Promise<RetroArchEmulatingConnection> => {
    const core = loadNestopia();
    cleanup.push(() => core.close());
    const input = gatedInput(7, gate);
    let playing = false;
    const log: string[] = [];
    logs.set(port, log);
    checks.set(port, []);
    const c = await connectRetroArchEmulating({
      port,
      nick: 'netplay-emu',
      core,
      ...(shiftOnRepair === undefined ? {} : { shiftOnRepair }),
      onEvent: (e) => {
        if (e.type === 'synced') c.client.play();
        if (e.type === 'mode' && e.you && e.playing) playing = true;
        if ((e.type === 'input' || e.type === 'noInput') && playing) c.client.setInput([input(e.frame)]);
      },
      onEmulatorEvent: (e) => {
        if (e.type === 'crcChecked') checks.get(port)?.push({ frame: e.frame, equal: e.host === e.ours });
        if (e.type === 'crcChecked' && e.host !== e.ours) log.push(`x${e.frame}`);
        if (e.type === 'stateLoaded') log.push(`L${e.frame}`);
      },
    });
    conns.push(c);
    await until(() => playing && c.emulator.running, 20_000, 'our client playing with a savestate');
    return c;
  };
  const gateB = { from: Number.POSITIVE_INFINITY };
  const gateC = { from: Number.POSITIVE_INFINITY };
  const [ours, unshifted] = await Promise.all([emulating(56032, undefined, gateB), emulating(56033, false, gateC)]);
  await until(() => padPlaying, 20_000, 'the pad playing');
  const spectator = startClient(
    56034,
    { nick: 'raspec', checkFrames: 60, extra: ['netplay_start_as_spectator = "true"'] },
    RUN + 50,
  );
  processes.push(spectator);
  await until(() => /raspec/.test(hostA.log()), 20_000, 'the RetroArch spectator to join');
  // Turbo from 3 checks on: every checker's first CRC check passes without it (a RetroArch client
  // whose first check fails stops checking for good).
  gateA.from = padFrame + 180;
  gateB.from = ours.emulator.frame + 180;
  gateC.from = unshifted.emulator.frame + 180;
  await until(
    () => padFrame >= gateA.from && ours.emulator.frame >= gateB.from && unshifted.emulator.frame >= gateC.from,
    10_000,
    'the turbo gate',
  );
  const o0 = { ...ours.emulator.stats };
  const u0 = { ...unshifted.emulator.stats };
  const r0 = proxy.requests();
  const started = Date.now();
  await until(() => Date.now() - started >= RUN * 1000, RUN * 1000 + 5000, 'the run');
  const o1 = { ...ours.emulator.stats };
  const u1 = { ...unshifted.emulator.stats };
  const baseline = proxy.requests() - r0;
  // Then X/Y released everywhere for 5 checks: the state outside the savestate no longer matters,
  // so the next savestate repairs every peer for good.
  const end = { a: padFrame + 300, b: ours.emulator.frame + 300, c: unshifted.emulator.frame + 300 };
  gateA.from = gateB.from = gateC.from = Number.POSITIVE_INFINITY;
  let lateBaseline = proxy.requests();
  await until(() => padFrame >= end.a - 120 && ours.emulator.frame >= end.b - 120, 10_000, 'the tail');
  lateBaseline = proxy.requests();
  await until(() => padFrame >= end.a && ours.emulator.frame >= end.b, 10_000, 'the end of the tail');
  lateBaseline = proxy.requests() - lateBaseline;
  const ourRequests = o1.savestateRequests - o0.savestateRequests;
  const tail = checksOf(56032).filter((c) => c.frame >= end.b - 120);
  console.log(
    `turbo, ${RUN} s at once: RetroArch spectator of a RetroArch host ${baseline} savestate requests; ` +
      `our emulating client ${ourRequests} requests (${o1.crcMismatches - o0.crcMismatches} mismatches in ${o1.crcsChecked - o0.crcsChecked} checks, ${o1.repairShifts - o0.repairShifts} shifts); ` +
      `ours with shiftOnRepair false ${u1.savestateRequests - u0.savestateRequests} requests (${u1.crcMismatches - u0.crcMismatches} mismatches in ${u1.crcsChecked - u0.crcsChecked} checks)` +
      `\n  ours: ${logs.get(56032)?.join(' ')}\n  without the shift: ${logs.get(56033)?.join(' ')}`,
  );
  // The counts are small and noisy (see the README): the tolerance of TOLERANCE requests covers the
  // two independent lotteries (initial phase, host replays) that the baseline may win and we lose.
  expect(ourRequests).toBeLessThanOrEqual(baseline + TOLERANCE);
  // Both end in sync once X/Y are released: the spectator stops asking, our last checks are equal.
  expect(lateBaseline).toBe(0);
  expect(tail.length).toBeGreaterThanOrEqual(2);
  expect(tail.every((c) => c.equal)).toBe(true);
  expect(ours.client.state).toBe('playing');
  expect(hostA.log()).not.toMatch(/\[ERROR\] \[Netplay\]/);
  expect(hostB.log()).not.toMatch(/\[ERROR\] \[Netplay\]/);
});

/**
 * Why Nestopia's turbo buttons desync a RetroArch session, and why our emulating client's savestate
 * repair did not hold where a RetroArch client's sometimes does — deterministically, with our
 * emulating host and client in one process on two real Nestopia instances (no RetroArch, no
 * timing): Nestopia's turbo pulse counter lives in the libretro wrapper, outside the savestate, and
 * steps on every `retro_run` (period 3 frames with the default pulse), so two peers agree on a frame
 * with X/Y held only when they have called `retro_run` the same number of times modulo 3, and
 * loading a savestate does not change that. A RetroArch host shifts its count whenever it rolls back
 * and replays; a lockstep client never does, so without `shiftOnRepair` it stays out of phase and
 * every repair fails. See the README ("Turbo buttons").
 */
import type { LibretroCore } from '@netplay/core-libretro';
import { afterEach, expect, it } from 'vitest';
import {
  RetroArchClient,
  RetroArchClientEmulator,
  type RetroArchCore,
  RetroArchEmulatingHost,
  RetroArchHostConnection,
} from '../src/index.js';
import { loadNestopia, turboInput } from './cores.js';

const cores: LibretroCore[] = [];
afterEach(() => {
  for (const c of cores.splice(0)) c.close();
});

const FRAMES = 960;

/**
 * Our host and our client on two Nestopia instances, the host's input `turboInput(seed)` on
 * device 0 (the client plays device 1 with nothing held). The client's core calls `retro_run`
 * `clientLead` times before it joins, so it is that many runs ahead of the host when both reach
 * the host's frame 0 state; the host replays one frame (runs it, loads its state back, runs it
 * again — a RetroArch host's one-frame rollback) at each frame in `hostReplays`.
 */
function session(clientLead: number, shiftOnRepair: boolean, hostReplays: readonly number[] = []) {
  const hostCore = loadNestopia();
  const clientCore = loadNestopia();
  cores.push(hostCore, clientCore);
  for (let i = 0; i < clientLead; i++) clientCore.advance();
  const saved = new Uint8Array(hostCore.rawStateBytes);
  const replaying: RetroArchCore = {
    info: hostCore.info,
    contentCrc32: hostCore.contentCrc32,
    get frame() {
      return hostCore.frame;
    },
    ports: hostCore.ports,
    rawStateBytes: hostCore.rawStateBytes,
    setInputMask: (p, m) => hostCore.setInputMask(p, m),
    advance: () => {
      if (hostReplays.includes(hostCore.frame)) {
        const n = hostCore.saveRawInto(saved);
        hostCore.advance();
        hostCore.loadRaw(saved.subarray(0, n), hostCore.frame - 1);
      }
      hostCore.advance();
    },
    saveRawInto: (t) => hostCore.saveRawInto(t),
    loadRaw: (s, f) => hostCore.loadRaw(s, f),
  };
  const game = new RetroArchEmulatingHost({ core: replaying, checkFrames: 60, localInput: turboInput(7) });
  const checks: { frame: number; equal: boolean }[] = [];
  let emulator: RetroArchClientEmulator | undefined;
  const client = new RetroArchClient({
    nick: 'emu',
    onEvent: (e) => {
      emulator?.onClientEvent(e);
      if (e.type === 'synced') client.play();
    },
    onInputSent: (f, w) => emulator?.onInputSent(f, w),
  });
  emulator = new RetroArchClientEmulator({
    core: clientCore,
    shiftOnRepair,
    requestSavestate: () => client.requestSavestate(),
    onEvent: (e) => {
      if (e.type === 'crcChecked') checks.push({ frame: e.frame, equal: e.host === e.ours });
    },
  });
  let conn: RetroArchHostConnection;
  const peer = {
    get host() {
      return conn;
    },
    relay: (b: Uint8Array) => conn.relay(b),
  };
  conn = new RetroArchHostConnection({ ...game.hostOptions(), onEvent: (e) => game.onPeerEvent(peer, e) });
  const pump = () => {
    for (let i = 0; i < 50; i++) {
      const a = client.takeOutput();
      if (a !== undefined) conn.receive(a, 0);
      const b = conn.takeOutput();
      if (b !== undefined) client.receive(b, 0);
      if (a === undefined && b === undefined) return;
    }
  };
  client.start(0);
  pump();
  for (let f = 1; f <= FRAMES; f++) {
    game.runUntil(f);
    pump();
  }
  expect(game.frame).toBe(FRAMES);
  const emu = emulator;
  return { checks, stats: emu.stats, requests: game.stats.savestateRequests };
}

/** Checks mismatched after the first check at or after `from`, and whether the last `n` checks were equal. */
function summary(checks: readonly { frame: number; equal: boolean }[], from = 0) {
  const after = checks.filter((c) => c.frame >= from);
  return {
    mismatches: after.filter((c) => !c.equal).length,
    checks: after.length,
    endsEqual: checks.slice(-5).every((c) => c.equal),
    lastMismatch: Math.max(-1, ...checks.filter((c) => !c.equal).map((c) => c.frame)),
  };
}

it('same number of retro_run calls: no turbo desync, nothing to repair', () => {
  for (const lead of [0, 3]) {
    const s = session(lead, true);
    expect(s.checks.length).toBeGreaterThanOrEqual(FRAMES / 60 - 2);
    expect(summary(s.checks)).toMatchObject({ mismatches: 0, endsEqual: true });
    expect(s.stats.savestateRequests).toBe(0);
  }
});

it('a client 1 or 2 runs out of phase: savestates never repair it without the shift; with it, at most 2 repairs and equal to the end', () => {
  for (const lead of [1, 2]) {
    const off = summary(session(lead, false).checks);
    const on = session(lead, true);
    const s = summary(on.checks);
    console.log(
      `client ${lead} run(s) ahead: without the shift ${off.mismatches} mismatches in ${off.checks} checks; ` +
        `with it ${s.mismatches} (${on.stats.repairShifts} shifts), last at frame ${s.lastMismatch}`,
    );
    // Without: still out of phase at the end, repaired by every savestate and broken again.
    expect(off.mismatches).toBeGreaterThanOrEqual(off.checks / 2);
    expect(off.endsEqual).toBe(false);
    // With: one shift (lead 2: 2 + 1 = 3 runs) or two (lead 1: 1 + 2 = 3), then in phase for good.
    expect(s.mismatches).toBe(lead === 2 ? 1 : 2);
    expect(on.stats.savestateRequests).toBe(s.mismatches);
    expect(s.endsEqual).toBe(true);
    expect(s.lastMismatch).toBeLessThan(FRAMES / 2);
  }
});

it('a host that replays one frame (as a RetroArch host does on a misprediction) moves out of phase; the shift finds it again', () => {
  const at = 360;
  const off = session(0, false, [at]);
  const on = session(0, true, [at]);
  const a = summary(off.checks);
  const b = summary(on.checks);
  console.log(
    `host replays frame ${at}: without the shift ${summary(off.checks, at).mismatches} mismatches after it, ` +
      `with it ${summary(on.checks, at).mismatches} (last at ${b.lastMismatch})`,
  );
  expect(summary(off.checks, 0).mismatches - summary(off.checks, at).mismatches).toBe(0); // in phase before
  expect(a.endsEqual).toBe(false);
  expect(summary(on.checks, at).mismatches).toBeGreaterThanOrEqual(1);
  expect(summary(on.checks, at).mismatches).toBeLessThanOrEqual(2);
  expect(b.endsEqual).toBe(true);
});

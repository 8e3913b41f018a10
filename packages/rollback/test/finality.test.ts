import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { expectFinalsAgree, expectOneRemovalFramePerPlayer, FreezeMeter, stallFilter } from './faults.js';
import { FRAME_MS, inputPattern, Mesh, peerName } from './mesh.js';

/** The session's defaults (the runs): interrupted after 750 ms, removed after 5 s. */
const DISCONNECT_MS = 5000;
/** What an honest peer may stall past `disconnectMs`: the leave's report round trip and the LEAVE. */
const SLACK_MS = 1000;
/** Ticks (frames of 16 ms) each run lasts: 14.4 s; the fault starts at ≈ 1 s. */
const TICKS = 900;

function mesh(players: number, seed: number, adversary?: number): Mesh {
  const m: Mesh = new Mesh({
    players,
    seed,
    makeCore: () => new TestCore({ players }),
    inputOf: inputPattern(seed),
    link: { latencyMs: 30, jitterMs: 5 },
    ...(adversary === undefined
      ? {}
      : { outgoing: stallFilter(() => m.net.now(), adversary, 'truncate', 60 * FRAME_MS) }),
  });
  return m;
}

function run(m: Mesh, ticks: number, at?: Map<number, () => void>): FreezeMeter {
  const meter = new FreezeMeter(m);
  for (let t = 0; t < ticks; t++) {
    at?.get(t)?.();
    m.tick();
    meter.sample();
  }
  return meter;
}

describe('issue 13 finding 1: a peer that sends header-only INPUT no longer freezes the others', () => {
  for (const players of [2, 3]) {
    it(`${players} players: the truncating client is interrupted, removed at one agreed frame, and told so`, () => {
      const adversary = players - 1;
      const m = mesh(players, 13 + players, adversary);
      const meter = run(m, TICKS);
      const honest = m.rigs.filter((r) => r.player !== adversary);
      for (const rig of honest) {
        // Before the fix: frozen at the same frame for as long as the adversary kept it up.
        expect(rig.session.currentFrame).toBeGreaterThan(TICKS - (DISCONNECT_MS + SLACK_MS) / FRAME_MS);
        expect(meter.maxFreezeMs[rig.player]).toBeLessThanOrEqual(DISCONNECT_MS + SLACK_MS);
        expect(rig.events.some((e) => e.type === 'interrupted')).toBe(true);
        expect(rig.session.activePlayers()).not.toContain(adversary);
        expect(rig.session.endReason).toBeUndefined();
      }
      expectOneRemovalFramePerPlayer(m);
      expect(m.rigs[adversary]!.session.endReason).toBe('removed');
      expectFinalsAgree(m);
    });
  }

  it('3 players: a truncating host is replaced by the lowest remaining player (its group has quorum)', () => {
    const m = mesh(3, 31, 0);
    const meter = run(m, TICKS);
    for (const rig of m.rigs.slice(1)) {
      expect(rig.session.currentFrame).toBeGreaterThan(TICKS - (DISCONNECT_MS + SLACK_MS) / FRAME_MS);
      expect(meter.maxFreezeMs[rig.player]).toBeLessThanOrEqual(DISCONNECT_MS + SLACK_MS);
      expect(rig.session.activePlayers()).toEqual([1, 2]);
    }
    expect(m.rigs[1]!.session.isHost).toBe(true);
    expect(m.rigs[2]!.session.hostPeer).toBe(peerName(1));
    expectOneRemovalFramePerPlayer(m);
    expectFinalsAgree(m);
  });
});

describe('issue 13 finding 2: a paused or cut-off client never plays on alone (no split brain)', () => {
  for (const players of [2, 3]) {
    it(`${players} players: a client paused 6 s (SIGSTOP, its clock jumps) is removed and ends with 'removed'`, () => {
      const client = players - 1;
      const m = mesh(players, 20 + players);
      const at = new Map([
        [60, () => m.pause(client, false)],
        [60 + 375, () => m.resume(client)], // 6 s
      ]);
      run(m, TICKS, at);
      const c = m.rigs[client]!;
      // Before the fix: it dropped the host, made itself host and marked frames final alone,
      // with final hashes that differ from the host's.
      expect(c.events.map((e) => e.type)).not.toContain('host-changed');
      expect(c.session.endReason).toBe('removed');
      expect(c.session.confirmedFrame).toBeLessThanOrEqual(c.session.playerLeftAt(client) ?? Number.POSITIVE_INFINITY);
      for (const rig of m.rigs.filter((r) => r !== c)) {
        expect(rig.session.endReason).toBeUndefined();
        expect(rig.session.currentFrame).toBeGreaterThan(TICKS - (DISCONNECT_MS + SLACK_MS) / FRAME_MS);
      }
      expectOneRemovalFramePerPlayer(m);
      expectFinalsAgree(m);
    });

    it(`${players} players: a client cut off 6 s ends (no quorum) instead of taking over`, () => {
      const client = players - 1;
      const m = mesh(players, 40 + players);
      const others = m.rigs.filter((r) => r.player !== client).map((r) => r.name);
      const at = new Map([
        [60, () => m.net.partition([peerName(client)], others)],
        [60 + 375, () => m.net.heal()],
      ]);
      const meter = run(m, TICKS, at);
      const c = m.rigs[client]!;
      expect(c.events.map((e) => e.type)).not.toContain('host-changed');
      expect(['removed', 'host-lost', 'partitioned']).toContain(c.session.endReason);
      // Ended: no requests, nothing sent, finals frozen.
      const sent = c.session.peerStats().map((p) => p.bytesSent);
      const final = c.session.confirmedFrame;
      expect(c.session.advanceFrame()).toEqual([]);
      run(m, 30);
      expect(c.session.peerStats().map((p) => p.bytesSent)).toEqual(sent);
      expect(c.session.confirmedFrame).toBe(final);
      expect(meter.maxFreezeMs[client]).toBeLessThanOrEqual(DISCONNECT_MS + SLACK_MS);
      for (const rig of m.rigs.filter((r) => r !== c)) {
        expect(rig.session.endReason).toBeUndefined();
        expect(rig.session.currentFrame).toBeGreaterThan(TICKS - (DISCONNECT_MS + SLACK_MS) / FRAME_MS);
        expect(meter.maxFreezeMs[rig.player]).toBeLessThanOrEqual(DISCONNECT_MS + SLACK_MS);
      }
      expectOneRemovalFramePerPlayer(m);
      expectFinalsAgree(m);
    });
  }
});

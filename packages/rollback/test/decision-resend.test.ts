import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { CONTROL_CHANNEL } from '../src/index.js';
import { MessageType } from '../src/messages.js';
import { expectFinalsAgree, expectOneRemovalFramePerPlayer, FreezeMeter } from './faults.js';
import { FRAME_MS, inputPattern, Mesh } from './mesh.js';

const DISCONNECT_MS = 2000;

/**
 * Host decisions are re-sent (issue 13's debt): the host's decisions to p2 never cross the reliable
 * channel (the test drops them before the transport), so p2 can only learn them from the copies the
 * host re-sends once p2's INPUT shows it lacks them.
 */
describe('host decisions reach a peer whose reliable channel holds them up', () => {
  function run(players: number) {
    const m: Mesh = new Mesh({
      players,
      seed: 7,
      makeCore: () => new TestCore({ players }),
      inputOf: inputPattern(7),
      link: { latencyMs: 40, jitterMs: 5 },
      session: { interruptMs: 500, disconnectMs: DISCONNECT_MS, maxPrediction: 6 },
      timeouts: { interruptMs: 500, disconnectMs: 3000, connectMs: 5000 },
      // Every DECISION from the host (p0) to p2 on the reliable channel is lost for good.
      outgoing: (from, to, channel, data) =>
        from === 0 && to === 'p2' && channel === CONTROL_CHANNEL && data[0] === MessageType.Decision ? undefined : data,
    });
    const leaver = 1;
    const meter = new FreezeMeter(m);
    const ticks = 60 + Math.round((3 * DISCONNECT_MS) / FRAME_MS);
    for (let t = 0; t < ticks; t++) {
      if (t === 60) m.disconnect(leaver);
      m.tick();
      meter.sample();
    }
    return { m, meter, leaver };
  }

  for (const players of [3, 4]) {
    it(`${players} players: the leaver's LEAVE reaches p2 by re-sending; p2 is not removed, nobody freezes past disconnectMs`, () => {
      const { m, meter, leaver } = run(players);
      const p2 = m.rigs[2]!;
      const left = p2.events.filter((e) => e.type === 'player-left').map((e) => e.event);
      const hostLeft = m.rigs[0]!.events.filter((e) => e.type === 'player-left').map((e) => e.event);
      expect(hostLeft).toHaveLength(1);
      // Before the fix: p2 waited for the LEAVE, was excused for disconnectMs, then removed.
      expect(left).toEqual(hostLeft);
      expect((m.rigs[0]!.session as unknown as { role: { log: { resent: number } } }).role.log.resent).toBeGreaterThan(
        0,
      );
      for (const rig of m.rigs) {
        if (rig.player === leaver) continue;
        expect({ peer: rig.name, ended: rig.session.endReason }).toEqual({ peer: rig.name, ended: undefined });
        expect(rig.session.activePlayers()).not.toContain(leaver);
        expect(meter.maxFreezeMs[rig.player]!).toBeLessThanOrEqual(DISCONNECT_MS);
        expect(rig.checked).toBeGreaterThan(200);
      }
      expectOneRemovalFramePerPlayer(m);
      expectFinalsAgree(m);
    });
  }
});

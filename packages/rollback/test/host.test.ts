import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { GlitchCore } from './glitch-core.js';
import { inputPattern, Mesh } from './mesh.js';

/**
 * Peer `1 + pick % (players - 1)` runs a core that reads player 0's input wrong at frame `glitch`:
 * the host detects it at the first checksum exchange after the glitch, repairs it once, and from
 * then on every peer matches the offline replay.
 */
function expectDetectedAndRepaired(
  seed: number,
  players: number,
  interval: number,
  glitch: number,
  latencyMs: number,
  loss: number,
  pick: number,
): void {
  const victim = 1 + (pick % (players - 1));
  const mesh = new Mesh({
    players,
    seed,
    makeCore: (i) => (i === victim ? new GlitchCore(players, glitch) : new TestCore({ players })),
    inputOf: inputPattern(seed),
    link: { latencyMs, jitterMs: 10, loss },
    session: { checksumInterval: interval },
  });
  let appliedAt = -1;
  mesh.rigs[victim]!.session.on('desync-repaired', () => {
    appliedAt = mesh.rigs[victim]!.session.currentFrame;
  });
  let end = glitch + 8 * interval + 100;
  mesh.runUntilConfirmed(end, 20_000);
  // The repair is one message on the reliable channel: lost at 20 % loss, it waits for the
  // transport's RFC 6298 retransmission timeout (1 s and up), which may pass `end` (seed
  // -420790483: 6 players, 96 ms). Play on until it has landed, then judge frames past it.
  const repaired = () => mesh.rigs[victim]!.events.some((e) => e.type === 'desync-repaired');
  for (let t = 0; t < 1000 && !repaired(); t++) mesh.tick();
  if (appliedAt >= 0 && appliedAt + 2 * interval > end) {
    end = appliedAt + 2 * interval;
    mesh.runUntilConfirmed(end, 20_000);
  }
  const expectedFrame = (Math.floor(glitch / interval) + 1) * interval;
  const detected = mesh.rigs[0]!.events.find((e) => e.type === 'desync-detected')?.event as {
    frame: number;
    peer: string;
  };
  expect(detected).toMatchObject({ frame: expectedFrame, peer: `p${victim}` });
  expect(mesh.rigs[victim]!.events.filter((e) => e.type === 'desync-repaired').length).toBe(1);
  for (const m of mesh.mismatches) {
    expect(m.peer).toBe(`p${victim}`);
    expect(m.frame).toBeLessThanOrEqual(appliedAt);
  }
  for (const r of mesh.rigs) expect(r.checked).toBeGreaterThanOrEqual(end);
  const crcs = mesh.rigs.map((r) => mesh.finalCrcs.get(r.name)!.get(end));
  expect(new Set(crcs).size).toBe(1);
}

describe('host-client duties', () => {
  it('a spectator joins at frame 500 and a player leaves at frame 800: every peer agrees on both frames', () => {
    const mesh = new Mesh({
      players: 3,
      seed: 3,
      makeCore: () => new TestCore({ players: 3 }),
      inputOf: inputPattern(3),
      link: { latencyMs: 25, jitterMs: 10, loss: 0.05, duplicate: 0.02, reorder: 0.05 },
      session: { inputDelay: 1 },
    });
    const host = mesh.rigs[0]!;
    while (host.session.currentFrame < 500) mesh.tick();
    const spectator = mesh.addSpectator('watcher');
    while (host.session.currentFrame < 800) mesh.tick();
    mesh.disconnect(2);
    mesh.runUntilConfirmed(1000, 5000);
    while (spectator.session.currentFrame! < 1000) mesh.tick();

    // The join frame: the host's decision, the players' notices and the spectator's start agree.
    const joins = [0, 1, 2].map(
      (i) => mesh.rigs[i]!.events.find((e) => e.type === 'spectator-joined')?.event as { frame: number } | undefined,
    );
    const joinFrame = spectator.session.joinFrame!;
    expect(joinFrame).toBeGreaterThanOrEqual(500 - host.session.maxPrediction);
    expect(joinFrame).toBeLessThanOrEqual(510);
    for (const j of joins) expect(j?.frame).toBe(joinFrame);

    // The leave frame: host, remaining player and spectator report the same frame.
    const leaves = [0, 1].map((i) => mesh.rigs[i]!.session.playerLeftAt(2));
    expect(leaves[0]).toBeGreaterThanOrEqual(800 - host.session.maxPrediction);
    expect(leaves[0]).toBeLessThanOrEqual(810);
    expect(leaves[1]).toBe(leaves[0]);
    expect(spectator.session.playerLeftAt(2)).toBe(leaves[0]);
    for (const i of [0, 1]) {
      const ev = mesh.rigs[i]!.events.filter((e) => e.type === 'player-left');
      expect(ev).toEqual([{ type: 'player-left', event: { player: 2, frame: leaves[0] } }]);
    }
    expect(host.session.activePlayers()).toEqual([0, 1]);

    // Everyone, spectator included, matches the offline replay (player 2 zero from its leave frame).
    expect(mesh.mismatches).toEqual([]);
    expect(spectator.checked).toBeGreaterThanOrEqual(1000);
    for (const i of [0, 1]) expect(mesh.rigs[i]!.checked).toBeGreaterThanOrEqual(1000);
  });

  it('when the host leaves, the lowest remaining player takes over and removes it at a frame all agree on', () => {
    const mesh = new Mesh({
      players: 4,
      seed: 31,
      makeCore: () => new TestCore({ players: 4 }),
      inputOf: inputPattern(31),
      link: { latencyMs: 30, jitterMs: 10, loss: 0.05, reorder: 0.05 },
      session: { checksumInterval: 30 },
    });
    while (mesh.rigs[0]!.session.currentFrame < 300) mesh.tick();
    mesh.disconnect(0);
    mesh.runUntilConfirmed(600, 5000);
    const rest = mesh.rigs.slice(1);
    for (const rig of rest) {
      expect(rig.checked).toBeGreaterThanOrEqual(600);
      const changed = rig.events.filter((e) => e.type === 'host-changed').map((e) => e.event);
      expect(changed.length).toBe(1);
      expect((changed[0] as { peer: string | undefined }).peer).toBe(rig.name === 'p1' ? undefined : 'p1');
    }
    expect(rest.map((r) => r.session.isHost)).toEqual([true, false, false]);
    const leftAt = rest.map((r) => r.session.playerLeftAt(0));
    expect(leftAt[0]).toBeGreaterThan(290);
    expect(new Set(leftAt).size).toBe(1);
    expect(mesh.mismatches).toEqual([]);
    // The new host carries on with host duties: it repairs nothing because nothing differs.
    for (const rig of rest) expect(rig.events.filter((e) => e.type === 'desync-detected')).toEqual([]);
  });

  it('a corrupted peer is detected within one checksum interval and repaired from the host savestate', () => {
    const interval = 20;
    const glitch = 333;
    const mesh = new Mesh({
      players: 3,
      seed: 9,
      makeCore: (i) => (i === 1 ? new GlitchCore(3, glitch) : new TestCore({ players: 3 })),
      inputOf: inputPattern(9),
      link: { latencyMs: 30, jitterMs: 10, loss: 0.05 },
      session: { checksumInterval: interval },
    });
    let appliedAt = -1;
    mesh.rigs[1]!.session.on('desync-repaired', () => {
      appliedAt = mesh.rigs[1]!.session.currentFrame;
    });
    mesh.runUntilConfirmed(glitch + 10 * interval, 10_000);

    const firstDetection = (i: number, peer: string) =>
      mesh.rigs[i]!.events.find((e) => e.type === 'desync-detected' && (e.event as { peer: string }).peer === peer)
        ?.event as { frame: number; peer: string };
    // Both ends of the bad link see it, at the first exchanged frame after the glitch.
    const expectedFrame = (Math.floor(glitch / interval) + 1) * interval;
    expect(firstDetection(0, 'p1')).toMatchObject({ frame: expectedFrame });
    expect(firstDetection(1, 'p0')).toMatchObject({ frame: expectedFrame });
    expect(firstDetection(2, 'p1')).toMatchObject({ frame: expectedFrame });
    // The healthy peers agree with each other.
    expect(firstDetection(0, 'p2')).toBeUndefined();
    expect(expectedFrame - glitch).toBeLessThanOrEqual(interval);

    const repairs = mesh.rigs[1]!.events.filter((e) => e.type === 'desync-repaired');
    expect(repairs.length).toBe(1);
    const repairedAt = (repairs[0]!.event as { frame: number }).frame;
    // The host kept its savestate of the mismatching frame and sent exactly that one.
    expect(repairedAt).toBe(expectedFrame);

    // Only the glitched peer ever differed from the offline replay, and only until the repair
    // reached it (frames it had already taken as final); from there on it matches.
    expect(mesh.mismatches.length).toBeGreaterThan(0);
    expect(appliedAt).toBeGreaterThan(repairedAt);
    for (const m of mesh.mismatches) {
      expect(m.peer).toBe('p1');
      expect(m.frame).toBeGreaterThan(glitch);
      expect(m.frame).toBeLessThanOrEqual(appliedAt);
    }
    // Afterwards every checksum agrees: the last exchanged frames raised no new detection.
    const last = mesh.rigs.map(
      (r) => r.events.filter((e) => e.type === 'desync-detected').at(-1)?.event as { frame: number } | undefined,
    );
    for (const d of last) if (d !== undefined) expect(d.frame).toBeLessThan(repairedAt + interval);
    const finalFrame = Math.min(...mesh.rigs.map((r) => r.checked));
    const sums = mesh.rigs.map((r) => r.driver.stateOf(finalFrame));
    expect(sums.every((s) => s !== undefined)).toBe(true);
    expect(new Set(sums.map((s) => Buffer.from(s!).toString('hex'))).size).toBe(1);
  });

  it('spectate and play switches are honoured at a host frame every peer agrees on', () => {
    const mesh = new Mesh({
      players: 3,
      seed: 12,
      makeCore: () => new TestCore({ players: 3 }),
      inputOf: inputPattern(12),
      link: { latencyMs: 30, jitterMs: 10, loss: 0.05, reorder: 0.05 },
      spectating: [2],
      session: { inputDelay: 1 },
    });
    const host = mesh.rigs[0]!;
    const watcher = mesh.addSpectator('watcher');
    expect(host.session.activePlayers()).toEqual([0, 1]);
    while (host.session.currentFrame < 200) mesh.tick();
    mesh.requestMode(2, true);
    while (host.session.currentFrame < 400) mesh.tick();
    mesh.requestMode(1, false);
    mesh.runUntilConfirmed(600, 5000);

    const modeEvents = (events: Array<{ type: string; event: unknown }>) =>
      events.filter((e) => e.type === 'mode-changed').map((e) => e.event);
    const decided = modeEvents(host.events) as Array<{ player: number; frame: number; playing: boolean }>;
    expect(decided.map((d) => [d.player, d.playing])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect(decided[0]!.frame).toBeGreaterThan(200);
    expect(decided[0]!.frame).toBeLessThan(215);
    expect(decided[1]!.frame).toBeGreaterThan(395);
    expect(decided[1]!.frame).toBeLessThan(410);
    for (const rig of mesh.rigs) {
      expect(modeEvents(rig.events)).toEqual(decided);
      expect(rig.session.activePlayers()).toEqual([0, 2]);
      expect(rig.checked).toBeGreaterThanOrEqual(600);
    }
    expect(watcher.session.playerLeftAt(1)).toBe(decided[1]!.frame);
    expect(mesh.mismatches).toEqual([]);
  });

  test.prop(
    [
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.integer({ min: 2, max: 6 }),
      fc.integer({ min: 5, max: 60 }),
      fc.integer({ min: 50, max: 300 }),
      fc.integer({ min: 0, max: 100 }),
      fc.double({ min: 0, max: 0.2, noNaN: true }),
      fc.nat(),
    ],
    { numRuns: 15 },
  )('any corrupted peer is detected at the first exchange after the glitch and repaired', expectDetectedAndRepaired);

  it('one repair for one glitch when the victim is ahead: the rest of the message that asked for it is its diverged run (seed -1418693724)', () => {
    // 4 players, checksums every 12 frames, glitch at 132, 3 ms, 20 % loss: the victim's message
    // carried its checksums of 144 and 156; comparing 156 after the repair of 144 asked for a second.
    expectDetectedAndRepaired(10, 4, 12, 132, 3, 0.19980249321088198, 2080374776);
  });

  it('a repair is not held back behind a checksum the lossy link dropped several times (6 players, checksums every 9 frames, 65 ms, 20% loss)', () => {
    // The property's counterexample: a CHECKSUM from the host to the victim, lost four times in a
    // row, used to block the reliable control channel (and the repair queued behind it) for over 3 s.
    expectDetectedAndRepaired(1, 6, 9, 50, 65, 0.19986924109980467, 0);
  });
});

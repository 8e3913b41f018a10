import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { CONTROL_CHANNEL } from '../src/index.js';
import { MessageType } from '../src/messages.js';
import { FreezeMeter } from './faults.js';
import { FRAME_MS, inputPattern, Mesh } from './mesh.js';

const INTERRUPT_MS = 500;
const DISCONNECT_MS = 2000;

function mesh(seed: number, latencyMs: number, loss = 0): Mesh {
  return new Mesh({
    players: 3,
    seed,
    makeCore: () => new TestCore({ players: 3 }),
    inputOf: inputPattern(0),
    link: { latencyMs, jitterMs: 7, loss },
    session: {
      inputDelay: 2,
      maxPrediction: 4,
      checksumInterval: 30,
      interruptMs: INTERRUPT_MS,
      disconnectMs: DISCONNECT_MS,
    },
    timeouts: { interruptMs: INTERRUPT_MS, disconnectMs: 3000, connectMs: 5000 },
  });
}

function run(m: Mesh, ticks: number, meter?: FreezeMeter): void {
  for (let t = 0; t < ticks; t++) {
    m.tick();
    meter?.sample();
  }
}

function endOf(m: Mesh, i: number): string | undefined {
  return m.rigs[i]!.session.endReason;
}

describe('a non-host drops a player the host still hears (LOST; README "Finality and partitions", rule 4)', () => {
  it('p2 paused 1,960 ms: p1 drops it as the host hears it again; the host removes p2, p1 plays on (partition property, seed 719763688: p1 was frozen 4.7 s and removed)', () => {
    // The partition property's shrunk counterexample (its example there), step by step.
    const m = mesh(563065467, 59, 5e-324);
    const pauseAt = 40 + Math.round(464 / FRAME_MS);
    run(m, pauseAt);
    const meter = new FreezeMeter(m);
    m.pause(2, true);
    run(m, 40 + Math.round((464 + 1960) / FRAME_MS) - pauseAt, meter);
    m.resume(2);
    run(m, Math.round(6000 / FRAME_MS), meter);
    const [p0, p1, p2] = m.rigs;
    // The drop this test is about happened (p1 dropped p2 on its own).
    expect(p1!.events.some((e) => e.type === 'disconnected' && (e.event as { peer: string }).peer === 'p2')).toBe(true);
    expect([endOf(m, 0), endOf(m, 1), endOf(m, 2)]).toEqual([undefined, undefined, 'removed']);
    expect(p0!.session.activePlayers()).toEqual([0, 1]);
    expect(p1!.session.playerLeftAt(2)).toBe(p0!.session.playerLeftAt(2));
    expect(p2!.session.confirmedFrame).toBeLessThan(p0!.session.playerLeftAt(2)!);
    expect(meter.maxFreezeMs[1]).toBeLessThanOrEqual(DISCONNECT_MS + 1000);
    expect(p1!.session.confirmedFrame).toBeGreaterThan(200);
  });

  it('a LOST the host has no evidence for (it hears the named player well, the sender wants for nothing) removes its sender', () => {
    const m = mesh(7, 20);
    run(m, 60);
    // p1 claims it dropped p2 (a lie, or a link of its own that broke).
    m.rigs[0]!.session.receive('p1', CONTROL_CHANNEL, new Uint8Array([MessageType.Lost, 2]));
    // The host first waits `interruptMs` plus p2's round trip for evidence against p2.
    run(m, Math.floor(INTERRUPT_MS / FRAME_MS) - 2);
    expect(m.rigs[0]!.session.activePlayers()).toEqual([0, 1, 2]);
    expect(m.rigs[0]!.session.peerStats().map((p) => p.connected)).toEqual([true, true]);
    run(m, 60);
    expect([endOf(m, 0), endOf(m, 1), endOf(m, 2)]).toEqual([undefined, 'removed', undefined]);
    expect(m.rigs[2]!.session.playerLeftAt(1)).toBe(m.rigs[0]!.session.playerLeftAt(1));
    const before = m.rigs[2]!.session.confirmedFrame;
    run(m, 60);
    expect(m.rigs[2]!.session.confirmedFrame).toBeGreaterThan(before + 30);
  });

  it('a LOST that comes before the host noticed the named player die waits for the evidence: the dead player is removed, not the reporter', () => {
    const m = mesh(11, 20);
    run(m, 60);
    // p2 dies; p1 noticed first (its link closed) and its LOST reaches the host before anything else.
    m.rigs[0]!.session.receive('p1', CONTROL_CHANNEL, new Uint8Array([MessageType.Lost, 2]));
    m.disconnect(2);
    run(m, 120);
    expect([endOf(m, 0), endOf(m, 1)]).toEqual([undefined, undefined]);
    expect(m.rigs[0]!.session.activePlayers()).toEqual([0, 1]);
    expect(m.rigs[1]!.session.playerLeftAt(2)).toBe(m.rigs[0]!.session.playerLeftAt(2));
  });

  it('a malformed LOST is a protocol-error naming what is wrong; one to a non-host, or naming the sender, changes nothing', () => {
    const m = mesh(9, 20);
    run(m, 60);
    const host = m.rigs[0]!;
    host.session.receive('p1', CONTROL_CHANNEL, new Uint8Array([MessageType.Lost]));
    host.session.receive('p1', CONTROL_CHANNEL, new Uint8Array([MessageType.Lost, 9]));
    host.session.receive('p1', CONTROL_CHANNEL, new Uint8Array([MessageType.Lost, 1]));
    const errors = host.events
      .filter((e) => e.type === 'protocol-error')
      .map((e) => (e.event as { error: { code: string } }).error.code);
    expect(errors).toEqual(['bad-length', 'bad-value']);
    const ignored = m.rigs[2]!.session.ignoredMessages;
    m.rigs[2]!.session.receive('p1', CONTROL_CHANNEL, new Uint8Array([MessageType.Lost, 0]));
    expect(m.rigs[2]!.session.ignoredMessages).toBe(ignored + 1);
    run(m, 60);
    expect([endOf(m, 0), endOf(m, 1), endOf(m, 2)]).toEqual([undefined, undefined, undefined]);
    expect(host.session.activePlayers()).toEqual([0, 1, 2]);
  });
});

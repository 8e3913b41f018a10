import { fc, test } from '@fast-check/vitest';
import { decodeMameHubInputPacket } from '@netplay/protocol';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { LockstepError, MESH_CHANNELS, MeshPeer } from '../src/index.js';
import { expectDeterministic, network, scriptInputs } from './harness.js';
import { hubName, ManualNet, StarHub } from './hub.js';

const F = 20;
const IB = 2;

const linkArb = fc.record({
  latencyMs: fc.integer({ min: 0, max: 60 }),
  jitterMs: fc.integer({ min: 0, max: 30 }),
  loss: fc.double({ min: 0, max: 0.15, noNaN: true }),
  duplicate: fc.double({ min: 0, max: 0.1, noNaN: true }),
  reorder: fc.double({ min: 0, max: 0.3, noNaN: true }),
});

function meshOf(n: number, t0: number) {
  const members = Array.from({ length: n }, (_, i) => ({ id: i, port: i }));
  return (id: number) =>
    new MeshPeer({ id, members, ports: n, inputBytes: IB, frameMs: F, startMs: t0, syncIntervalFrames: 500 });
}

describe('mesh departures (star topology)', () => {
  test.prop(
    {
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      n: fc.integer({ min: 3, max: 5 }),
      links: fc.array(linkArb, { minLength: 8, maxLength: 8 }),
      victim: fc.nat(),
      killFrame: fc.integer({ min: 1, max: 250 }),
    },
    { numRuns: 15, endOnFailure: true },
  )(
    'after a client is killed the others play on, agree, and match the offline replay',
    ({ seed, n, links, victim: v, killFrame }) => {
      const net = network({ seed, link: { latencyMs: 10 } });
      for (let i = 1; i < n; i++) {
        net.setLink(hubName(i), hubName(0), links[2 * i - 2]!);
        net.setLink(hubName(0), hubName(i), links[2 * i - 1]!);
      }
      const t0 = Math.ceil(net.now() / 1000) * 1000 + 1000;
      const hub = new StarHub({
        net,
        n,
        channels: MESH_CHANNELS,
        broadcast: ['input', 'input-u'],
        make: meshOf(n, t0),
        makeCore: () => new TestCore({ players: n, inputBytes: IB }),
      });
      const victim = 1 + (v % (n - 1));
      const until = t0 + (killFrame + 400) * F;
      for (const [i, p] of hub.peers.entries()) scriptInputs(net, p.runner, IB, seed + i, F, t0 - 200, until);
      hub.killAt(victim, t0 + killFrame * F);
      net.clock.advanceTo(until + 5000);
      const live = hub.live;
      expect(live.length).toBe(n - 1);
      for (const p of live) {
        const i = hub.peers.indexOf(p);
        expect(p.runner.framesRun - hub.killedAtFrames[i]!, `${p.name} frames after the kill`).toBeGreaterThanOrEqual(
          120,
        );
      }
      expectDeterministic(live, () => new TestCore({ players: n, inputBytes: IB }), 120);
      for (const p of live) expect(p.scheduler.peerIds, p.name).not.toContain(victim);
      // The leaver's port reads neutral at the end.
      const last = live[0]!.runner.log.at(-1)!;
      expect([...last.inputs.subarray(victim * IB, victim * IB + IB)]).toEqual([0, 0]);
    },
  );
});

/** Meshes driven by hand (see {@link ManualNet}); peer 0 is the host. */
function manual(n: number): ManualNet<MeshPeer> {
  const members = Array.from({ length: n }, (_, i) => ({ id: i, port: i }));
  const peers = members.map(
    (m) => new MeshPeer({ id: m.id, members, ports: n, inputBytes: IB, frameMs: F, startMs: 1000 }),
  );
  return new ManualNet(peers, () => new TestCore({ players: n, inputBytes: IB }), IB, F, 1000);
}

/** The input packets (`input` channel, kind 1) `to` got from `from`, in order. */
function packets(m: ManualNet<MeshPeer>, from: number, to: number): Uint8Array[] {
  return m.delivered
    .filter((x) => x.from === from && x.to === to && x.channel === 'input' && x.data[0] === 1)
    .map((x) => x.data);
}

const fresh3 = () => new TestCore({ players: 3, inputBytes: IB });
const frames = (m: ManualNet<MeshPeer>, i: number) => m.logs[i]!.length;

const inputOf = (peer: number, k: number) => ((k * 7 + peer * 31) >> 2) & 0x7f;

function leave(leaver: number, end: number, cutAt: number, extra = 0): Uint8Array {
  const b = new Uint8Array(13 + extra);
  const dv = new DataView(b.buffer);
  b[0] = 6;
  dv.setUint32(1, leaver);
  dv.setUint32(5, end);
  dv.setUint32(9, cutAt);
  return b;
}

describe('mesh LEAVE', () => {
  it('the host sends LEAVE(leaver, first id it does not hold, time of the last one) on join', () => {
    const m = manual(3);
    for (let k = 0; k < 30; k++) m.step(inputOf);
    m.dead.add(2);
    m.step(inputOf);
    m.step(inputOf);
    const got = packets(m, 2, 0);
    const lastPacket = decodeMameHubInputPacket(got.at(-1)!.subarray(1));
    m.peers[0]!.removePeer(2, m.now);
    const out = m.peers[0]!.outbox.filter((e) => e.channel === 'join');
    expect(out.map((e) => e.to)).toEqual([1]);
    const dv = new DataView(out[0]!.data.buffer, out[0]!.data.byteOffset);
    expect(out[0]!.data.length).toBe(13);
    expect(out[0]!.data[0]).toBe(6);
    expect(dv.getUint32(1)).toBe(2);
    expect(dv.getUint32(5)).toBe(got.length);
    expect(dv.getUint32(9)).toBe(lastPacket.futureInputTime);
    // Removing again, or an unknown id, sends nothing more.
    m.collect();
    m.peers[0]!.removePeer(2, m.now);
    m.peers[0]!.removePeer(9, m.now);
    expect(m.peers[0]!.outbox.filter((e) => e.channel === 'join')).toEqual([]);
    for (let k = 0; k < 60; k++) m.step(inputOf);
    expect(m.peers[0]!.peerIds).toEqual([1]);
    expect(m.peers[1]!.peerIds).toEqual([0]);
    expect(frames(m, 0)).toBeGreaterThan(80);
    m.expectAgreement([0, 1], fresh3);
  });

  it('only the host removes peers', () => {
    const m = manual(3);
    for (let k = 0; k < 5; k++) m.step(inputOf);
    expect(() => m.peers[1]!.removePeer(2, m.now)).toThrow(LockstepError);
    try {
      m.peers[1]!.removePeer(2, m.now);
    } catch (e) {
      expect((e as LockstepError).code).toBe('bad-argument');
    }
  });

  it('drops a LEAVE from a non-host, for itself, for an unknown peer, or of a wrong length', () => {
    const m = manual(3);
    for (let k = 0; k < 5; k++) m.step(inputOf);
    const p1 = m.peers[1]!;
    const cases: [number, Uint8Array][] = [
      [2, leave(2, 0, 0)], // from a non-host
      [0, leave(1, 0, 0)], // for itself
      [0, leave(7, 0, 0)], // unknown peer
      [0, leave(2, 0, 0, 1)], // too long
      [0, leave(2, 0, 0).subarray(0, 12)], // too short
    ];
    for (const [i, [from, data]] of cases.entries()) {
      p1.receive(from, 'join', data, m.now);
      expect(p1.dropped, `case ${i}`).toBe(i + 1);
    }
    // Peer 2 is still waited for: cut peer 2 off without a LEAVE and peer 1 stalls.
    m.dead.add(2);
    const before = frames(m, 1);
    for (let k = 0; k < 40; k++) m.step(inputOf);
    expect(p1.peerIds).toContain(2);
    expect(frames(m, 1) - before).toBeLessThan(10);
  });

  it('a LEAVE that overtakes the leaver’s last packets: the member waits for them, then agrees', () => {
    const m = manual(3);
    for (let k = 0; k < 40; k++) m.step(inputOf);
    // Peer 2's last packets reach the host but not yet peer 1.
    m.hold = (x) => x.from === 2 && x.to === 1;
    for (let k = 0; k < 6; k++) m.step(inputOf);
    m.dead.add(2);
    m.step(inputOf);
    m.hold = () => false;
    const held = m.held.filter((x) => x.channel === 'input').length;
    expect(held).toBeGreaterThan(0);
    m.peers[0]!.removePeer(2, m.now);
    m.collect();
    // The LEAVE reaches peer 1 now, the held packets only later.
    const before = frames(m, 1);
    for (let k = 0; k < 3; k++) m.step(inputOf);
    const waitedAt = frames(m, 1);
    m.release();
    for (let k = 0; k < 60; k++) m.step(inputOf);
    expect(waitedAt - before).toBeLessThan(6);
    expect(frames(m, 1) - waitedAt).toBeGreaterThan(40);
    // The leaver's input counted until its cut: some frame after the LEAVE still has it.
    const cut = m.logs[0]!.findIndex((f, i) => i >= before && f[4] === 0 && f[5] === 0);
    expect(cut).toBeGreaterThan(before);
    m.expectAgreement([0, 1], fresh3);
  });

  it('packets beyond the cut that reach a member after the LEAVE are ignored', () => {
    const m = manual(3);
    for (let k = 0; k < 40; k++) m.step(inputOf);
    // Peer 2's last packets: held back from peer 1, and the host never gets the last three.
    m.hold = (x) => x.from === 2 && x.to === 1;
    for (let k = 0; k < 3; k++) m.step(inputOf);
    m.drop = (x) => x.from === 2 && x.to === 0;
    for (let k = 0; k < 3; k++) m.step((p, k) => (p === 2 ? 0xff : inputOf(p, k)));
    m.dead.add(2);
    m.step(inputOf);
    m.hold = () => false;
    m.drop = () => false;
    m.peers[0]!.removePeer(2, m.now);
    m.collect();
    m.step(inputOf);
    // Now peer 1 gets every packet of peer 2, three of them beyond the host's cut.
    const beyond = packets(m, 2, 0).length;
    m.release();
    expect(packets(m, 2, 1).length).toBeGreaterThan(beyond);
    for (let k = 0; k < 60; k++) m.step(inputOf);
    expect(frames(m, 1)).toBeGreaterThan(80);
    // Peer 2's last input (0xff) never counted anywhere.
    for (const i of [0, 1]) expect(m.logs[i]!.some((f) => f[4] === 0xff)).toBe(false);
    m.expectAgreement([0, 1], fresh3);
  });

  it('the LEAVE carries the packets the host got only unreliably, and members use them', () => {
    const m = manual(3);
    for (let k = 0; k < 40; k++) m.step(inputOf);
    // Peer 2's last packets: nothing reaches peer 1, only the unreliable copies reach the host.
    m.drop = (x) => x.from === 2 && (x.to === 1 || x.channel === 'input');
    const mark = m.delivered.length;
    for (let k = 0; k < 4; k++) m.step((p, k) => (p === 2 ? 0x7e + (k & 1) : inputOf(p, k)));
    m.dead.add(2);
    m.step(inputOf);
    m.drop = () => false;
    const onlyU = m.delivered.slice(mark).filter((x) => x.from === 2 && x.channel === 'input-u' && x.data[0] === 1);
    expect(onlyU.length).toBeGreaterThan(0);
    m.peers[0]!.removePeer(2, m.now);
    const out = m.peers[0]!.outbox.filter((e) => e.channel === 'join');
    expect(out.length).toBe(1);
    expect(out[0]!.data.length).toBe(13 + onlyU.length * onlyU[0]!.data.length);
    expect(out[0]!.data.subarray(13)).toEqual(Uint8Array.from(onlyU.flatMap((x) => [...x.data])));
    m.collect();
    for (let k = 0; k < 60; k++) m.step(inputOf);
    expect(frames(m, 1)).toBeGreaterThan(80);
    // Peer 1 ran the frames of peer 2's last inputs, as the host did.
    for (const i of [0, 1]) expect(m.logs[i]!.some((f) => f[4] === 0x7e || f[4] === 0x7f)).toBe(true);
    m.expectAgreement([0, 1], fresh3);
  });

  test.prop([fc.integer({ min: 0, max: 2 }), fc.uint8Array({ maxLength: 80 }), fc.boolean()], { numRuns: 200 })(
    'any bytes after the LEAVE type byte: applied or dropped, never thrown, and play goes on',
    (from, rest, valid) => {
      const m = manual(3);
      for (let k = 0; k < 10; k++) m.step(inputOf);
      const data = Uint8Array.of(6, ...(valid ? [0, 0, 0, 2] : []), ...rest);
      expect(() => m.peers[1]!.receive(from, 'join', data, m.now)).not.toThrow();
      for (let k = 0; k < 5; k++) m.step(inputOf);
      m.expectAgreement([0, 2], fresh3);
    },
  );
});

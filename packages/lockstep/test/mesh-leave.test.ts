import { fc, test } from '@fast-check/vitest';
import { decodeMameHubInputPacket } from '@netplay/protocol';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { MESH_CHANNELS, MeshPeer } from '../src/index.js';
import { readU32BE } from '../src/pool.js';
import { departureArbs, expectPlayOnAfterKill, ManualNet, type OracleContext } from './hub.js';
import { inForce, scriptValue, tapSends } from './oracle.js';

const F = 20;
const IB = 2;

function meshPeer(id: number, n: number, t0: number): MeshPeer {
  const members = Array.from({ length: n }, (_, i) => ({ id: i, port: i }));
  return new MeshPeer({ id, members, ports: n, inputBytes: IB, frameMs: F, startMs: t0, syncIntervalFrames: 500 });
}

describe('mesh departures (star topology)', () => {
  test.prop(
    {
      ...departureArbs,
    },
    { numRuns: 15, endOnFailure: true },
  )(
    'after a client is killed the others play on, agree, and match a replay of the generated inputs up to the cut',
    (d) => {
      const { live, victim } = expectPlayOnAfterKill(d, {
        channels: MESH_CHANNELS,
        broadcast: ['input', 'input-u'],
        inputBytes: IB,
        frameMs: F,
        make: (id, t0) => meshPeer(id, d.n, t0),
        oracle: meshOracle,
      });
      // The leaver's port reads neutral at the end.
      const last = live[0]!.runner.log.at(-1)!;
      expect([...last.inputs.subarray(victim * IB, victim * IB + IB)]).toEqual([0, 0]);
    },
  );
});

/**
 * The mesh's honest oracle on the star: each peer's packets as it sends them (a client's single
 * broadcast copy, the host's copy to a client that stays), checked against the rule (times never
 * go back, beyond every frame run; the GENERATED input in force when sent, on its own port), and
 * the host's LEAVE (`cutAt`). Frame f: every peer's latest stamped input at or before f; the
 * leaver's port neutral from `cutAt` on.
 */
function meshOracle(ctx: OracleContext<MeshPeer>): () => (frame: number) => Uint8Array {
  const { hub, net, scripts, victim, violations } = ctx;
  const n = hub.peers.length;
  const stamps: { time: number; value: Uint8Array }[][] = hub.peers.map(() => []);
  let cutAt = Infinity;
  for (const [i, p] of hub.peers.entries()) {
    const to = i === 0 ? (victim === 1 ? 2 : 1) : 0;
    let prev = -1;
    tapSends(hub.relay(i, to), (channel, data) => {
      if (i === 0 && channel === 'join' && data[0] === 6 && readU32BE(data, 1) === victim) cutAt = readU32BE(data, 9);
      if (channel !== 'input' || data[0] !== 1) return;
      const packet = decodeMameHubInputPacket(data.subarray(1));
      const t = packet.futureInputTime;
      const value = scriptValue(scripts[i]!, inForce(scripts[i]!, net.now()), IB);
      if (t < prev || t < p.scheduler.nextFrame) violations.push(`${p.name}: packet time ${t} after ${prev}`);
      for (let port = 0; port < n; port++) {
        const want = port === i ? value[0]! | (value[1]! << 8) : 0;
        if (packet.state[port]!.currentMask !== want)
          violations.push(`${p.name}: packet ${packet.inputId} port ${port}`);
      }
      stamps[i]!.push({ time: t, value });
      prev = t;
    });
  }
  return () => {
    if (cutAt === Infinity) violations.push('the host sent no LEAVE');
    return (f) => {
      const out = new Uint8Array(n * IB);
      for (const [i, list] of stamps.entries()) {
        if (i === victim && f >= cutAt) continue;
        let v: Uint8Array | undefined;
        for (const st of list) {
          if (st.time > f) break;
          v = st.value;
        }
        if (v) out.set(v, i * IB);
      }
      return out;
    };
  };
}

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
    m.run(30, inputOf);
    m.kill(2, inputOf);
    m.step(inputOf);
    const got = packets(m, 2, 0);
    const lastPacket = decodeMameHubInputPacket(got.at(-1)!.subarray(1));
    m.peers[0]!.removePeer(2, m.now);
    const out = m.peers[0]!.outbox.filter((e) => e.channel === 'join');
    // Every member and the leaver itself (issue 13: a removed peer learns it).
    expect(out.map((e) => e.to)).toEqual([1, 2]);
    const dv = new DataView(out[0]!.data.buffer, out[0]!.data.byteOffset);
    expect(out[0]!.data.length).toBe(13);
    expect(out[0]!.data[0]).toBe(6);
    expect(dv.getUint32(1)).toBe(2);
    expect(dv.getUint32(5)).toBe(got.length);
    expect(dv.getUint32(9)).toBe(lastPacket.futureInputTime);
    // Removing again, or an unknown id, sends nothing more.
    m.expectRemoveOnce(2, (e) => e.channel === 'join');
    m.run(60, inputOf);
    expect(m.peers[0]!.peerIds).toEqual([1]);
    expect(m.peers[1]!.peerIds).toEqual([0]);
    expect(frames(m, 0)).toBeGreaterThan(80);
    m.expectAgreement([0, 1], fresh3);
  });

  it('only the host removes peers', () => {
    const m = manual(3);
    m.run(5, inputOf);
    m.expectOnlyHostRemoves();
  });

  it('drops a LEAVE from a non-host, for itself, for an unknown peer, or of a wrong length', () => {
    const m = manual(3);
    m.run(5, inputOf);
    m.expectDropsBadLeaves('join', (leaver, extra) => leave(leaver, 0, 0, extra));
    // Peer 2 is still waited for: cut peer 2 off without a LEAVE and peer 1 stalls.
    m.expectStallWithoutLeave(2, 1, inputOf);
  });

  it('a LEAVE that overtakes the leaver’s last packets: the member waits for them, then agrees', () => {
    const m = manual(3);
    m.run(40, inputOf);
    // Peer 2's last packets reach the host but not yet peer 1.
    m.hold = (x) => x.from === 2 && x.to === 1;
    m.run(6, inputOf);
    m.kill(2, inputOf);
    const held = m.held.filter((x) => x.channel === 'input').length;
    expect(held).toBeGreaterThan(0);
    m.peers[0]!.removePeer(2, m.now);
    m.collect();
    // The LEAVE reaches peer 1 now, the held packets only later.
    const before = frames(m, 1);
    m.run(3, inputOf);
    const waitedAt = frames(m, 1);
    m.release();
    m.run(60, inputOf);
    expect(waitedAt - before).toBeLessThan(6);
    expect(frames(m, 1) - waitedAt).toBeGreaterThan(40);
    // The leaver's input counted until its cut: some frame after the LEAVE still has it.
    const cut = m.logs[0]!.findIndex((f, i) => i >= before && f[4] === 0 && f[5] === 0);
    expect(cut).toBeGreaterThan(before);
    m.expectAgreement([0, 1], fresh3);
  });

  it('packets beyond the cut that reach a member after the LEAVE are ignored', () => {
    const m = manual(3);
    m.run(40, inputOf);
    // Peer 2's last packets: held back from peer 1, and the host never gets the last three.
    m.hold = (x) => x.from === 2 && x.to === 1;
    m.run(3, inputOf);
    m.drop = (x) => x.from === 2 && x.to === 0;
    m.run(3, (p, k) => (p === 2 ? 0xff : inputOf(p, k)));
    m.kill(2, inputOf);
    m.peers[0]!.removePeer(2, m.now);
    m.collect();
    m.step(inputOf);
    // Now peer 1 gets every packet of peer 2, three of them beyond the host's cut.
    const beyond = packets(m, 2, 0).length;
    m.release();
    expect(packets(m, 2, 1).length).toBeGreaterThan(beyond);
    m.run(60, inputOf);
    expect(frames(m, 1)).toBeGreaterThan(80);
    // Peer 2's last input (0xff) never counted anywhere.
    for (const i of [0, 1]) expect(m.logs[i]!.some((f) => f[4] === 0xff)).toBe(false);
    m.expectAgreement([0, 1], fresh3);
  });

  it('the LEAVE carries the packets the host got only unreliably, and members use them', () => {
    const m = manual(3);
    m.run(40, inputOf);
    // Peer 2's last packets: nothing reaches peer 1, only the unreliable copies reach the host.
    m.drop = (x) => x.from === 2 && (x.to === 1 || x.channel === 'input');
    const mark = m.delivered.length;
    m.run(4, (p, k) => (p === 2 ? 0x7e + (k & 1) : inputOf(p, k)));
    m.kill(2, inputOf);
    // Each unreliable copy is a bundle (kind 4) ending with its new packet (see mesh-bundle.ts).
    const onlyU = m.delivered
      .slice(mark)
      .filter((x) => x.from === 2 && x.channel === 'input-u' && x.data[0] === 4)
      .map((x) => ({ data: newestInBundle(x.data) }))
      .filter((x) => x.data[0] === 1);
    expect(onlyU.length).toBeGreaterThan(0);
    m.peers[0]!.removePeer(2, m.now);
    const out = m.peers[0]!.outbox.filter((e) => e.channel === 'join' && e.to === 1);
    expect(out.length).toBe(1);
    expect(out[0]!.data.length).toBe(13 + onlyU.length * onlyU[0]!.data.length);
    expect(out[0]!.data.subarray(13)).toEqual(Uint8Array.from(onlyU.flatMap((x) => [...x.data])));
    m.collect();
    m.run(60, inputOf);
    expect(frames(m, 1)).toBeGreaterThan(80);
    // Peer 1 ran the frames of peer 2's last inputs, as the host did.
    for (const i of [0, 1]) expect(m.logs[i]!.some((f) => f[4] === 0x7e || f[4] === 0x7f)).toBe(true);
    m.expectAgreement([0, 1], fresh3);
  });

  test.prop([fc.integer({ min: 0, max: 2 }), fc.uint8Array({ maxLength: 80 }), fc.boolean()], { numRuns: 200 })(
    'any bytes after the LEAVE type byte: applied or dropped, never thrown, and play goes on',
    (from, rest, valid) => {
      const data = Uint8Array.of(6, ...(valid ? [0, 0, 0, 2] : []), ...rest);
      manual(3).expectSurvives(from, 'join', data, inputOf, fresh3);
    },
  );
});

/** The last message of an `input-u` bundle: `4, u8 n, n × (u16 length, message)`. */
function newestInBundle(b: Uint8Array): Uint8Array {
  let o = 2;
  let last = b.subarray(0, 0);
  for (let k = 0; k < b[1]!; k++) {
    const len = (b[o]! << 8) | b[o + 1]!;
    last = b.subarray(o + 2, o + 2 + len);
    o += 2 + len;
  }
  return last;
}

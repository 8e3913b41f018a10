import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import { decodeFaMessage, FRAME_ADVANCE_CHANNELS, FrameAdvancePeer } from '../src/index.js';
import { departureArbs, expectPlayOnAfterKill, ManualNet, type OracleContext } from './hub.js';
import { inForce, scriptValue, tapSends } from './oracle.js';

const F = 20;

function faPeer(id: number, n: number, t0: number, seed: number, extraDelayMs = 0, shared = false): FrameAdvancePeer {
  const peers = Array.from({ length: n }, (_, i) => i).filter((i) => i !== id);
  return new FrameAdvancePeer({
    id,
    port: shared ? 0 : id,
    peers,
    ports: n,
    inputBytes: 1,
    frameMs: F,
    startMs: t0,
    seed: seed * 31 + id,
    extraDelayMs,
  });
}

describe('frame-advance departures (star topology)', () => {
  test.prop(
    {
      ...departureArbs,
      extraDelayMs: fc.integer({ min: 0, max: 40 }),
      shared: fc.boolean(),
    },
    { numRuns: 15, endOnFailure: true, seed: 1130497145, path: '7' },
  )(
    'after a client is killed the others play on, agree, and match a replay of the generated inputs up to the cut',
    (d) => {
      const { live, victim } = expectPlayOnAfterKill(d, {
        channels: FRAME_ADVANCE_CHANNELS,
        broadcast: ['sched'],
        inputBytes: 1,
        frameMs: F,
        make: (id, t0) => faPeer(id, d.n, t0, d.seed, d.extraDelayMs, d.shared),
        oracle: (ctx) => faOracle(ctx, d.shared),
        // Input values never 0: a zero at the leaver's port at the end is the neutral input of the rule.
        maxHold: 8,
        mask: 0x7f,
        setBits: 1,
      });
      if (!d.shared) expect(live[0]!.runner.log.at(-1)!.inputs[victim]).toBe(0);
    },
  );
});

/**
 * Frame-advance's honest oracle on the star: each peer's events as it sends them (checked: a
 * frame starting after the input was made, from this client, for its port, with the GENERATED
 * value in force then) and the host's LEAVE (`A + 1`, port). Frame f: the leaver's port zeroed
 * first thing in frame `A + 1`, then f's events in (key, client, port, input) order, the leaver's
 * events after A left out.
 */
function faOracle(ctx: OracleContext<FrameAdvancePeer>, shared: boolean): () => (frame: number) => Uint8Array {
  const { hub, net, t0, scripts, victim, violations } = ctx;
  const n = hub.peers.length;
  const events: { frame: number; key: number; client: number; port: number; value: Uint8Array }[] = [];
  let from = Infinity;
  let leftPort = -1;
  for (const [i, p] of hub.peers.entries()) {
    const to = i === 0 ? (victim === 1 ? 2 : 1) : 0;
    tapSends(hub.relay(i, to), (channel, data) => {
      if (channel !== 'sched') return;
      if (i === 0 && data[0] === 0x14 && ((data[1]! << 8) | data[2]!) === victim) {
        from = new DataView(data.buffer, data.byteOffset).getUint32(3);
        leftPort = data[7] === 255 ? -1 : data[7]!;
        return;
      }
      if (data[0] !== 1) return;
      const m = decodeFaMessage(data, 1);
      if (m.type !== 'event') return;
      const e = m.event;
      const now = net.now();
      const value = scriptValue(scripts[i]!, inForce(scripts[i]!, now), 1);
      if (t0 + e.frame * F <= now || e.client !== i || e.port !== (shared ? 0 : i) || e.input[0] !== value[0])
        violations.push(`${p.name}: event for frame ${e.frame} made at ${now}`);
      events.push({ frame: e.frame, key: e.key, client: e.client, port: e.port, value });
    });
  }
  return () => {
    if (from === Infinity) violations.push('the host sent no LEAVE');
    const kept = events
      .filter((e) => e.client !== victim || e.frame < from)
      .sort(
        (a, b) =>
          a.frame - b.frame || a.key - b.key || a.client - b.client || a.port - b.port || a.value[0]! - b.value[0]!,
      );
    const current = new Uint8Array(n);
    let at = 0;
    return (f) => {
      if (f === from && leftPort >= 0) current[leftPort] = 0;
      while (at < kept.length && kept[at]!.frame <= f) {
        const e = kept[at++]!;
        current[e.port] = e.value[0]!;
      }
      return current.slice();
    };
  };
}

const fresh3 = () => new TestCore({ players: 3, inputBytes: 1 });

/** Three frame-advance peers driven by hand (see {@link ManualNet}); peer 0 is the host. */
function manual(): ManualNet<FrameAdvancePeer> {
  const peers = [0, 1, 2].map((i) => faPeer(i, 3, 1000, 7));
  return new ManualNet(peers, fresh3, 1, F, 1000);
}

/** Inputs 1..0x7f (never 0, never a marker of the tests). */
const inputOf = (peer: number, k: number) => 1 + (((k * 7 + peer * 31) >> 2) % 0x7f);

/** The largest advance frame `to` got from `from` (-1 if none). */
function lastAdvance(m: ManualNet<FrameAdvancePeer>, from: number, to: number): number {
  let a = -1;
  for (const x of m.delivered) {
    if (x.from !== from || x.to !== to || x.channel !== 'sched') continue;
    const d = decodeFaMessage(x.data, 1);
    if (d.type === 'advance') a = Math.max(a, d.frame);
  }
  return a;
}

function leave(leaver: number, from: number, port: number, extra = 0): Uint8Array {
  const b = new Uint8Array(8 + extra);
  const dv = new DataView(b.buffer);
  b[0] = 0x14;
  dv.setUint16(1, leaver);
  dv.setUint32(3, from);
  b[7] = port;
  return b;
}

describe('frame-advance LEAVE', () => {
  it('the host sends LEAVE(leaver, last advance + 1, port) on sched; the port reads zeros from then on', () => {
    const m = manual();
    m.run(30, inputOf);
    m.kill(2, inputOf);
    m.step(inputOf);
    const a = lastAdvance(m, 2, 0);
    expect(a).toBeGreaterThan(10);
    m.peers[0]!.removePeer(2, m.now);
    const out = m.peers[0]!.outbox.filter((e) => e.channel === 'sched' && e.data[0] === 0x14);
    // Every member and the leaver itself (issue 13: a removed peer learns it).
    expect(out.map((e) => e.to)).toEqual([1, 2]);
    expect([...out[0]!.data]).toEqual([...leave(2, a + 1, 2)]);
    // Removing again, or an unknown id, sends nothing more.
    m.expectRemoveOnce(2);
    m.run(60, inputOf);
    for (const i of [0, 1]) {
      const log = m.logs[i]!;
      expect(log.length).toBeGreaterThan(a + 40);
      // Peer 2's input was never 0 before its cut; from frame a + 1 on it is.
      expect(log[a]![2]).not.toBe(0);
      for (let f = a + 1; f < log.length; f++) expect(log[f]![2], `peer ${i} frame ${f}`).toBe(0);
    }
    expect(m.peers[0]!.peerIds).toEqual([1]);
    expect(m.peers[1]!.peerIds).toEqual([0]);
    m.expectAgreement([0, 1], fresh3);
  });

  it('only the host removes peers', () => {
    const m = manual();
    m.step(inputOf);
    m.expectOnlyHostRemoves();
  });

  it('drops a LEAVE from a non-host, for itself, for an unknown peer, or of a wrong length', () => {
    const m = manual();
    m.run(5, inputOf);
    // The port is the leaver's (peer 7, unknown, gets port 2).
    m.expectDropsBadLeaves('sched', (leaver, extra) => leave(leaver, 0, Math.min(leaver, 2), extra));
    // Peer 2 is still waited for: cut off without a LEAVE, peer 1 stalls.
    m.expectStallWithoutLeave(2, 1, inputOf);
  });

  it('a LEAVE that overtakes the leaver’s last events and advances: the member waits for them, then agrees', () => {
    const m = manual();
    m.run(40, inputOf);
    m.hold = (x) => x.from === 2 && x.to === 1;
    m.run(6, inputOf);
    m.kill(2, inputOf);
    expect(m.held.length).toBeGreaterThan(0);
    const a = lastAdvance(m, 2, 0);
    m.peers[0]!.removePeer(2, m.now);
    m.collect();
    m.step(inputOf);
    m.step(inputOf);
    // Peer 1 has the LEAVE, not yet peer 2's advance `a`: it cannot have run frame `a`.
    expect(m.logs[1]!.length).toBeLessThanOrEqual(a);
    m.release();
    m.run(60, inputOf);
    expect(m.logs[1]!.length).toBeGreaterThan(a + 40);
    m.expectAgreement([0, 1], fresh3);
  });

  for (const when of ['before', 'after'] as const) {
    it(`events beyond the cut are discarded when they reach a member ${when} the LEAVE`, () => {
      const m = manual();
      m.run(40, inputOf);
      // Peer 2's last advances are lost (it died before they left); its events for the frames
      // after its last advance reach both (peer 1 at once, or only after the LEAVE).
      m.drop = (x) => x.from === 2 && decodeFaMessage(x.data, 1).type === 'advance';
      if (when === 'after') m.hold = (x) => x.from === 2 && x.to === 1;
      m.run(6, (p, k) => (p === 2 ? 0xfe + (k & 1) : inputOf(p, k)));
      m.kill(2, inputOf);
      const beyond = m.delivered.concat(m.held).filter((x) => {
        if (x.from !== 2 || x.to !== 1 || x.channel !== 'sched') return false;
        const d = decodeFaMessage(x.data, 1);
        return d.type === 'event' && d.event.input[0]! >= 0xfe;
      });
      expect(beyond.length).toBeGreaterThan(0);
      m.peers[0]!.removePeer(2, m.now);
      // The LEAVE reaches peer 1 first, right before the held messages (nothing runs in between).
      const host = m.peers[0]!;
      const leaveAt = host.outbox.findIndex((e) => e.to === 1 && e.data[0] === 0x14);
      const [msg] = host.outbox.splice(leaveAt, 1);
      m.peers[1]!.receive(0, 'sched', msg!.data, m.now);
      const ran = m.logs[1]!.length;
      m.release();
      m.collect();
      m.run(60, inputOf);
      expect(m.peers[1]!.dropped).toBe(0);
      expect(m.logs[1]!.length).toBeGreaterThan(ran + 40);
      // Peer 2's last inputs never counted anywhere.
      for (const i of [0, 1]) expect(m.logs[i]!.some((f) => f[2]! >= 0xfe)).toBe(false);
      m.expectAgreement([0, 1], fresh3);
    });
  }

  test.prop([fc.integer({ min: 0, max: 2 }), fc.uint8Array({ maxLength: 40 }), fc.boolean()], { numRuns: 200 })(
    'any bytes after the LEAVE type byte: applied or dropped, never thrown, and play goes on',
    (from, rest, valid) => {
      const data = Uint8Array.of(0x14, ...(valid ? [0, 2] : []), ...rest);
      manual().expectSurvives(from, 'sched', data, inputOf, fresh3);
    },
  );
});

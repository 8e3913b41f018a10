import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { HostRole } from '../src/host-role.js';
import { PeerSet } from '../src/peer-set.js';
import { repeatLastInput } from '../src/predictor.js';
import { Quorum } from '../src/quorum.js';
import { Remote } from '../src/remote.js';
import type { SpectatorServer } from '../src/spectator-server.js';
import { Timeline } from '../src/timeline.js';

/**
 * The quorum of peer `local` among `players` slots (slot 0 the host), hearing the slots in `heard`
 * usefully; `removed` slots are no longer members.
 */
function quorumOf(players: number, local: number, heard: readonly number[], removed: readonly number[] = []) {
  const timeline = new Timeline(players, 1, 8, repeatLastInput);
  for (const p of removed) timeline.disconnect(p, 0);
  const peers = new PeerSet(() => {}, 0);
  const remotes: Remote[] = [];
  for (let p = 0; p < players; p++) {
    if (p === local) continue;
    const r = new Remote(`p${p}`, p, 0);
    r.interrupted = !heard.includes(p);
    peers.add(r);
    remotes.push(r);
  }
  const role = new HostRole(local === 0, 'p0', peers, undefined as unknown as SpectatorServer);
  return { quorum: new Quorum(timeline, peers, role, local), remotes };
}

describe('the quorum rule (README, "Finality and partitions")', () => {
  it('2 players: the host alone has quorum, the client alone does not', () => {
    expect(quorumOf(2, 0, []).quorum.has()).toBe(true);
    expect(quorumOf(2, 1, []).quorum.has()).toBe(false);
    expect(quorumOf(2, 1, [0]).quorum.has()).toBe(true);
  });

  it('3 players: any two have quorum, one alone never does', () => {
    expect(quorumOf(3, 0, []).quorum.has()).toBe(false);
    expect(quorumOf(3, 2, []).quorum.has()).toBe(false);
    expect(quorumOf(3, 1, [2]).quorum.has()).toBe(true);
    expect(quorumOf(3, 0, [2]).quorum.has()).toBe(true);
  });

  it('4 players: the host and one more have quorum, the other two do not', () => {
    expect(quorumOf(4, 0, [3]).quorum.has()).toBe(true);
    expect(quorumOf(4, 3, [0]).quorum.has()).toBe(true);
    expect(quorumOf(4, 2, [3]).quorum.has()).toBe(false);
    expect(quorumOf(4, 2, [1, 3]).quorum.has()).toBe(true);
  });

  it('removed players are not members: the membership shrinks with each agreed leave', () => {
    expect(quorumOf(3, 1, [], [2]).quorum.has()).toBe(false);
    expect(quorumOf(3, 0, [], [2]).quorum.has()).toBe(true);
  });

  it('a takeover needs a strict majority without the old host; the successor is the lowest connected member', () => {
    const a = quorumOf(3, 2, [1]);
    expect(a.quorum.successor(a.remotes[0]!)).toBe(a.remotes[1]);
    const b = quorumOf(3, 1, [2]);
    expect(b.quorum.successor(b.remotes[0]!)).toBe('self');
    const c = quorumOf(4, 2, [3]);
    expect(c.quorum.successor(c.remotes[0]!)).toBe('none');
    const d = quorumOf(2, 1, []);
    expect(d.quorum.successor(d.remotes[0]!)).toBe('none');
  });

  test.prop([fc.integer({ min: 2, max: 16 }), fc.nat(), fc.nat()])(
    'two disjoint groups never both have quorum (so two sides never both decide)',
    (players, mask, localSeed) => {
      const inA = (p: number) => ((mask >> p) & 1) === 1;
      const a = Array.from({ length: players }, (_, p) => p).filter(inA);
      const b = Array.from({ length: players }, (_, p) => p).filter((p) => !inA(p));
      const has = (group: number[]) =>
        group.length > 0 && quorumOf(players, group[localSeed % group.length]!, group).quorum.has();
      expect(has(a) && has(b)).toBe(false);
    },
  );
});

describe('the quorum rule with players entering mid-game (issue 15)', () => {
  it('a joiner that has not caught up is no successor, for the others and for itself', () => {
    // 4 players; the host (p0) is lost; p1 entered mid-game and has not reported holding its entry yet.
    const { quorum, remotes } = quorumOf(4, 2, [1, 3]);
    remotes[0]!.interrupted = true; // the old host
    remotes[1]!.caughtUp = false; // p1
    expect(quorum.successor(remotes[0]!)).toBe('self');
    remotes[1]!.caughtUp = true;
    expect(quorum.successor(remotes[0]!)).toBe(remotes[1]);
    // On p1 itself while it still lacks inputs before its entry: it follows p2 instead of taking over.
    const own = quorumOf(4, 1, [2, 3]);
    own.remotes[0]!.interrupted = true;
    own.quorum.selfReady = () => false;
    expect(own.quorum.successor(own.remotes[0]!)).toBe(own.remotes[1]);
  });

  it('admission: the host keeps quorum even if every joiner not caught up never delivers', () => {
    // Host alone of 2 slots (the other left): one joiner may come (host + joiner: half with the host).
    const alone = quorumOf(3, 0, [], [1, 2]);
    expect(alone.quorum.has(false, undefined, 1)).toBe(true);
    // A second one while the first has not caught up: the host alone of 3 would lack quorum.
    const timeline = quorumOf(3, 0, [1], [2]);
    timeline.remotes[0]!.caughtUp = false;
    expect(timeline.quorum.has(false, undefined, 1)).toBe(false);
    timeline.remotes[0]!.caughtUp = true;
    expect(timeline.quorum.has(false, undefined, 1)).toBe(true);
  });
});

import type { NetplayClient, NetplayHost } from '@netplay/session';
import { hash64 } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeWebRtcSessions,
  generated,
  joinWebRtcHost,
  play,
  rollbackFinals,
  SEED,
  startWebRtcHost,
  until,
} from './webrtc-session-env.js';

/*
 * @netplay/session, unchanged, over real node-datachannel connections introduced by a real
 * signaling server: the host listens in a room (`listenWebRtcNode`), every client connects to the
 * peer named "host" (a star: the session's relay carries client-to-client traffic). Real time
 * (the system clock), 60 Hz ticks from a timer. The set-up is webrtc-session-env.ts.
 */

afterEach(closeWebRtcSessions);

/**
 * Offline replay of the generated inputs on a fresh core: hash64 of the state at the start of
 * every frame up to `last`, by frame.
 */
function replayGenerated(players: number, last: number): Map<number, bigint> {
  const core = new TestCore({ players, seed: SEED });
  const buf = new Uint8Array(core.stateBytes);
  const out = new Map<number, bigint>();
  for (let f = 0; f <= last; f++) {
    core.saveInto(buf);
    out.set(f, hash64(buf));
    for (let p = 0; p < players; p++) core.setInput(p, generated(p, f));
    core.advance();
  }
  return out;
}

/** Checks every recorded final against `expected`; returns how many frames were compared. */
function expectFinals(name: string, got: Map<number, bigint>, expected: Map<number, bigint>): number {
  let compared = 0;
  for (const [f, h] of got) {
    const e = expected.get(f);
    if (e === undefined) continue;
    compared++;
    expect(h, `${name}: frame ${f}`).toBe(e);
  }
  return compared;
}

describe('@netplay/session over transport-webrtc (node-datachannel, real signaling)', () => {
  it('rollback P2P, 3 players and a spectator: every final frame is the offline replay of the generated inputs', async () => {
    const players = 3;
    const env = await startWebRtcHost(players, { mode: 'rollback' });
    const a = joinWebRtcHost(env, 'alice', players);
    const b = joinWebRtcHost(env, 'bob', players);
    const watcher = joinWebRtcHost(env, 'watcher', players, { spectate: true });
    await until(() => [a, b, watcher].every((c) => c.state !== 'handshaking'), 15_000, 'the handshakes');
    expect([a, b, watcher].map((c) => `${c.state}${c.error ? ` ${c.error.code}: ${c.error.message}` : ''}`)).toEqual([
      'playing',
      'playing',
      'spectating',
    ]);
    expect(new Set([a.info?.slot, b.info?.slot])).toEqual(new Set([1, 2]));
    // The connections are WebRTC ones, each at its selected candidate's loopback address and port.
    const addresses = env.host.peerList().map((p) => p.remoteAddress);
    expect(addresses).toHaveLength(3);
    for (const a of addresses) expect(a).toMatch(/^127\.0\.0\.1:\d+$/);

    const peers = [env.host, a, b, watcher] as const;
    const finals = peers.map(rollbackFinals);
    const input = (p: NetplayHost | NetplayClient): Uint8Array | undefined => {
      const s = p.rollback;
      return s === undefined ? undefined : generated(s.localPlayer, s.currentFrame);
    };
    const FRAMES = 360;
    await play(
      () => {
        env.host.tick(input(env.host) ?? new Uint8Array(2));
        for (const c of [a, b, watcher]) c.tick(input(c));
        for (const f of finals) f.record();
      },
      () => finals.every((f) => f.hashes.has(FRAMES)),
      30_000,
    );
    for (const c of [a, b, watcher]) expect(c.state).not.toBe('closed');
    const last = Math.max(...finals.flatMap((f) => [...f.hashes.keys()]));
    const replay = replayGenerated(players, last);
    const names = ['host', 'alice', 'bob', 'watcher'];
    finals.forEach((f, i) => {
      const compared = expectFinals(names[i]!, f.hashes, replay);
      expect(compared, `${names[i]} frames compared`).toBeGreaterThanOrEqual(FRAMES - 10);
      expect(f.hashes.get(FRAMES), `${names[i]} frame ${FRAMES}`).toBe(replay.get(FRAMES));
    });
    // Rollback happened over the real links (the players predicted and corrected), and the
    // host's transport stats measured the data channels.
    const stats = env.host.peerStats();
    expect(stats.length).toBeGreaterThanOrEqual(2);
  });

  describe.each([
    ['lockstep-cs', 3],
    ['lockstep-p2p', 3],
    ['frame-advance', 3],
  ] as const)('%s with %i players', (mode, players) => {
    it('every peer agrees on every frame final on both, and each is the offline replay of its inputs', async () => {
      const env = await startWebRtcHost(players, { mode });
      const clients = Array.from({ length: players - 1 }, (_, i) => joinWebRtcHost(env, `p${i + 1}`, players));
      interface Track {
        readonly sums: Map<number, bigint>;
        readonly inputs: Uint8Array[];
        final: number;
      }
      const all = [env.host, ...clients];
      const tracks: Track[] = all.map((peer) => {
        const t: Track = { sums: new Map(), inputs: [], final: -1 };
        (peer as NetplayClient).on('frame', ({ frame, inputs }) => {
          t.sums.set(frame, peer.core.checksum());
          t.inputs[frame] = inputs.slice();
        });
        (peer as NetplayClient).on('final', ({ frame }) => {
          expect(frame, 'final frames only grow').toBeGreaterThan(t.final);
          t.final = frame;
        });
        return t;
      });
      await until(() => clients.every((c) => c.state !== 'handshaking'), 15_000, 'the handshakes');
      for (const c of clients) expect(c.state).toBe('playing');
      expect(clients.map((c) => c.info?.mode)).toEqual(clients.map(() => mode));
      const slots = [0, ...clients.map((c) => c.info?.slot ?? -1)];
      expect(new Set(slots).size).toBe(players);

      const ticks = all.map(() => 0);
      const FINAL = 240;
      await play(
        () => {
          env.host.tick(generated(0, ticks[0]!++));
          clients.forEach((c, i) => {
            c.tick(generated(slots[i + 1]!, ticks[i + 1]!++));
          });
        },
        () => tracks.every((t) => t.final >= FINAL),
        30_000,
      );
      for (const c of clients) expect(c.state).toBe('playing');

      const [host, ...others] = tracks as [Track, ...Track[]];
      for (const [i, t] of others.entries()) {
        // Agreement: every frame final on the host and on this client has one state.
        let compared = 0;
        for (let f = 0; f <= Math.min(host.final, t.final); f++) {
          const x = host.sums.get(f);
          const y = t.sums.get(f);
          if (x === undefined || y === undefined) continue;
          compared++;
          expect(y, `p${i + 1} frame ${f}`).toBe(x);
        }
        // (a lockstep-cs client may join a few frames after the host started on a loaded machine)
        expect(compared, `p${i + 1} frames compared`).toBeGreaterThanOrEqual(FINAL / 2);
      }
      for (const [i, t] of tracks.entries()) {
        // Every port's input came from that port's player (the generator tags it) or is neutral,
        // and replaying the frames' inputs on a fresh core gives the checksum the peer had.
        const first = t.inputs.findIndex((x) => x !== undefined);
        const core = new TestCore({ players, seed: SEED });
        if (first > 0) {
          // lockstep-cs: a client that joined at a later frame starts from the host's power-on
          // state plus the frames before; only the host and the first clients start at 0 here.
          continue;
        }
        let tagged = 0;
        for (let f = 0; f < t.inputs.length; f++) {
          const inputs = t.inputs[f];
          expect(inputs, `peer ${i}: inputs of frame ${f}`).toBeDefined();
          for (let p = 0; p < players; p++) {
            const tag = inputs![p * 2]!;
            expect([0, p + 1], `peer ${i}: frame ${f} port ${p}`).toContain(tag);
            if (tag === p + 1) tagged++;
            core.setInput(p, inputs!.subarray(p * 2, p * 2 + 2));
          }
          core.advance();
          expect(core.checksum(), `peer ${i}: replay of frame ${f}`).toBe(t.sums.get(f));
        }
        // Nearly every input is a real one (neutral only before a player's first tick).
        expect(tagged).toBeGreaterThan(t.inputs.length * players * 0.8);
      }
    });
  });
});

import { hash64 } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import type { NetplayClient, SessionMode } from '../src/index.js';
import {
  CORE_SEED,
  checkPorts,
  compareTracks,
  IB,
  playerInputs,
  RecordingCore,
  replay,
  tagOf,
  track,
} from './control-harness.js';
import { clientFinals, compareFinals, FRAME_MS, hostFinals, setup } from './harness.js';

const MODES: readonly SessionMode[] = ['rollback', 'lockstep-cs', 'lockstep-p2p', 'frame-advance'];
const FRAMES = 2000;
const PORTS = 4; // 2 slots × 2 ports

/** Who drives each of the 4 ports: the host's block is ports 0–1, the client's 2–3. */
function owners(hostLocal: number, clientLocal: number): number[] {
  const o = [0, 0, 0, 0];
  for (let k = 0; k < hostLocal; k++) o[k] = tagOf(0, k);
  for (let k = 0; k < clientLocal; k++) o[2 + k] = tagOf(1, k);
  return o;
}

describe.each(MODES)('%s: a peer with two local players plus one remote peer', (mode) => {
  it.each([
    [2, 1],
    [1, 2],
  ])(
    'host with %i and client with %i local players: 2,000 frames, agreement, every port its own player',
    (hostLocal, clientLocal) => {
      const seed = 4242 + hostLocal;
      const hostCore =
        mode === 'rollback' ? new RecordingCore(PORTS) : new TestCore({ players: PORTS, seed: CORE_SEED });
      const env = setup(
        seed,
        { mode, players: 2, maxLocalPlayers: 2, localPlayers: hostLocal, core: hostCore, inputDelay: 1 },
        { latencyMs: 25, jitterMs: 5, loss: 0.01 },
      );
      const clientCore =
        mode === 'rollback' ? new RecordingCore(PORTS) : new TestCore({ players: PORTS, seed: CORE_SEED });
      const client: NetplayClient = env.join('couch', { core: clientCore, localPlayers: clientLocal });
      const ht = track(env.host);
      const ct = track(client);
      const hf = hostFinals(env.host);
      const cf = clientFinals(client);
      env.net.runUntil(() => client.state !== 'handshaking', 10_000);
      expect(client.state).toBe('playing');
      expect(client.info?.ports).toEqual(clientLocal === 2 ? [2, 3] : [2]);
      expect(env.host.localPlayers).toBe(hostLocal);
      const hi = playerInputs(0, hostLocal);
      const ci = playerInputs(1, clientLocal);
      for (let t = 0; t < FRAMES * 3; t++) {
        env.host.tick(hi(t));
        client.tick(ci(t));
        env.net.advance(FRAME_MS);
        hf.record();
        cf.record();
        if (env.host.frame >= FRAMES && (client.frame ?? 0) >= FRAMES) break;
      }
      for (let i = 0; i < 30; i++) {
        env.host.rollback?.poll();
        client.rollback?.poll();
        env.net.advance(FRAME_MS);
        hf.record();
        cf.record();
      }
      expect(env.host.frame).toBeGreaterThanOrEqual(FRAMES);
      expect(client.frame ?? 0).toBeGreaterThanOrEqual(FRAMES);
      expect(client.state).toBe('playing');
      const who = owners(hostLocal, clientLocal);
      if (mode === 'rollback') {
        const { compared, differing } = compareFinals(hf, cf);
        expect(differing).toBe(0);
        expect(compared).toBeGreaterThan(FRAMES - 100);
        // The inputs each final state was made with: every port its own player's (tags, counters
        // that never go back), and a replay of them on a fresh core gives the peers' final state.
        for (const core of [hostCore, clientCore] as RecordingCore[]) {
          const last = new Map<number, number>();
          const upTo = Math.max(...[...hf.hashes.keys()].filter((f) => cf.hashes.has(f)));
          const fresh = new TestCore({ players: PORTS, seed: CORE_SEED });
          for (let f = 0; f < upTo; f++) {
            const inputs = core.log.get(f);
            expect(inputs, `frame ${f}`).toBeDefined();
            checkPorts(inputs!, who, last, f);
            for (let p = 0; p < PORTS; p++) fresh.setInput(p, inputs!.subarray(p * IB, p * IB + IB));
            fresh.advance();
          }
          const state = new Uint8Array(fresh.stateBytes);
          expect(hash64(state.subarray(0, fresh.saveInto(state)))).toBe(hf.hashes.get(upTo));
          expect([...last.keys()].sort()).toEqual(who.flatMap((tag, p) => (tag === 0 ? [] : [p])));
        }
        return;
      }
      expect(compareTracks(ht, ct, 'host vs client')).toBeGreaterThan(FRAMES - 100);
      for (const t of [ht, ct]) {
        const last = new Map<number, number>();
        for (const [f, inputs] of t.inputs) checkPorts(inputs, who, last, f);
        // Every driven port showed its player's inputs.
        expect([...last.keys()].sort()).toEqual(who.flatMap((tag, p) => (tag === 0 ? [] : [p])));
        const upTo = Math.min(ht.final, ct.final);
        // lockstep-cs: the client enters at the server's next frame (late join); its frames are
        // compared with the host's above, and the host's replay covers every frame from power-on.
        if (t.inputs.has(0)) expect(replay(t, PORTS, upTo)).toBe(t.sums.get(upTo));
        else expect(mode).toBe('lockstep-cs');
      }
    },
  );
});

describe('local players: refusals and API errors', () => {
  it('a client asking more ports than a slot holds is refused with a reason naming both numbers', () => {
    const env = setup(5, { players: 2, maxLocalPlayers: 2, core: new TestCore({ players: 4, seed: CORE_SEED }) });
    const c = env.join('crowd', { core: new TestCore({ players: 4, seed: CORE_SEED }), localPlayers: 3 });
    env.net.runUntil(() => c.state === 'closed', 5000);
    expect(c.error?.code).toBe('bad-argument');
    expect(c.error?.message).toBe('too many local players: you asked for 3, this host takes at most 2 per peer');
  });

  it('a host whose core lacks the ports for every slot block is refused at construction', () => {
    expect(() =>
      setup(5, { players: 3, maxLocalPlayers: 2, core: new TestCore({ players: 4, seed: CORE_SEED }) }),
    ).toThrow(/3 player slots × 2 local players need 6 ports; the core has 4/);
  });

  it('tick with an input of the wrong size is a typed error', () => {
    const env = setup(6, {
      players: 2,
      maxLocalPlayers: 2,
      localPlayers: 2,
      core: new TestCore({ players: 4, seed: CORE_SEED }),
    });
    const c = env.join('bob', { core: new TestCore({ players: 4, seed: CORE_SEED }) });
    env.net.runUntil(() => c.state !== 'handshaking', 5000);
    expect(() => env.host.tick(new Uint8Array(3))).toThrow(/input of 3 bytes: expected 2 \(one port\) or 4/);
  });
});

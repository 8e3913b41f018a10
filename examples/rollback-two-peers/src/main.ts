/**
 * Two peers play PongCore with rollback over the seeded simulated network (40 ± 8 ms one way,
 * 5 % loss), each built with one `rollback()` chain. At the end both must hold the same state at
 * their last common final frame, equal to an offline replay of the inputs this script generated.
 *
 * PongCore, the hand-written JS `Core` this example plays, lives in examples/pong-core
 * (`@netplay-example/pong-core`, a private workspace shared with rollback-udp and spectator).
 */
import assert from 'node:assert/strict';
import { ROLLBACK_CHANNELS, type RollbackGame, rollback } from '@netplay/rollback';
import { SimulatedNetwork } from '@netplay/transport';
import { DOWN, fnv1a64, PongCore, UP } from '@netplay-example/pong-core';

const FRAME_MS = 16;
const TICKS = 600;

/** The input player `p` holds at frame `f`: a new random direction every 8 frames, from a seed. */
function inputOf(p: number, f: number): number {
  let h = Math.imul((f >> 3) + 1, 0x9e3779b1) ^ Math.imul(p + 7, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  return [0, UP, DOWN][(h >>> 0) % 3]!;
}

const net = new SimulatedNetwork({ seed: 42, link: { latencyMs: 40, jitterMs: 8, loss: 0.05 } });
const { client, server } = net.pair('alice', 'bob', { channels: ROLLBACK_CHANNELS });
const common = { players: 2, clock: net.clock, fps: 1000 / FRAME_MS, inputDelay: 1 };
const alice = rollback({ core: new PongCore(), local: 0, ...common })
  .remote(1, client)
  .start();
const bob = rollback({ core: new PongCore(), local: 1, ...common })
  .remote(0, server)
  .start();
const games: Array<[string, RollbackGame, number]> = [
  ['alice', alice, 0],
  ['bob', bob, 1],
];

const pad = new Uint8Array(1);
for (let t = 0; t < TICKS; t++) {
  for (const [, game, player] of games) {
    // The input lands at the frame the session is at plus its input delay.
    pad[0] = inputOf(player, game.currentFrame + game.session.inputDelay);
    game.tick(pad);
  }
  net.advance(FRAME_MS);
}

// The last frame final on both peers: both must hold the same state, the offline replay's.
const frame = Math.min(alice.confirmedFrame, bob.confirmedFrame);
const a = alice.driver.stateOf(frame);
const b = bob.driver.stateOf(frame);
assert.ok(a && b, `both peers still store frame ${frame}`);
const offline = new PongCore();
for (let f = 0; f < frame; f++) {
  for (let p = 0; p < 2; p++) offline.setInput(p, Uint8Array.of(f < common.inputDelay ? 0 : inputOf(p, f)));
  offline.advance();
}
const hashA = fnv1a64(a);
const hashB = fnv1a64(b);
for (const [name, game] of games) {
  const s = game.stats;
  console.log(
    `${name}: frame ${game.currentFrame}, final ${game.confirmedFrame}, rollbacks ${s.rollbacks} (deepest ${s.maxRollbackDepth}), rtt ${game.peerStats()[0]?.rttMs.toFixed(0)} ms`,
  );
}
console.log(
  `final frame ${frame}: alice ${hashA.toString(16)}, bob ${hashB.toString(16)}, offline ${offline.checksum().toString(16)}`,
);
assert.ok(frame >= 500, `at least 500 of ${TICKS} frames final (got ${frame})`);
assert.equal(hashA, hashB, 'alice and bob agree');
assert.equal(hashA, offline.checksum(), 'and both equal the offline replay of the generated inputs');
console.log('ok: two peers agree with the offline replay');

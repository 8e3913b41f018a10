/**
 * Two players play PongCore with rollback over the simulated network; a third peer watches
 * through the host (RetroArch-style spectating: it loads the host's savestate, then runs only
 * confirmed inputs, never predicting). At the end the spectator's state must equal an offline
 * replay of the players' generated inputs at the frame it reached.
 * PongCore lives in examples/pong-core (`@netplay-example/pong-core`, a private shared workspace).
 */
import assert from 'node:assert/strict';
import { ROLLBACK_CHANNELS, rollback, rollbackSpectator } from '@netplay/rollback';
import { SimulatedNetwork } from '@netplay/transport';
import { DOWN, PongCore, UP } from '@netplay-example/pong-core';

const FRAME_MS = 16;
const net = new SimulatedNetwork({ seed: 5, link: { latencyMs: 25, jitterMs: 5, loss: 0.02 } });
const players = net.pair('guest', 'host', { channels: ROLLBACK_CHANNELS });
const watcher = net.pair('watcher', 'host', { channels: ROLLBACK_CHANNELS });

const common = { players: 2, clock: net.clock, fps: 1000 / FRAME_MS };
const host = rollback({ core: new PongCore(), local: 0, ...common })
  .remote(1, players.server)
  .spectator(watcher.server, 'watcher')
  .start();
const guest = rollback({ core: new PongCore(), local: 1, ...common })
  .remote(0, players.client)
  .start();
const spectator = rollbackSpectator({ core: new PongCore() }).host(watcher.client).start();
host.on('spectator-joined', ({ peer, frame }) => console.log(`host: ${peer} joined at frame ${frame}`));

const inputOf = (p: number, f: number) => [0, UP, DOWN][((f >> 4) + p * 2) % 3]!;
const pad = new Uint8Array(1);
for (let t = 0; t < 500; t++) {
  for (const [game, player] of [
    [host, 0],
    [guest, 1],
  ] as const) {
    pad[0] = inputOf(player, game.currentFrame);
    game.tick(pad);
  }
  spectator.tick();
  net.advance(FRAME_MS);
}

const frame = spectator.currentFrame ?? -1;
const offline = new PongCore();
for (let f = 0; f < frame; f++) {
  for (let p = 0; p < 2; p++) offline.setInput(p, Uint8Array.of(inputOf(p, f)));
  offline.advance();
}
console.log(
  `host at frame ${host.currentFrame} (final ${host.confirmedFrame}); spectator joined at ${spectator.session.joinFrame}, now at ${frame}, ${spectator.session.framesBehind} behind`,
);
console.log(`spectator ${spectator.core.checksum().toString(16)}, offline replay ${offline.checksum().toString(16)}`);
assert.ok(frame >= 400, `the spectator followed the game (frame ${frame})`);
assert.equal(spectator.core.frame, frame);
assert.equal(spectator.core.checksum(), offline.checksum(), 'the spectator saw exactly the players’ game');
console.log('ok: the spectator agrees with the offline replay');

/**
 * `npm run demo`: netplay working end to end on embedded defaults.
 *
 * Two bots play Space Racer (CHIP-8, CC0) on the wasm core with rollback netplay over a seeded
 * simulated network (40 ms ± 10 ms one way, 2 % loss), and a spectator watches the host. The game
 * and every peer's stats are drawn live; at the end the demo checks that every peer and the
 * spectator hold the same state hash at the last frame they all have as final, and exits non-zero
 * if they do not.
 *
 * Options: --seconds N (simulated seconds, default 20), --seed N, --latency MS, --jitter MS,
 * --loss FRACTION, --fast (do not pace to real time). Output that is not a terminal is never paced
 * and shows a few snapshots instead of an animation.
 *
 * The `netplay demo` command of the apps (UDP through an impairment relay, other schedulers,
 * interactive play) supersedes this script when it lands.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Chip8Core, framebufferToText, PadButton } from '@netplay/core-wasm';
import { crc32 } from '@netplay/protocol';
import { ConnectionSet, CoreDriver, P2PSession, ROLLBACK_CHANNELS, SpectatorSession } from '@netplay/rollback';
import { Prng, SimulatedNetwork } from '@netplay/transport';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    seed: { type: 'string', default: '2024' },
    latency: { type: 'string', default: '40' },
    jitter: { type: 'string', default: '10' },
    loss: { type: 'string', default: '0.02' },
    fast: { type: 'boolean', default: false },
  },
});
const num = (name: string, v: string | undefined, min: number, max: number): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) {
    console.error(`demo: --${name} must be a number in [${min}, ${max}], got "${v}"`);
    process.exit(2);
  }
  return n;
};
const seconds = num('seconds', values.seconds, 1, 3600);
const seed = num('seed', values.seed, 0, 2 ** 31);
const latencyMs = num('latency', values.latency, 0, 1000);
const jitterMs = num('jitter', values.jitter, 0, 1000);
const loss = num('loss', values.loss, 0, 0.5);

/** Virtual ms per frame: 62.5 fps keeps the simulated clock on whole milliseconds. */
const FRAME_MS = 16;
const frames = Math.round((seconds * 1000) / FRAME_MS);
const live = process.stdout.isTTY === true;
const paced = live && !values.fast;

const rom = new Uint8Array(readFileSync(new URL('./assets/spaceracer.ch8', import.meta.url)));
const makeCore = () => Chip8Core.createSync(rom, { ports: 2 });

const net = new SimulatedNetwork({
  seed,
  link: { latencyMs: Math.max(0, latencyMs - jitterMs), jitterMs: 2 * jitterMs, loss },
});

interface Peer {
  readonly name: string;
  readonly player: number;
  readonly core: Chip8Core;
  readonly session: P2PSession;
  readonly driver: CoreDriver;
  readonly conns: ConnectionSet;
  readonly bot: Prng;
  /** CRC-32 of the state of each frame once it is final (every input known and used). */
  readonly finals: Map<number, number>;
  checked: number;
  wait: number;
  pad: number;
  holdFor: number;
}

const names = ['host', 'guest'];
const peers: Peer[] = names.map((name, player) => {
  const core = makeCore();
  const conns = new ConnectionSet();
  let driver: CoreDriver | undefined;
  const session = new P2PSession({
    players: 2,
    inputBytes: core.inputBytes,
    localPlayer: player,
    remotes: names.flatMap((peer, p) => (p === player ? [] : [{ peer, player: p }])),
    isHost: player === 0,
    hostPeer: 'host',
    clock: net.clock,
    send: conns.send,
    fps: 1000 / FRAME_MS,
    stateSource: (f) => driver?.stateOf(f),
  });
  driver = new CoreDriver(core, session.ringFrames);
  const peer: Peer = {
    name,
    player,
    core,
    session,
    driver,
    conns,
    bot: new Prng(seed + 17 * (player + 1)),
    finals: new Map(),
    checked: -1,
    wait: 0,
    pad: 0,
    holdFor: 0,
  };
  session.on('wait-recommended', ({ frames: n }) => {
    peer.wait = n;
  });
  session.on('desync-detected', ({ frame }) => console.log(`[${name}] desync detected at frame ${frame}`));
  return peer;
});
{
  const { client, server } = net.pair('guest', 'host', { channels: ROLLBACK_CHANNELS });
  peers[1]!.conns.bind('host', client, peers[1]!.session);
  peers[0]!.conns.bind('guest', server, peers[0]!.session);
}

// The spectator follows the host only and simulates confirmed inputs.
const spectator = (() => {
  const conns = new ConnectionSet();
  const session = new SpectatorSession({ hostPeer: 'host', send: conns.send });
  const core = makeCore();
  const driver = new CoreDriver(core, session.ringFrames);
  const { client, server } = net.pair('spectator', 'host', { channels: ROLLBACK_CHANNELS });
  conns.bind('host', client, session);
  peers[0]!.conns.bind('spectator', server, peers[0]!.session);
  return { session, driver, finals: new Map<number, number>(), checked: -1 };
})();

/** A bot mostly races upwards, sometimes backs off or idles, changing its mind every few frames. */
function botInput(peer: Peer): number {
  if (peer.holdFor-- <= 0) {
    const r = peer.bot.nextFloat();
    peer.pad = r < 0.7 ? 1 << PadButton.Up : r < 0.85 ? 1 << PadButton.Down : 0;
    peer.holdFor = peer.bot.int(4, 44);
  }
  return peer.pad;
}

const input = new Uint8Array(2);
function recordFinals(peer: Peer): void {
  const s = peer.session;
  const upTo = Math.min(s.confirmedFrame, s.currentFrame);
  for (let f = peer.checked + 1; f <= upTo; f++) {
    const st = peer.driver.stateOf(f);
    if (st !== undefined) peer.finals.set(f, crc32(st));
    peer.checked = f;
  }
}

function tick(botsPlay: boolean): void {
  for (const peer of peers) {
    const s = peer.session;
    if (peer.wait > 0) {
      peer.wait--;
      s.poll();
    } else {
      const pad = botsPlay ? botInput(peer) : 0;
      input[0] = pad & 0xff;
      input[1] = pad >>> 8;
      s.addLocalInput(input);
      peer.driver.run(s.advanceFrame(), s);
    }
    recordFinals(peer);
  }
  const sp = spectator;
  sp.driver.run(sp.session.advanceFrame(), sp.session);
  const cur = sp.session.currentFrame;
  if (cur !== undefined && cur > sp.checked) {
    const st = sp.driver.stateOf(cur);
    if (st !== undefined) sp.finals.set(cur, crc32(st));
    sp.checked = cur;
  }
  net.advance(FRAME_MS);
}

function statsLines(): string[] {
  const lines = peers.map((p) => {
    const s = p.session;
    const remote = s.peerStats().find((r) => r.peer !== 'spectator');
    const kbs = s
      .peerStats()
      .reduce((sum, r) => sum + r.sendBytesPerSec, 0)
      .toFixed(0);
    return (
      `${p.name.padEnd(9)} P${p.player + 1} frame ${String(s.currentFrame).padStart(5)}  final ${String(s.confirmedFrame).padStart(5)}` +
      `  ping ${(remote?.rttMs ?? 0).toFixed(0).padStart(3)} ms  ahead ${s.framesAhead.toFixed(1).padStart(5)}` +
      `  rollbacks ${String(s.stats.rollbacks).padStart(5)} (max depth ${s.stats.maxRollbackDepth})  sent ${kbs.padStart(5)} B/s`
    );
  });
  lines.push(
    `spectator    frame ${String(spectator.session.currentFrame ?? '-').padStart(5)}  (confirmed inputs only)`,
  );
  return lines;
}

function draw(frame: number): void {
  const screen = framebufferToText(peers[0]!.core.framebuffer());
  const header = `netplay demo: Space Racer, rollback, 2 players + 1 spectator, ${latencyMs} ± ${jitterMs} ms, ${(loss * 100).toFixed(1)} % loss   t=${((frame * FRAME_MS) / 1000).toFixed(1)} s`;
  const text = [header, "host's screen:", screen, ...statsLines()].join('\n');
  process.stdout.write(live ? `\x1b[H\x1b[J${text}\n` : `${text}\n\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  console.log(
    `Two bots race in Space Racer over rollback netplay on a simulated network (seed ${seed}); a spectator watches.`,
  );
  const start = process.hrtime.bigint();
  for (let f = 0; f < frames; f++) {
    tick(true);
    if (live ? f % 2 === 0 : f % Math.round(5000 / FRAME_MS) === 0) draw(f);
    if (paced) {
      const due = Number(start / 1_000_000n) + (f + 1) * FRAME_MS;
      const wait = due - Number(process.hrtime.bigint() / 1_000_000n);
      if (wait > 0) await sleep(wait);
    }
  }
  // Let the last inputs arrive so every peer's final frame catches up with the others.
  for (let f = 0; f < 120; f++) tick(false);
  draw(frames);

  const maps = [
    ...peers.map((p) => ({ name: p.name, finals: p.finals })),
    { name: 'spectator', finals: spectator.finals },
  ];
  const common = Math.min(...maps.map((m) => Math.max(-1, ...m.finals.keys())));
  const hashes = maps.map((m) => ({ name: m.name, crc: m.finals.get(common) }));
  console.log(`\nState hash (CRC-32) at frame ${common}, the last frame final on every peer:`);
  for (const h of hashes)
    console.log(`  ${h.name.padEnd(9)} ${h.crc === undefined ? 'missing' : h.crc.toString(16).padStart(8, '0')}`);
  // Also compare every earlier frame that two or more peers both recorded.
  let compared = 0;
  let differing = 0;
  for (const [f, crc] of peers[0]!.finals) {
    for (const m of maps.slice(1)) {
      const other = m.finals.get(f);
      if (other === undefined) continue;
      compared++;
      if (other !== crc) differing++;
    }
  }
  const agree = common >= 0 && hashes.every((h) => h.crc !== undefined && h.crc === hashes[0]!.crc) && differing === 0;
  console.log(
    `${compared} earlier final states compared with the host's: ${differing} differ. Rollbacks: ${peers
      .map((p) => `${p.name} ${p.session.stats.rollbacks}`)
      .join(', ')}.`,
  );
  console.log(agree ? 'OK: all peers agree.' : 'FAIL: the peers do not agree.');
  process.exitCode = agree ? 0 : 1;
}

await main();

// Runs in an empty project with the packed tarballs installed (scripts/pack-test.mjs copies it there,
// type-checks it with strict TypeScript against the tarballs' .d.ts and runs the emitted JavaScript).
// Two rollback peers over the simulated network (40 ms, jitter, 5 % loss) play 600 frames of the
// state package's ExampleGame; every frame that becomes final on a peer must equal an offline
// replay of the inputs this program generated.
import { crc32 } from '@netplay/protocol';
import { ConnectionSet, CoreDriver, P2PSession, ROLLBACK_CHANNELS } from '@netplay/rollback';
import { ExampleGame } from '@netplay/state/testing';
import { type Connection, SimulatedNetwork } from '@netplay/transport';

const FRAME_MS = 16;
const TICKS = 600;
const inputOf = (player: number, frame: number): number => ((frame * 7 + player * 13) >> 3) & 3;

interface Peer {
  readonly player: number;
  readonly session: P2PSession;
  readonly driver: CoreDriver;
  wait: number;
  checked: number;
  readonly finals: Map<number, number>;
}

const net = new SimulatedNetwork({ seed: 2026, link: { latencyMs: 40, jitterMs: 10, loss: 0.05 } });
const { client, server } = net.pair('p1', 'p0', { channels: ROLLBACK_CHANNELS });

function peer(player: number, conn: Connection): Peer {
  const core = new ExampleGame();
  const other = `p${1 - player}`;
  const conns = new ConnectionSet();
  let driver: CoreDriver | undefined;
  const session = new P2PSession({
    players: 2,
    inputBytes: core.inputBytes,
    localPlayer: player,
    remotes: [{ peer: other, player: 1 - player }],
    isHost: player === 0,
    hostPeer: 'p0',
    clock: net.clock,
    send: conns.send,
    fps: 1000 / FRAME_MS,
    stateSource: (f) => driver?.stateOf(f),
  });
  driver = new CoreDriver(core, session.ringFrames);
  conns.bind(other, conn, session);
  const p: Peer = { player, session, driver, wait: 0, checked: 0, finals: new Map() };
  session.on('wait-recommended', ({ frames }) => {
    p.wait = frames;
  });
  return p;
}

const peers = [peer(0, server), peer(1, client)];
const pad = new Uint8Array(1);
let missing = 0;
for (let tick = 0; tick < TICKS; tick++) {
  for (const p of peers) {
    const s = p.session;
    if (p.wait > 0) {
      p.wait--;
      s.poll();
    } else {
      pad[0] = inputOf(p.player, s.currentFrame + s.inputDelay);
      s.addLocalInput(pad);
      p.driver.run(s.advanceFrame(), s);
    }
    for (let f = p.checked + 1; f <= Math.min(s.confirmedFrame, s.currentFrame); f++) {
      const state = p.driver.stateOf(f);
      if (state === undefined) missing++;
      else p.finals.set(f, crc32(state));
      p.checked = f;
    }
  }
  net.advance(FRAME_MS);
}

// The offline replay: the same inputs, no network.
const offline = new ExampleGame();
const snapshot = new Uint8Array(offline.stateBytes);
const replay: number[] = [];
const last = Math.max(...peers.map((p) => p.checked));
for (let f = 0; f <= last; f++) {
  replay.push(crc32(snapshot.subarray(0, offline.saveInto(snapshot))));
  for (let player = 0; player < 2; player++) offline.setInput(player, new Uint8Array([inputOf(player, f)]));
  offline.advance();
}

let compared = 0;
let mismatches = 0;
for (const p of peers) {
  for (const [f, crc] of p.finals) {
    compared++;
    if (crc !== replay[f]) mismatches++;
  }
}
const frames = peers.map((p) => p.checked);
console.log(`final frames: ${frames.join(' / ')}; compared ${compared}, mismatches ${mismatches}, missing ${missing}`);
if (mismatches > 0 || Math.min(...frames) < 300) {
  console.error('FAIL: the peers disagree with the offline replay or made too little progress');
  process.exit(1);
}
console.log('OK two-peer rollback agrees with the offline replay');

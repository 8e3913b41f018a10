/**
 * What it costs to bring a player back into a running lockstep-cs game (issue 15): a player is
 * killed, reconnects with the same nick from the same address and takes its slot back. Measured
 * on the simulated network (20 ms one way, no loss) with the real host and client: the bytes the
 * rejoiner receives until its first frame runs, split into the session's SYNC (which carries the
 * power-on state, the delta's base), the state itself (the server's page delta against power-on,
 * deflated) and the game's other messages, each as a ratio to the full savestate of that frame
 * (the baseline: what shipping the state whole, as rollback's spectator SYNC does, would cost);
 * and the time from connecting to the first frame, as a ratio to the round-trip time. Cores:
 * CHIP-8 (Space Racer ROM image from @netplay/core-wasm's tests is not needed: a ROM of the
 * core's test pattern) and a 16 MiB synthetic state whose game writes 1 % of its 4 KiB pages.
 */
import { BenchSuite } from '@netplay/bench-kit';
import { Chip8Core } from '@netplay/core-wasm';
import { type Core, hash64 } from '@netplay/state';
import { SimulatedNetwork } from '@netplay/transport';
import {
  type ContentInfo,
  NetplayClient,
  NetplayHost,
  REPLACE_AFTER_SILENCE_MS,
  SESSION_CHANNELS,
  type SessionMode,
} from '../src/index.js';
import { decodeRollbackEntry, ROLLBACK_ENTRY_TYPE } from '../src/rollback-entry.js';

const CONTENT: ContentInfo = { coreId: 'bench', coreVersion: '1.0.0', contentHash: '00112233aabbccdd' };
const FRAME_MS = 1000 / 60;
const LATENCY_MS = 20;
const MiB = 1 << 20;
const PAGE = 4096;

/** A 16 MiB state (zero at power-on, like RAM); each frame rewrites a fixed 1 % of its pages with pseudo-random bytes. */
class SyntheticCore implements Core {
  readonly ports = 2;
  readonly inputBytes = 2;
  readonly stateBytes = 16 * MiB;
  private readonly state = new Uint8Array(16 * MiB);
  private readonly view = new DataView(this.state.buffer);
  private readonly input = new Uint8Array(4);
  private readonly pages: number[] = [];
  constructor() {
    let s = 12345;
    const n = this.stateBytes / PAGE;
    const chosen = new Set<number>();
    while (chosen.size < Math.round(n / 100)) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      chosen.add(1 + ((s >>> 0) % (n - 1)));
    }
    this.pages = [...chosen];
  }
  get frame(): number {
    return this.view.getUint32(0);
  }
  setInput(port: number, input: Uint8Array): void {
    this.input.set(input, port * 2);
  }
  advance(): void {
    const f = this.frame + 1;
    this.view.setUint32(0, f);
    let x = ((this.input[0]! | (this.input[2]! << 8)) ^ Math.imul(f, 0x9e3779b1)) | 1;
    for (const p of this.pages)
      for (let k = 0; k < PAGE; k += 4) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        this.view.setUint32(p * PAGE + k, x >>> 0);
      }
  }
  saveInto(target: Uint8Array): number {
    target.set(this.state);
    return this.stateBytes;
  }
  load(state: Uint8Array): void {
    this.state.set(state);
  }
  checksum(): bigint {
    return hash64(this.state);
  }
  reset(): void {
    this.state.fill(0);
  }
}

function chip8(): Core {
  // Any ROM works: a loop that draws and reads the keypad keeps memory and registers moving.
  const rom = new Uint8Array([
    0x60, 0x00, 0x61, 0x00, 0xa2, 0x0a, 0xd0, 0x15, 0x70, 0x01, 0x12, 0x04, 0xf0, 0x90, 0xf0,
  ]);
  return Chip8Core.createSync(rom);
}

interface Cost {
  readonly full: number;
  readonly sync: number;
  readonly delta: number;
  readonly other: number;
  readonly reenterMs: number;
}

/**
 * A two-player host in `mode` and its client, played for `warmFrames` frames and then killed (both
 * directions cut, the host not told), the host run on until the old connection has been silent
 * long enough to be replaced: where the restarted process comes back.
 */
function killedPlayer(
  mode: SessionMode,
  make: () => Core,
  warmFrames: number,
): { net: SimulatedNetwork; host: NetplayHost; input: Uint8Array } {
  const net = new SimulatedNetwork({ seed: 1, link: { latencyMs: LATENCY_MS, jitterMs: 0, loss: 0 } });
  let salt = 1;
  const host = new NetplayHost({
    core: make(),
    content: CONTENT,
    clock: net.clock,
    randomU32: () => (salt = (Math.imul(salt, 1664525) + 1013904223) >>> 0),
    mode,
    players: 2,
    fps: 60,
  });
  host.listen(net.listen('host', { channels: SESSION_CHANNELS }));
  const input = new Uint8Array([1, 0]);
  const first = new NetplayClient(net.connect('p:1', 'host', { channels: SESSION_CHANNELS }), {
    core: make(),
    content: CONTENT,
    clock: net.clock,
    nick: 'p',
    fps: 60,
  });
  for (let i = 0; i < warmFrames; i++) {
    host.tick(input);
    first.tick(input);
    net.advance(FRAME_MS);
  }
  if (first.state !== 'playing')
    throw new Error(`the first incarnation did not play: ${first.state} ${first.error?.message}`);
  net.cutBoth('p:1', 'host'); // killed: the host has not noticed
  // The restarted process comes back once the old connection has been silent long enough to be
  // replaced (earlier, a live player with that nick is never displaced: the host says full).
  for (let i = 0; i * FRAME_MS <= REPLACE_AFTER_SILENCE_MS; i++) {
    host.tick(input);
    net.advance(FRAME_MS);
  }
  return { net, host, input };
}

function rejoinCost(make: () => Core, warmFrames: number): Cost {
  const { net, host, input } = killedPlayer('lockstep-cs', make, warmFrames);
  const t0 = net.clock.now();
  const conn = net.connect('p:2', 'host', { channels: SESSION_CHANNELS });
  const bytes = { sync: 0, delta: 0, other: 0 };
  let ran = false;
  conn.on('message', ({ channel, data }) => {
    if (ran) return;
    if (channel === 'np-session') bytes.sync += data.length;
    else if (channel === 'sync') bytes.delta += data.length;
    else bytes.other += data.length;
  });
  const again = new NetplayClient(conn, { core: make(), content: CONTENT, clock: net.clock, nick: 'p', fps: 60 });
  let reenterMs = 0;
  again.on('frame', () => {
    if (!ran) reenterMs = net.clock.now() - t0;
    ran = true;
  });
  for (let i = 0; i < 600 && !ran; i++) {
    host.tick(input);
    again.tick(input);
    net.advance(FRAME_MS / 4);
  }
  if (!ran || again.info?.slot !== 1)
    throw new Error(
      `the rejoin did not take its slot back: ran=${ran} slot=${again.info?.slot} state=${again.state} ${again.error?.message}`,
    );
  return { full: host.core.stateBytes, ...bytes, reenterMs };
}

/**
 * The same for rollback (CHIP-8 only: a rollback peer keeps `maxPrediction + 34` savestates, 672 MiB
 * of a 16 MiB state): two players, the client killed and restarted; the bytes of its ENTRY (its SYNC
 * with the power-on state, rollback's WELCOME, the final state as a page delta against power-on)
 * and of everything it receives until its first frame runs, and the time from connecting until then.
 */
function rollbackRejoinCost(make: () => Core, warmFrames: number): Cost {
  const { net, host, input } = killedPlayer('rollback', make, warmFrames);
  const t0 = net.clock.now();
  const conn = net.connect('p:2', 'host', { channels: SESSION_CHANNELS });
  const bytes = { sync: 0, delta: 0, other: 0 };
  let ran = false;
  conn.on('message', ({ channel, data }) => {
    if (ran) return;
    if (channel === 'np-session' && data[0] === ROLLBACK_ENTRY_TYPE) {
      const e = decodeRollbackEntry(data);
      bytes.delta += e.delta.length;
      bytes.sync += data.length - e.delta.length;
    } else bytes.other += data.length;
  });
  const again = new NetplayClient(conn, { core: make(), content: CONTENT, clock: net.clock, nick: 'p', fps: 60 });
  let reenterMs = 0;
  for (let i = 0; i < 2400 && !ran; i++) {
    host.tick(input);
    again.tick(input);
    net.advance(FRAME_MS / 4);
    const s = again.rollback;
    if (s !== undefined && again.info !== undefined && s.currentFrame > again.info.frame) {
      ran = true;
      reenterMs = net.clock.now() - t0;
    }
  }
  if (!ran || again.info?.slot !== 1)
    throw new Error(
      `the rejoin did not take its slot back: ran=${ran} slot=${again.info?.slot} ${again.error?.message}`,
    );
  return { full: host.core.stateBytes, ...bytes, reenterMs };
}

const suite = new BenchSuite('session/rejoin');
const RTT = 'link round trip (ms)';
suite.record({ name: RTT, value: 2 * LATENCY_MS, unit: 'ms', note: 'baseline of the re-entry times' });

/**
 * One row set: the full savestate (the baseline), the state as a page delta, `syncRow` (the rest
 * of the message carrying the delta's base), everything received until the first frame, each as a
 * ratio to the full savestate; and the time to re-enter, as a ratio to the RTT.
 */
function recordRejoin(name: string, c: Cost, syncRow: string): void {
  const base = `${name}: full savestate (bytes)`;
  suite.record({ name: base, value: c.full, unit: 'bytes', note: 'baseline' });
  suite.record({ name: `${name}: state as page delta (bytes)`, value: c.delta, unit: 'bytes', baseline: base });
  suite.record({ name: `${name}: ${syncRow} (bytes)`, value: c.sync, unit: 'bytes', baseline: base });
  suite.record({
    name: `${name}: everything received until the first frame (bytes)`,
    value: c.sync + c.delta + c.other,
    unit: 'bytes',
    baseline: base,
  });
  suite.record({
    name: `${name}: time to re-enter (simulated ms, ratio to the RTT)`,
    value: c.reenterMs,
    unit: 'ms',
    baseline: RTT,
  });
}

for (const [name, make, warm] of [
  ['CHIP-8', chip8, 600],
  ['16 MiB synthetic, 1 % of pages written', () => new SyntheticCore(), 120],
] as const) {
  recordRejoin(name, rejoinCost(make, warm), "SYNC (power-on state, the delta's base)");
}
recordRejoin(
  'rollback, CHIP-8',
  rollbackRejoinCost(chip8, 600),
  'rest of ENTRY (SYNC with the power-on state, WELCOME)',
);
suite.finish();

/**
 * The rollback bench's engine loop, shared with the allocation test: N sessions wired in memory,
 * every message delivered DEPTH ticks late (a 7-frame rollback on every frame), a no-op core.
 * The harness allocates nothing per frame (preallocated message slots and views).
 */
import type { Core } from '@netplay/state';
import { ManualClock } from '@netplay/transport';
import { CoreDriver, P2PSession, type SessionRequest } from '../src/index.js';

const SUMS: readonly bigint[] = Array.from(
  { length: 256 },
  (_, i) => (BigInt(i + 1) * 0x9e3779b97f4a7c15n) & 0xffff_ffff_ffff_ffffn,
);

/** A core that does nothing: measures the session alone. */
export class NoopCore implements Core {
  frame = 0;
  /** XORed into every checksum: set it to make this peer's states look different (a desync). */
  sumXor = 0n;
  readonly stateBytes = 4;
  constructor(
    readonly ports: number,
    readonly inputBytes: number,
  ) {}
  setInput(_port: number, _input: Uint8Array): void {}
  advance(): void {
    this.frame++;
  }
  saveInto(target: Uint8Array): number {
    target[0] = this.frame;
    return 4;
  }
  load(state: Uint8Array): void {
    this.frame = state[0]!;
  }
  /** A different 64-bit checksum per frame (most above 2^63), made once: the core allocates nothing. */
  checksum(): bigint {
    const sum = SUMS[this.frame & 255]!;
    return this.sumXor === 0n ? sum : sum ^ this.sumXor;
  }
  reset(): void {
    this.frame = 0;
  }
}

export const DEPTH = 7; // inputs arrive 7 frames late: every frame rolls back 7 frames (window 8)

/** N sessions wired in memory, every message delivered DEPTH ticks late; returns a step of one peer-frame. */
export function sessionLoop(
  players: number,
  checksumInterval = 0,
): {
  step: () => void;
  first: P2PSession;
  sessions: P2PSession[];
  cores: NoopCore[];
} {
  const input = new Uint8Array(2);
  const clock = new ManualClock();
  const names = Array.from({ length: players }, (_, i) => `p${i}`);
  // Preallocated message slots per delivery tick, so the harness allocates nothing per frame.
  interface Slot {
    from: number;
    to: string;
    channel: string;
    bytes: Uint8Array;
    view: Uint8Array;
  }
  const perTick = players * players * 2;
  const inFlight = Array.from({ length: DEPTH + 1 }, () => ({
    n: 0,
    slots: Array.from({ length: perTick }, (): Slot => {
      const bytes = new Uint8Array(512);
      return { from: 0, to: '', channel: '', bytes, view: bytes.subarray(0, 0) };
    }),
  }));
  const views = Array.from({ length: perTick * (DEPTH + 1) }, () => new Map<number, Uint8Array>());
  let tick = 0;
  const sessions: P2PSession[] = [];
  const drivers: CoreDriver[] = [];
  const cores: NoopCore[] = [];
  for (let i = 0; i < players; i++) {
    const s = new P2PSession({
      players,
      inputBytes: 2,
      localPlayer: i,
      remotes: names.flatMap((peer, j) => (j === i ? [] : [{ peer, player: j }])),
      isHost: i === 0,
      hostPeer: 'p0',
      clock,
      maxPrediction: 8,
      checksumInterval,
      disconnectMs: 0,
      interruptMs: 1e9,
      send: (peer, channel, data) => {
        const q = inFlight[(tick + DEPTH) % (DEPTH + 1)]!;
        const slotIndex = q.n++;
        const slot = q.slots[slotIndex]!;
        slot.from = i;
        slot.to = peer;
        slot.channel = channel;
        slot.bytes.set(data);
        const cache = views[((tick + DEPTH) % (DEPTH + 1)) * perTick + slotIndex]!;
        let v = cache.get(data.length);
        if (v === undefined) {
          v = slot.bytes.subarray(0, data.length);
          cache.set(data.length, v);
        }
        slot.view = v;
      },
    });
    sessions.push(s);
    const core = new NoopCore(players, 2);
    cores.push(core);
    drivers.push(new CoreDriver(core, s.ringFrames));
  }
  const byName = new Map(names.map((n, i) => [n, sessions[i]!]));
  let next = 0;
  /** One peer-frame; after the last peer, deliver the messages due and move the clock. */
  const step = () => {
    if (next === 0) {
      const due = inFlight[tick % (DEPTH + 1)]!;
      for (let k = 0; k < due.n; k++) {
        const m = due.slots[k]!;
        byName.get(m.to)!.receive(names[m.from]!, m.channel, m.view);
      }
      due.n = 0;
    }
    const s = sessions[next]!;
    // A new input every frame: every late input is a misprediction.
    input[0] = (tick * 31 + next) & 0xff;
    s.addLocalInput(input);
    const reqs: readonly SessionRequest[] = s.advanceFrame();
    drivers[next]!.run(reqs, s);
    if (++next === players) {
      next = 0;
      clock.advance(16);
      tick++;
    }
  };
  return { step, first: sessions[0]!, sessions, cores };
}

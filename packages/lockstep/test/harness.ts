import { fc } from '@fast-check/vitest';
import type { Core } from '@netplay/state';
import type { ChannelSpec, Connection, LinkConditions } from '@netplay/transport';
import { SimulatedNetwork } from '@netplay/transport';
import { expect } from 'vitest';
import { type LockstepRunner, type LockstepScheduler, type LoggedFrame, runFrame } from '../src/index.js';
import { randomInputs } from './sessions.js';

/** A peer of a simulated session. */
export interface SimPeer<C extends Core = Core> {
  readonly name: string;
  readonly scheduler: LockstepScheduler;
  readonly core: C;
  readonly runner: LockstepRunner<C>;
}

/**
 * Liveness timeouts for the determinism properties: as the transport timeouts above, far beyond
 * any stall their generated loss causes (a reliable message lost several times waits for the
 * retransmission backoff, sometimes over 5 s). Liveness has its own properties (`*-liveness`).
 */
export const PATIENT = { interruptMs: 100_000, disconnectMs: 1_000_000 } as const;

/** Conditions of a generated schedule: link conditions of every directed link. */
export interface Schedule {
  readonly seed: number;
  readonly link: Partial<LinkConditions>;
}

export function network(schedule: Schedule): SimulatedNetwork {
  return new SimulatedNetwork({ seed: schedule.seed, link: schedule.link });
}

/** Connects `a` and `b`; returns a's end (towards b) and b's end (towards a). */
export function link(
  net: SimulatedNetwork,
  a: string,
  b: string,
  channels: readonly ChannelSpec[],
): { ab: Connection; ba: Connection } {
  const { client, server } = net.pair(a, b, {
    channels,
    timeouts: { interruptMs: 100_000, disconnectMs: 1_000_000, connectMs: 100_000 },
    waitMs: 100_000,
  });
  return { ab: client, ba: server };
}

/**
 * Conditions of every directed link of a full mesh of up to four peers (12 links): latency to
 * 80 ms, jitter to 40 ms, loss to 20 %, duplication to 10 %, reordering to 30 %.
 */
export const meshLinksArb = fc.array(
  fc.record({
    latencyMs: fc.integer({ min: 0, max: 80 }),
    jitterMs: fc.integer({ min: 0, max: 40 }),
    loss: fc.double({ min: 0, max: 0.2, noNaN: true }),
    duplicate: fc.double({ min: 0, max: 0.1, noNaN: true }),
    reorder: fc.double({ min: 0, max: 0.3, noNaN: true }),
  }),
  { minLength: 12, maxLength: 12 },
);

/** Random input changes for a runner (see `randomInputs`). */
export const scriptInputs = randomInputs;

/** Replays `log` on a fresh core, returning the checksum after each frame (index = frames run). */
export function replayChecksums<C extends Core>(
  fresh: C,
  log: readonly LoggedFrame[],
  onCommand?: (core: C, command: number) => void,
): bigint[] {
  const sums = [fresh.checksum()];
  for (const f of log) {
    runFrame(fresh, f.inputs, f.command, onCommand);
    sums.push(fresh.checksum());
  }
  return sums;
}

/**
 * The determinism property: every peer's log is a prefix of the longest one (same inputs, same
 * commands on the same frames), and every peer's core checksum equals the offline replay of that
 * log at the same frame. `firstFrame` is where each log starts (late joiners start later).
 */
export function expectDeterministic<C extends Core>(
  peers: readonly SimPeer<C>[],
  fresh: () => C,
  minFrames: number,
  onCommand?: (core: C, command: number) => void,
): void {
  // The reference is the longest log that starts at frame 0 (late joiners start later).
  let ref: readonly LoggedFrame[] = [];
  for (const p of peers) {
    const log = p.runner.log;
    if ((log[0]?.frame ?? 0) === 0 && log.length > ref.length) ref = log;
  }
  const sums = replayChecksums(fresh(), ref, onCommand);
  for (const p of peers) {
    const log = p.runner.log;
    expect(log.length, `${p.name} ran too few frames`).toBeGreaterThanOrEqual(minFrames);
    const first = log[0]?.frame ?? 0;
    for (let i = 0; i < log.length && first + i < ref.length; i++) {
      const a = log[i]!;
      const b = ref[first + i]!;
      if (a.frame !== b.frame || a.command !== b.command || !sameBytes(a.inputs, b.inputs)) {
        expect.fail(`${p.name}: frame ${a.frame} differs from the reference (frame ${b.frame})`);
      }
    }
    const end = first + log.length;
    // A peer a few frames ahead of the reference: replay the reference, then its own extra frames.
    const expected =
      end < sums.length ? sums[end] : replayChecksums(fresh(), [...ref.slice(0, first), ...log], onCommand)[end];
    expect(p.core.checksum(), `${p.name} checksum vs offline replay`).toBe(expected);
  }
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Links every pair of `names` (full mesh); `conns[i].get(j)` is i's connection to j. */
export function mesh(
  net: SimulatedNetwork,
  names: readonly string[],
  channels: readonly ChannelSpec[],
): Map<number, Connection>[] {
  const conns = names.map(() => new Map<number, Connection>());
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      const { ab, ba } = link(net, names[j]!, names[i]!, channels);
      conns[j]!.set(i, ab);
      conns[i]!.set(j, ba);
    }
  }
  return conns;
}

/** Sets a new input value at the middle of every `every`-th frame, from frame `from` until `untilMs`. */
export function midFrameInputs(
  net: SimulatedNetwork,
  runner: { setLocalInput(input: Uint8Array): void },
  inputBytes: number,
  startMs: number,
  frameMs: number,
  every: number,
  untilMs: number,
  salt: number,
): void {
  for (let k = 0, n = 1; startMs + k * frameMs + frameMs / 2 < untilMs; k += every, n++) {
    const value = new Uint8Array(inputBytes);
    value[0] = ((n * 37 + salt) & 0x7f) | 0x80;
    net.clock.setTimer(startMs + k * frameMs + frameMs / 2 - net.now(), () => runner.setLocalInput(value));
  }
}

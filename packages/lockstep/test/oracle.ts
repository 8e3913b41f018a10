/**
 * The honest oracle of the lockstep determinism properties (issue 13, item 8): every peer's state
 * after every frame is compared with an offline replay of THE INPUTS THE TEST GENERATED, applied
 * at the frames they were due, never with a log the schedulers wrote. Where the due frame depends
 * on network timing, the test records the frame each generated input was stamped for from what the
 * scheduler sent when it handed the input in (its outbox, as the connection sends it), checks the
 * stamp against the mode's rule, and the replay uses the test's own values at those stamps.
 */
import type { Core } from '@netplay/state';
import { type Connection, Prng, type SimulatedNetwork } from '@netplay/transport';
import { expect } from 'vitest';
import { runFrame } from '../src/index.js';

/** Generated input changes of one player: `values[i]` is set at `times[i]` (increasing). */
export interface Script {
  readonly times: number[];
  readonly values: Uint8Array[];
}

/**
 * A script of input changes every 1..`maxHold` frames at random moments between `fromMs` and
 * `untilMs`. Every value has bit 0 of its first byte set, so a generated input never reads as the
 * neutral (all-zero) input a dropped one leaves behind.
 */
export function makeScript(
  seed: number,
  inputBytes: number,
  frameMs: number,
  fromMs: number,
  untilMs: number,
  maxHold = 8,
): Script {
  const prng = new Prng(seed);
  const times: number[] = [];
  const values: Uint8Array[] = [];
  let t = fromMs;
  for (;;) {
    t += frameMs * prng.int(1, maxHold + 1) + prng.nextFloat() * frameMs;
    if (t >= untilMs) break;
    const v = new Uint8Array(inputBytes);
    for (let i = 0; i < inputBytes; i++) v[i] = prng.int(0, 256);
    v[0]! |= 1;
    times.push(t);
    values.push(v);
  }
  return { times, values };
}

/** Plays `script` into a runner on the network's clock. */
export function playScript(
  net: SimulatedNetwork,
  runner: { setLocalInput(input: Uint8Array): void },
  script: Script,
): void {
  // A change due before now would fire late, at now, and an oracle reading the value in force at
  // the send time would see the script's later value (CI seed 1130497145: links set up under loss
  // took 1.7 s, past the script's start): the harness must start scripts after its set-up.
  const first = script.times[0];
  if (first !== undefined && first < net.now())
    throw new Error(`playScript: the script starts at ${first} ms, but the clock is already at ${net.now()} ms`);
  for (let i = 0; i < script.times.length; i++) {
    const v = script.values[i]!;
    net.clock.setTimer(script.times[i]! - net.now(), () => runner.setLocalInput(v));
  }
}

/** Index of the value in force at time `t` (the last one set at or before `t`), -1 before the first. */
export function inForce(script: Script, t: number): number {
  let k = -1;
  for (let i = 0; i < script.times.length && script.times[i]! <= t; i++) k = i;
  return k;
}

/** The value at index `k` (-1: the neutral input). */
export function scriptValue(script: Script, k: number, inputBytes: number): Uint8Array {
  return k < 0 ? new Uint8Array(inputBytes) : script.values[k]!;
}

/** Records the core's checksum after every frame it runs (wraps `advance`): `sums[i]` is after its i-th frame. */
export function frameChecksums(core: Core): bigint[] {
  const sums: bigint[] = [];
  const advance = core.advance.bind(core);
  core.advance = () => {
    advance();
    sums.push(core.checksum());
  };
  return sums;
}

/** Calls `onSend(channel, data)` for everything sent on `conn` (before the transport sees it). */
export function tapSends(conn: Connection, onSend: (channel: string, data: Uint8Array) => void): void {
  const send = conn.send.bind(conn);
  conn.send = ((channel: string, data: Uint8Array) => {
    onSend(channel, data);
    return send(channel, data);
  }) as Connection['send'];
}

/** Offline replay: the checksum after each of `frames` frames of `inputsAt(f)` (and `commandAt(f)`) on a fresh core. */
export function replayGenerated<C extends Core>(
  fresh: C,
  frames: number,
  inputsAt: (f: number) => Uint8Array,
  commandAt: (f: number) => number = () => 0,
): bigint[] {
  const sums: bigint[] = [];
  for (let f = 0; f < frames; f++) {
    runFrame(fresh, inputsAt(f), commandAt(f));
    sums.push(fresh.checksum());
  }
  return sums;
}

/** Like {@link frameChecksums}, for a peer that may start late: `first` is the frame of `sums[0]` (read from `nextFrame` when it runs its first frame). */
export function frameChecksumsFrom(
  core: Core,
  scheduler: { readonly nextFrame: number },
): { sums: bigint[]; first: number } {
  const out = { sums: [] as bigint[], first: -1 };
  const advance = core.advance.bind(core);
  core.advance = () => {
    if (out.first < 0) out.first = scheduler.nextFrame - 1;
    advance();
    out.sums.push(core.checksum());
  };
  return out;
}

/** Every peer ran at least `minFrames` frames, none more than the replay covers, and its state after every frame equals the replay's (`first`: the frame of `sums[0]`, default 0). */
export function expectEveryFrame(
  peers: readonly { name: string; sums: readonly bigint[]; first?: number }[],
  expected: readonly bigint[],
  minFrames: number,
): void {
  for (const p of peers) {
    const first = p.first ?? 0;
    expect(p.sums.length, `${p.name} ran too few frames`).toBeGreaterThanOrEqual(minFrames);
    expect(first + p.sums.length, `${p.name} ran frames the generated inputs do not cover`).toBeLessThanOrEqual(
      expected.length,
    );
    for (let i = 0; i < p.sums.length; i++)
      if (p.sums[i] !== expected[first + i])
        expect.fail(`${p.name}: state after frame ${first + i} differs from the replay of the generated inputs`);
  }
}

/** `a` and `b` hold the same bytes. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Replaces what is sent on `conn`: `fn` returns the bytes to send instead, or `undefined` to send nothing. */
export function filterSends(conn: Connection, fn: (channel: string, data: Uint8Array) => Uint8Array | undefined): void {
  const send = conn.send.bind(conn);
  conn.send = ((channel: string, data: Uint8Array) => {
    const out = fn(channel, data);
    if (out) send(channel, out);
  }) as Connection['send'];
}

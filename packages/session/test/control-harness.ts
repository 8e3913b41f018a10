import type { Core } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';
import { expect } from 'vitest';
import type { NetplayClient, NetplayHost } from '../src/index.js';

export const CORE_SEED = 7;
/** Input bytes of every port in these tests (TestCore's default). */
export const IB = 2;

/**
 * A generated input that names who made it: byte 0 is the player's tag (peer × 16 + local player
 * + 1, never 0), byte 1 a counter that steps every few frames (mod 256). A port that shows another
 * player's tag, or a counter going back, got inputs that were not its player's.
 */
export function tagOf(peer: number, local: number): number {
  return peer * 16 + local + 1;
}

/** Per local player of one peer: the input it presses at tick `t`. */
export function playerInputs(peer: number, locals: number): (t: number) => Uint8Array[] {
  const bufs = Array.from({ length: locals }, () => new Uint8Array(IB));
  return (t) => {
    for (let k = 0; k < locals; k++) {
      const b = bufs[k]!;
      b[0] = tagOf(peer, k);
      b[1] = (t >> (2 + k)) & 0xff;
    }
    return bufs;
  };
}

/** What one peer ran (lockstep: from its `frame`, `final`, `reset` and `paused`/`resumed` events). */
export interface Track {
  readonly sums: Map<number, bigint>;
  readonly inputs: Map<number, Uint8Array>;
  final: number;
  readonly resets: number[];
  readonly pauses: Array<{ kind: 'paused' | 'resumed'; frame: number }>;
  readonly chats: string[];
}

export function track(peer: NetplayHost | NetplayClient): Track {
  const t: Track = { sums: new Map(), inputs: new Map(), final: -1, resets: [], pauses: [], chats: [] };
  const p = peer as NetplayClient;
  p.on('frame', ({ frame, inputs }) => {
    t.sums.set(frame, peer.core.checksum());
    t.inputs.set(frame, inputs.slice());
  });
  p.on('final', ({ frame }) => {
    t.final = frame;
  });
  p.on('reset', ({ frame }) => t.resets.push(frame));
  p.on('paused', ({ frame }) => t.pauses.push({ kind: 'paused', frame }));
  p.on('resumed', ({ frame }) => t.pauses.push({ kind: 'resumed', frame }));
  p.on('chat', ({ seq, nick, text }) => t.chats.push(`${seq} ${nick}: ${text}`));
  return t;
}

/** Every frame final on both has the same checksum; returns how many were compared. */
export function compareTracks(a: Track, b: Track, label: string): number {
  let compared = 0;
  const upTo = Math.min(a.final, b.final);
  for (let f = 0; f <= upTo; f++) {
    const x = a.sums.get(f);
    const y = b.sums.get(f);
    if (x === undefined || y === undefined) continue;
    compared++;
    if (x !== y) expect.fail(`${label}: frame ${f} differs (${x} vs ${y})`);
  }
  return compared;
}

/**
 * Who drives each core port: `owners[port]` is a tag, or 0 for a port nobody drives (it must stay
 * neutral). Checks one frame's inputs (port 0 first) against it, and that each port's counter never
 * goes back (`last` carries the counters between frames).
 */
export function checkPorts(
  inputs: Uint8Array,
  owners: readonly number[],
  last: Map<number, number>,
  frame: number,
): void {
  for (let p = 0; p < owners.length; p++) {
    const tag = inputs[p * IB] ?? 0;
    const count = inputs[p * IB + 1] ?? 0;
    if (tag === 0 && count === 0) continue; // neutral (before the first input arrived)
    if (tag !== owners[p]) expect.fail(`frame ${frame}: port ${p} has tag ${tag}, its player's is ${owners[p]}`);
    const prev = last.get(p);
    if (prev !== undefined && ((count - prev) & 0xff) >= 128)
      expect.fail(`frame ${frame}: port ${p}'s counter went back from ${prev} to ${count}`);
    last.set(p, count);
  }
}

/**
 * Offline replay of a lockstep peer's frames on a fresh core: each frame's port inputs, a reset
 * (the power-on state, which a fresh core is) where the peer reported one, no advance while paused.
 * Returns the checksum after `upTo`.
 */
export function replay(t: Track, ports: number, upTo: number, resets = t.resets, pauses = t.pauses): bigint {
  const fresh = new TestCore({ players: ports, seed: CORE_SEED });
  const powerOn = new Uint8Array(fresh.stateBytes);
  fresh.saveInto(powerOn);
  const resetAt = new Set(resets);
  const toggles = new Map(pauses.map((p) => [p.frame, p.kind === 'paused']));
  let paused = false;
  for (let f = 0; f <= upTo; f++) {
    const inputs = t.inputs.get(f);
    if (inputs === undefined) expect.fail(`no inputs for frame ${f}`);
    if (resetAt.has(f)) fresh.load(powerOn);
    for (let p = 0; p < ports; p++) fresh.setInput(p, inputs.subarray(p * IB, p * IB + IB));
    paused = toggles.get(f) ?? paused;
    if (!paused) fresh.advance();
  }
  return fresh.checksum();
}

/**
 * A core that remembers, for each frame it advanced (`frame` before the advance), the inputs of
 * every port: after rollbacks, the last inputs of a frame are the ones its final state was made
 * with. (Rollback peers have no `frame` events.)
 */
export class RecordingCore implements Core {
  readonly inner: TestCore;
  readonly log = new Map<number, Uint8Array>();
  private readonly current: Uint8Array;
  constructor(ports: number) {
    this.inner = new TestCore({ players: ports, seed: CORE_SEED });
    this.current = new Uint8Array(ports * IB);
  }
  get frame(): number {
    return this.inner.frame;
  }
  get ports(): number {
    return this.inner.ports;
  }
  get inputBytes(): number {
    return this.inner.inputBytes;
  }
  get stateBytes(): number {
    return this.inner.stateBytes;
  }
  setInput(port: number, input: Uint8Array): void {
    this.current.set(input, port * IB);
    this.inner.setInput(port, input);
  }
  advance(): void {
    this.log.set(this.inner.frame, this.current.slice());
    this.inner.advance();
  }
  saveInto(target: Uint8Array): number {
    return this.inner.saveInto(target);
  }
  load(state: Uint8Array): void {
    this.inner.load(state);
  }
  checksum(): bigint {
    return this.inner.checksum();
  }
  reset(): void {
    this.inner.reset();
  }
}

import { expect } from 'vitest';
import { INPUT_CHANNEL } from '../src/index.js';
import { blankInputMessage, Flag, INPUT_V2, readInputMessage } from '../src/input-message.js';
import type { Mesh } from './mesh.js';

const INPUT_TYPE = INPUT_V2;
const scratch = blankInputMessage();

/** Where the inputs of an INPUT message (wire version 2) start: the end of its header. */
export function inputsAt(data: Uint8Array): number {
  readInputMessage(data, scratch, 0, 0);
  return scratch.inputCount > 0 ? scratch.runsAt - 3 : data.length;
}

/** The INPUT message cut to its header (acks, timing and checksums still flow; no inputs). */
export function headerOnly(data: Uint8Array): Uint8Array {
  const out = data.slice(0, inputsAt(data));
  out[1] = out[1]! & ~(Flag.Inputs | Flag.Ref);
  return out;
}

/**
 * Per peer, the longest stretch of virtual time its current frame did not advance while it was
 * neither paused nor ended nor gone (a paused peer is not frozen: it is asleep).
 */
export class FreezeMeter {
  readonly maxFreezeMs: number[];
  private readonly since: number[];
  private readonly frames: number[];

  constructor(private readonly mesh: Mesh) {
    const now = mesh.net.now();
    this.maxFreezeMs = mesh.rigs.map(() => 0);
    this.since = mesh.rigs.map(() => now);
    this.frames = mesh.rigs.map((r) => r.session.currentFrame);
  }

  /** Call after every tick. */
  sample(): void {
    const now = this.mesh.net.now();
    this.mesh.rigs.forEach((rig, i) => {
      const f = rig.session.currentFrame;
      if (rig.paused || rig.gone || rig.session.endReason !== undefined || f > this.frames[i]!) {
        this.since[i] = now;
        this.frames[i] = f;
        return;
      }
      this.maxFreezeMs[i] = Math.max(this.maxFreezeMs[i]!, now - this.since[i]!);
    });
  }
}

/** Every pair of peers agrees on every frame both marked final (CRC of the state). */
export function expectFinalsAgree(mesh: Mesh): void {
  const names = [...mesh.finalCrcs.keys()];
  const diffs: Array<{ a: string; b: string; frame: number }> = [];
  for (let i = 0; i < names.length; i++)
    for (let j = i + 1; j < names.length; j++) {
      const a = mesh.finalCrcs.get(names[i]!)!;
      const b = mesh.finalCrcs.get(names[j]!)!;
      for (const [f, crc] of a) {
        const other = b.get(f);
        if (other !== undefined && other !== crc && diffs.length < 5)
          diffs.push({ a: names[i]!, b: names[j]!, frame: f });
      }
    }
  expect(diffs).toEqual([]);
  expect(mesh.mismatches).toEqual([]);
}

/** Every player was removed at one frame at most, whoever reported it (no two sides deciding apart). */
export function expectOneRemovalFramePerPlayer(mesh: Mesh): void {
  const frames = new Map<number, Set<number>>();
  for (const c of mesh.changes) {
    if (c.playing) continue;
    let s = frames.get(c.player);
    if (s === undefined) {
      s = new Set();
      frames.set(c.player, s);
    }
    s.add(c.frame);
  }
  for (const [player, s] of frames) expect({ player, frames: [...s] }).toEqual({ player, frames: [...s].slice(0, 1) });
}

/** How an adversary treats its INPUT messages (acks, time sync and checksums keep flowing). */
export type StallMode = 'truncate' | 'withhold' | 'replay' | 'garbage';

/**
 * An adversary peer's outgoing filter: from `fromMs` (network time) on, its INPUT messages are cut
 * to the header (`truncate`: acks and timing still flow), dropped (`withhold`: only checksums and
 * control messages flow), replaced by an old INPUT message sent to the same peer (`replay`), or
 * given an undecodable input stream after a valid header (`garbage`).
 */
export function stallFilter(
  now: () => number,
  adversary: number,
  mode: StallMode,
  fromMs: number,
): (from: number, to: string, channel: string, data: Uint8Array) => Uint8Array | undefined {
  const old = new Map<string, Uint8Array>();
  return (from, to, channel, data) => {
    if (from !== adversary || channel !== INPUT_CHANNEL || data[0] !== INPUT_TYPE) return data;
    if (now() < fromMs) {
      if (!old.has(to)) old.set(to, data.slice());
      return data;
    }
    if (mode === 'truncate') return headerOnly(data);
    if (mode === 'withhold') return undefined;
    if (mode === 'garbage') {
      const head = headerOnly(data);
      const out = new Uint8Array(head.length + 3 + 8).fill(0xff);
      out.set(head);
      out[1] = out[1]! | Flag.Inputs;
      return out;
    }
    return old.get(to) ?? headerOnly(data);
  };
}

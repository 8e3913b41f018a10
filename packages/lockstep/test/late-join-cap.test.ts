import { DeltaError, pageDelta } from '@netplay/state';
import { describe, expect, it } from 'vitest';
import { ClientServerClient, FrameAdvancePeer, MeshPeer } from '../src/index.js';

/**
 * Issue 13, item 7: a late joiner applies the host's page delta with the core's state size as
 * `maxTargetBytes`, so a hostile delta announcing a 1 GiB target is refused (`DeltaError
 * too-large`, counted in `dropped`) before anything is allocated, and nothing is loaded.
 */
const STATE_BYTES = 4096;
const HUGE = 0x4000_0000; // 1 GiB

function hostileDelta(base: Uint8Array): Uint8Array {
  const target = base.slice();
  target[100] = 7;
  const delta = pageDelta(base, target, { layoutHash: 0n });
  // The target size (u32 LE at offset 36) now claims 1 GiB; everything else is a valid delta.
  new DataView(delta.buffer, delta.byteOffset).setUint32(36, HUGE, true);
  return delta;
}

function u32be(n: number): number[] {
  return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

/** Runs `fn` and returns how many bytes of ArrayBuffers it left allocated (upper bound of what it reserved and kept). */
function arrayBufferGrowth(fn: () => void): number {
  const before = process.memoryUsage().arrayBuffers;
  fn();
  return process.memoryUsage().arrayBuffers - before;
}

function validDelta(base: Uint8Array): Uint8Array {
  const target = base.slice();
  target[100] = 7;
  return pageDelta(base, target, { layoutHash: 0n });
}

describe('late join refuses a delta larger than the core state (issue 13, item 7)', () => {
  const base = new Uint8Array(STATE_BYTES);
  const delta = hostileDelta(base);

  it('the delta itself is refused by applyDelta with that cap (typed error)', async () => {
    const { applyDelta } = await import('@netplay/state');
    expect(() => applyDelta(base, delta, { maxTargetBytes: STATE_BYTES })).toThrow(DeltaError);
    try {
      applyDelta(base, delta, { maxTargetBytes: STATE_BYTES });
    } catch (e) {
      expect((e as DeltaError).code).toBe('too-large');
    }
  });

  it('the same messages with an honest delta are accepted (the test messages are well formed)', () => {
    const ok = validDelta(base);
    const c = new ClientServerClient({ id: 1, server: 0, ports: 2, inputBytes: 1, frameMs: 20 });
    c.storeState(0, base);
    c.receive(0, 'sync', Uint8Array.from([...u32be(50), ...ok]), 0);
    expect(c.dropped).toBe(0);
    expect(c.takeLoad()?.state[100]).toBe(7);
    const m = new MeshPeer({
      id: 5,
      members: [{ id: 0, port: 0 }],
      candidate: true,
      ports: 2,
      inputBytes: 1,
      frameMs: 20,
    });
    m.storeState(0, base);
    m.receive(
      0,
      'join',
      Uint8Array.from([
        4,
        ...u32be(1),
        ...u32be(80),
        ...u32be(0),
        ...u32be(60),
        ...u32be(0),
        ...u32be(1),
        ...u32be(0),
        ...u32be(0),
        ...u32be(0),
        ...ok,
      ]),
      0,
    );
    expect(m.isMember).toBe(true);
    const f = new FrameAdvancePeer({
      id: 5,
      port: 1,
      peers: [0],
      ports: 2,
      inputBytes: 1,
      frameMs: 20,
      seed: 1,
      candidate: true,
    });
    f.storeState(0, base);
    f.receive(
      0,
      'sched',
      Uint8Array.from([0x12, 1, ...u32be(80), ...u32be(60), ...u32be(60), 0, 1, 0, 0, 0, 0, 0, ...ok]),
      0,
    );
    expect(f.isMember).toBe(true);
  });

  it('client-server: a sync with a 1 GiB target is dropped, nothing loads', () => {
    const c = new ClientServerClient({ id: 1, server: 0, ports: 2, inputBytes: 1, frameMs: 20 });
    expect(c.wantsState(0)).toBe(true);
    c.storeState(0, base);
    const msg = Uint8Array.from([...u32be(50), ...delta]);
    const grew = arrayBufferGrowth(() => c.receive(0, 'sync', msg, 0));
    expect(c.dropped).toBe(1);
    expect(c.takeLoad()).toBeUndefined();
    expect(c.nextFrame).toBe(0);
    expect(grew).toBeLessThan(64 << 20);
  });

  it('mesh: an acceptance with a 1 GiB target is dropped, the candidate stays out', () => {
    const m = new MeshPeer({
      id: 5,
      members: [{ id: 0, port: 0 }],
      candidate: true,
      ports: 2,
      inputBytes: 1,
      frameMs: 20,
    });
    expect(m.wantsState(0)).toBe(true);
    m.storeState(0, base);
    // accepted: 4, u32 port, u32 activeFrom, u32 sync, u32 hostFrame, u32 firstId, u32 count, (u32 id, u32 port, u32 firstId)*, delta
    const msg = Uint8Array.from([
      4,
      ...u32be(1),
      ...u32be(80),
      ...u32be(0),
      ...u32be(60),
      ...u32be(0),
      ...u32be(1),
      ...u32be(0),
      ...u32be(0),
      ...u32be(0),
      ...delta,
    ]);
    const grew = arrayBufferGrowth(() => m.receive(0, 'join', msg, 0));
    expect(m.dropped).toBe(1);
    expect(m.isMember).toBe(false);
    expect(m.takeLoad()).toBeUndefined();
    expect(grew).toBeLessThan(64 << 20);
  });

  it('frame-advance: a welcome with a 1 GiB target is dropped, the candidate stays out', () => {
    const f = new FrameAdvancePeer({
      id: 5,
      port: 1,
      peers: [0],
      ports: 2,
      inputBytes: 1,
      frameMs: 20,
      seed: 1,
      candidate: true,
    });
    expect(f.wantsState(0)).toBe(true);
    f.storeState(0, base);
    // welcome: 0x12, u8 port, u32 from, u32 sync, u32 hostNext, u16 count, (u16 id, u8 port)*, inputs, delta
    const msg = Uint8Array.from([0x12, 1, ...u32be(80), ...u32be(60), ...u32be(60), 0, 1, 0, 0, 0, 0, 0, ...delta]);
    const grew = arrayBufferGrowth(() => f.receive(0, 'sched', msg, 0));
    expect(f.dropped).toBe(1);
    expect(f.isMember).toBe(false);
    expect(f.takeLoad()).toBeUndefined();
    expect(grew).toBeLessThan(64 << 20);
  });
});

import { readFileSync } from 'node:fs';
import { fc, test } from '@fast-check/vitest';
import { Chip8Core } from '@netplay/core-wasm';
import { describeDelta } from '@netplay/state';
import { describe, expect, it } from 'vitest';
import { LockstepRunner, MESH_CHANNELS, MeshPeer } from '../src/index.js';
import { expectDeterministic, network } from './harness.js';
import { buildSession, type Mode, peerName, randomInputs } from './sessions.js';

// Space Racer (P1 keys 4/7, P2 D/E: bit 0 up, bit 1 down of each port's mask), read in place.
const ROM = new Uint8Array(
  readFileSync(new URL('../../../../shared/fixtures/chip8/chip8archive/roms/spaceracer.ch8', import.meta.url)),
);
const F = 1000 / 60;

describe('CHIP-8 Space Racer under lockstep', () => {
  for (const mode of ['client-server', 'mesh', 'frame-advance'] as Mode[]) {
    test.prop(
      {
        seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        link: fc.record({
          latencyMs: fc.integer({ min: 0, max: 60 }),
          jitterMs: fc.integer({ min: 0, max: 20 }),
          loss: fc.double({ min: 0, max: 0.1, noNaN: true }),
          reorder: fc.double({ min: 0, max: 0.2, noNaN: true }),
        }),
      },
      { numRuns: 3, endOnFailure: true },
    )(`${mode}: both players' peers end with the offline replay's state hash`, ({ seed, link }) => {
      const net = network({ seed, link });
      const s = buildSession(mode, net, 2, () => Chip8Core.createSync(ROM), { frameMs: F, seed });
      const until = s.t0 + 240 * F;
      for (const [i, p] of s.peers.entries()) randomInputs(net, p.runner, 2, seed + i, F, s.t0, until, 20, 0x03);
      net.clock.advanceTo(until + 3000);
      expect(s.peers.map((p) => p.name)).toEqual([peerName(0), peerName(1)]);
      expectDeterministic(s.peers, () => Chip8Core.createSync(ROM), 120);
      // The ships moved: the inputs reached the game (the state differs from a no-input run).
      const idle = Chip8Core.createSync(ROM);
      for (let k = 0; k < s.peers[0]!.runner.log.length; k++) idle.advance();
      expect(s.peers[0]!.core.checksum()).not.toBe(idle.checksum());
    });
  }
});

describe('CHIP-8 Space Racer: player 2 joins the mesh at frame 1000', () => {
  it('gets the state as a page delta, replays, and matches the host and the offline replay', () => {
    const F60 = 1000 / 60;
    const net = network({ seed: 21, link: { latencyMs: 25, jitterMs: 10 } });
    const timeouts = { interruptMs: 100_000, disconnectMs: 1_000_000, connectMs: 5_000 };
    const listener = net.listen('m0', { channels: MESH_CHANNELS, timeouts });
    const t0 = 1000;
    const hostCore = Chip8Core.createSync(ROM);
    const { ports, inputBytes } = hostCore;
    const host = new MeshPeer({
      id: 0,
      members: [{ id: 0, port: 0 }],
      ports,
      inputBytes,
      frameMs: F60,
      startMs: t0,
      syncIntervalFrames: 300,
    });
    const hostRunner = new LockstepRunner({ clock: net.clock, scheduler: host, core: hostCore, log: true });
    listener.on('connection', (conn) => hostRunner.addPeer(1, conn));
    const until = t0 + 1400 * F60;
    randomInputs(net, hostRunner, 2, 5, F60, t0, until, 20, 0x03);
    net.clock.advanceTo(t0 + 1000 * F60);

    net.listen('m1', { channels: MESH_CHANNELS, timeouts });
    const cand = new MeshPeer({
      id: 1,
      members: [{ id: 0, port: 0 }],
      candidate: true,
      address: 'm1',
      ports,
      inputBytes,
      frameMs: F60,
      syncIntervalFrames: 300,
    });
    const candCore = Chip8Core.createSync(ROM);
    const candRunner = new LockstepRunner({ clock: net.clock, scheduler: cand, core: candCore, log: true });
    const toHost = net.connect('m1', 'm0', { channels: MESH_CHANNELS, timeouts });
    candRunner.addPeer(0, toHost);
    const deltas: ReturnType<typeof describeDelta>[] = [];
    toHost.on('message', ({ channel, data }) => {
      if (channel === 'join' && data[0] === 4) deltas.push(describeDelta(data.subarray(25 + 12)));
    });
    randomInputs(net, candRunner, 2, 6, F60, net.now(), until, 20, 0x03);
    net.clock.advanceTo(until + 2000);

    expect(cand.isMember).toBe(true);
    expect(cand.port).toBe(1);
    // The sync block at frame 900 (every 300 frames), as changed pages of the CHIP-8 state only.
    expect(candRunner.log[0]!.frame).toBe(900);
    expect(deltas).toHaveLength(1);
    expect(deltas[0]!.kind).toBe('pages');
    expect(deltas[0]!.compressedBytes).toBeLessThan(candCore.stateBytes / 4);
    // Player 2's keys reached the game after its neutral second.
    expect(hostRunner.log.some((f) => f.frame > 1100 && f.inputs[2] !== 0)).toBe(true);
    const peers = [
      { name: 'host', scheduler: host, core: hostCore, runner: hostRunner },
      { name: 'p2', scheduler: cand, core: candCore, runner: candRunner },
    ];
    expectDeterministic(peers, () => Chip8Core.createSync(ROM), 300);
  });
});

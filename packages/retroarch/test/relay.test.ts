import { fc, test } from '@fast-check/vitest';
import {
  decodeRetroArchFrame,
  encodeRetroArchCrc,
  encodeRetroArchInput,
  encodeRetroArchMessageToBytes,
  RetroArchCommand,
} from '@netplay/protocol';
import { describe, expect, it } from 'vitest';
import { RetroArchSessionRelay } from '../src/index.js';

function input(frame: number, client: number): Uint8Array {
  const b = new Uint8Array(20);
  encodeRetroArchInput(b, 0, frame, client, [frame ^ client]);
  return b;
}

function crc(frame: number): Uint8Array {
  const b = new Uint8Array(16);
  encodeRetroArchCrc(b, 0, frame, frame * 3);
  return b;
}

/**
 * An upstream stream as a RetroArch host sends it to a spectator: for each frame, the host's
 * INPUT (client 0), a CRC every 10 frames, and the player's (client 1) INPUT forwarded `ahead`
 * frames early; a savestate at frame `save`.
 */
function upstream(frames: number, ahead: number, save: number): [number, Uint8Array][] {
  const out: [number, Uint8Array][] = [];
  for (let f = 0; f < ahead; f++) out.push([RetroArchCommand.Input, input(f, 1)]);
  for (let f = 0; f < frames; f++) {
    if (f === save) {
      out.push([
        RetroArchCommand.LoadSavestate,
        encodeRetroArchMessageToBytes({
          type: 'loadSavestate',
          frame: f,
          uncompressedSize: 0,
          data: new Uint8Array(0),
        }),
      ]);
    }
    out.push([RetroArchCommand.Input, input(f, 0)]);
    if (f % 10 === 0) out.push([RetroArchCommand.Crc, crc(f)]);
    out.push([RetroArchCommand.Input, input(f + ahead, 1)]);
  }
  return out;
}

describe('RetroArchSessionRelay', () => {
  test.prop([fc.integer({ min: 20, max: 120 }), fc.integer({ min: 0, max: 5 }), fc.nat()], {
    numRuns: 100,
  })('a downstream attached mid-session gets every client in order from its SYNC frame', (frames, ahead, at) => {
    const stream = upstream(frames, ahead, -1);
    const joinAt = at % stream.length;
    const relay = new RetroArchSessionRelay();
    const got: Uint8Array[] = [];
    let attached = false;
    let from = 0;
    stream.forEach(([command, bytes], i) => {
      if (i === joinAt) {
        from = relay.hostFrame;
        relay.attach({ relay: (b) => got.push(b.slice()) }, from);
        attached = true;
      }
      relay.onUpstream(command, bytes);
    });
    expect(attached).toBe(true);
    const messages = got.map((b) => decodeRetroArchFrame(b, 'host'));
    for (const client of [0, 1]) {
      const fs = messages.flatMap((m) => (m.type === 'input' && m.client === client ? [m.frame] : []));
      // In order, consecutive, from the SYNC frame.
      expect(fs).toEqual(Array.from({ length: fs.length }, (_, i) => from + i));
    }
    // The host's frames all arrive: up to the last one upstream.
    const host = messages.filter((m) => m.type === 'input' && m.client === 0);
    expect(host.length).toBe(frames - from);
    // CRCs from the SYNC frame on, each after the host input of its frame.
    for (const [i, m] of messages.entries()) {
      if (m.type !== 'crc') continue;
      expect(m.frame).toBeGreaterThanOrEqual(from);
      expect(messages.slice(0, i).some((p) => p.type === 'input' && p.client === 0 && p.frame === m.frame)).toBe(true);
    }
  });

  it('a savestate goes out in upstream order, after the host input of the frame before it', () => {
    const relay = new RetroArchSessionRelay();
    const stream = upstream(40, 2, 25);
    const got: Uint8Array[] = [];
    stream.forEach(([command, bytes], i) => {
      if (i === 30) relay.attach({ relay: (b) => got.push(b.slice()) }, relay.hostFrame);
      relay.onUpstream(command, bytes);
    });
    const messages = got.map((b) => decodeRetroArchFrame(b, 'host'));
    const s = messages.findIndex((m) => m.type === 'loadSavestate');
    expect(s).toBeGreaterThan(0);
    const before = messages.slice(0, s).filter((m) => m.type === 'input' && m.client === 0);
    expect(before.at(-1)).toMatchObject({ frame: 24 });
  });

  it('detach stops relaying; the buffer keeps only `history` frames per client', () => {
    const relay = new RetroArchSessionRelay(10);
    for (let f = 0; f < 50; f++) relay.onUpstream(RetroArchCommand.Input, input(f, 1));
    const got: number[] = [];
    const sink = { relay: (b: Uint8Array) => got.push((decodeRetroArchFrame(b, 'host') as { frame: number }).frame) };
    // Frames 40..49 are kept: from 40 they all go out at once.
    const a = relay.attach(sink, 40);
    expect(got).toEqual([40, 41, 42, 43, 44, 45, 46, 47, 48, 49]);
    expect(a.inputs).toBe(10);
    a.detach();
    relay.onUpstream(RetroArchCommand.Input, input(50, 1));
    expect(got.length).toBe(10);
    // From 35, which is gone, nothing can go out in order.
    const b = relay.attach({ relay: () => undefined }, 35);
    expect(b.inputs).toBe(0);
  });
});

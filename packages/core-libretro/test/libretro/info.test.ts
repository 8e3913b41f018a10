// What a frontend reads from a real core: self-description, video and audio through the sinks,
// and the CRCs RetroArch's netplay uses (checked against node:zlib's crc32).
import { readFileSync } from 'node:fs';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { VideoFrame } from '../../src/index.js';
import { EFP, loadNestopia, scriptedRun } from './fixtures.js';

describe('Nestopia/efp as a frontend sees it', () => {
  it('reports its info, draws frames into the video sink and samples into the audio sink', () => {
    const frames: { width: number; height: number; pitch: number; format: string; nonZero: boolean }[] = [];
    let samples = 0;
    const core = loadNestopia({
      video: (f: VideoFrame) =>
        frames.push({
          width: f.width,
          height: f.height,
          pitch: f.pitch,
          format: f.format,
          nonZero: f.data.some((b) => b !== 0),
        }),
      audio: (s, n) => {
        expect(s.length).toBe(n * 2);
        samples += n;
      },
    });
    try {
      expect(core.info.libraryName).toBe('Nestopia');
      expect(core.info.fps).toBeCloseTo(60, 0);
      expect(core.pixelFormat).toBe('xrgb8888');
      expect(core.inputBytes).toBe(2);
      expect(core.ports).toBe(2);
      scriptedRun(core, 1, 120);
      expect(frames.length).toBe(120);
      expect(frames[119]).toMatchObject({ width: 256, format: 'xrgb8888' });
      expect(frames[119]!.pitch).toBeGreaterThanOrEqual(256 * 4);
      expect(frames.some((f) => f.nonZero)).toBe(true);
      // About 800 stereo frames per video frame at 48 kHz and 60 fps.
      expect(samples / 120).toBeGreaterThan(700);
      expect(samples / 120).toBeLessThan(900);
    } finally {
      core.close();
    }
  });

  it('contentCrc32 and rawCrc32 are zlib crc32 of the ROM and of the raw state', () => {
    const core = loadNestopia();
    try {
      expect(core.contentCrc32).toBe(zlibCrc32(readFileSync(EFP)));
      scriptedRun(core, 2, 60);
      const raw = new Uint8Array(core.rawStateBytes);
      const n = core.saveRawInto(raw);
      expect(core.rawCrc32()).toBe(zlibCrc32(raw.subarray(0, n)));
      // loadRaw takes RetroArch's bytes and the frame number the protocol gives.
      scriptedRun(core, 2, 60);
      core.loadRaw(raw.subarray(0, n), 60);
      expect(core.frame).toBe(60);
      expect(core.rawCrc32()).toBe(zlibCrc32(raw.subarray(0, n)));
    } finally {
      core.close();
    }
  });
});

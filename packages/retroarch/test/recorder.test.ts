import { fc, test } from '@fast-check/vitest';
import { crc32, encodeRetroArchCrc, encodeRetroArchInput, encodeRetroArchNoInput } from '@netplay/protocol';
import { deflate } from 'pako';
import { describe, expect, it } from 'vitest';
import { parseRecording, RetroArchError, RetroArchRecorder } from '../src/index.js';
import { concat, HOST_INFO, hostHandshake, msg, newClient } from './helpers.js';

type Step = { kind: 'input'; client: number; words: number[] } | { kind: 'noinput' } | { kind: 'crc'; crc: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('input' as const),
    client: fc.integer({ min: 0, max: 3 }),
    words: fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 1, maxLength: 3 }),
  }),
  fc.constant({ kind: 'noinput' as const }),
  fc.record({ kind: fc.constant('crc' as const), crc: fc.integer({ min: 0, max: 0xffffffff }) }),
);

describe('RetroArchRecorder', () => {
  test.prop([fc.array(step, { maxLength: 40 }), fc.integer({ min: 1, max: 30 })], { numRuns: 100 })(
    'records what a spectating client received, stops after the frame budget, and parses back',
    (steps, budget) => {
      const lines: string[] = [];
      const recorder = new RetroArchRecorder((l) => lines.push(l), budget);
      const spectator = newClient();
      spectator.client.start(0);
      spectator.client.receive(hostHandshake({ frame: 10 }), 0);
      const state = Uint8Array.of(1, 2, 3, 4);
      const chunks: Uint8Array[] = [
        msg({ type: 'loadSavestate', frame: 10, uncompressedSize: 4, data: deflate(state) }),
      ];
      // Expected entries, computed from the steps (not from the recorder).
      const expected: unknown[] = [{ t: 'savestate', f: 10, size: 4, crc32: crc32(state) }];
      let frame = 10;
      let frames = 0;
      for (const s of steps) {
        if (s.kind === 'crc') {
          const b = new Uint8Array(16);
          encodeRetroArchCrc(b, 0, frame, s.crc);
          chunks.push(b);
          if (frames < budget) expected.push({ t: 'crc', f: frame, crc: s.crc });
          continue;
        }
        frame++;
        if (s.kind === 'input') {
          const b = new Uint8Array(16 + 4 * s.words.length);
          encodeRetroArchInput(b, 0, frame, s.client, s.words);
          chunks.push(b);
          if (frames < budget) expected.push({ t: 'input', f: frame, c: s.client, w: s.words });
        } else {
          const b = new Uint8Array(12);
          encodeRetroArchNoInput(b, 0, frame);
          chunks.push(b);
          if (frames < budget) expected.push({ t: 'noinput', f: frame });
        }
        if (frames < budget) frames++;
      }
      spectator.client.receive(concat(...chunks), 0);
      for (const e of spectator.events) recorder.onEvent(e);
      recorder.end();
      expected.push({ t: 'end', frames });
      expect(recorder.done).toBe(true);
      const rec = parseRecording(`${lines.join('\n')}\n`);
      expect(rec.header).toMatchObject({
        format: 'netplay-retroarch-record',
        version: 1,
        hostNick: 'rahost',
        core: HOST_INFO.coreName,
        coreVersion: HOST_INFO.coreVersion,
        contentCrc: HOST_INFO.contentCrc,
        frame: 10,
      });
      expect(rec.entries).toEqual(expected);
    },
  );

  it('writes nothing before SYNC', () => {
    const lines: string[] = [];
    const r = new RetroArchRecorder((l) => lines.push(l));
    r.onEvent({ type: 'noInput', frame: 1 });
    r.end();
    expect(lines).toEqual([]);
  });
});

describe('parseRecording', () => {
  const header = JSON.stringify({
    format: 'netplay-retroarch-record',
    version: 1,
    hostNick: 'h',
    core: 'c',
    coreVersion: 'v',
    contentCrc: 1,
    frame: 0,
    devices: [1],
  });
  it.each([
    ['empty', ''],
    ['not JSON', 'x'],
    ['another format', '{"format":"x","version":1}'],
    ['a bad entry type', `${header}\n{"t":"zzz"}`],
    ['a negative frame', `${header}\n{"t":"noinput","f":-1}`],
    ['a non-u32 input word', `${header}\n{"t":"input","f":1,"c":0,"w":[1.5]}`],
    ['an array line', `${header}\n[]`],
  ])('rejects %s with RetroArchError', (_, text) => {
    expect(() => parseRecording(text)).toThrow(RetroArchError);
  });

  test.prop([fc.string({ maxLength: 200 })], { numRuns: 200 })('throws only RetroArchError on any text', (text) => {
    try {
      parseRecording(`${header}\n${text}`);
    } catch (e) {
      expect(e).toBeInstanceOf(RetroArchError);
    }
  });
});

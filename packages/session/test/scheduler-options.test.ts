import { TestCore } from '@netplay/state/testing';
import { ManualClock } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { NetplayHost, type NetplayHostOptions, SessionError } from '../src/index.js';
import { CONTENT, FRAME_MS, setup } from './harness.js';

function host(options: Partial<NetplayHostOptions>): NetplayHost {
  return new NetplayHost({
    core: new TestCore({ players: 2, seed: 7 }),
    content: CONTENT,
    clock: new ManualClock(0),
    randomU32: () => 1,
    ...options,
  });
}

/** The error `make` throws (fails the test if it throws none). */
function thrown(make: () => unknown): unknown {
  try {
    make();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

describe('NetplayHost checks its scheduler options with the builders', () => {
  const bad: Array<[string, Partial<NetplayHostOptions>]> = [
    ['maxPrediction', { maxPrediction: 121 }],
    ['maxPrediction', { maxPrediction: 2.5 }],
    ['checksumInterval', { checksumInterval: -1 }],
    ['fps', { fps: 0 }],
    ['fps', { fps: 1001 }],
    ['inputDelay', { inputDelay: 31 }],
  ];
  it.each(bad)('rollback: a bad %s is a bad-argument naming it, at construction', (option, options) => {
    const e = thrown(() => host(options));
    expect(e).toBeInstanceOf(SessionError);
    expect((e as SessionError).code).toBe('bad-argument');
    expect((e as SessionError).message.startsWith(`${option}: `)).toBe(true);
  });

  it.each(['lockstep-cs', 'lockstep-p2p', 'frame-advance'] as const)(
    '%s: an fps giving frames longer than 1000 ms or none is a bad-argument naming fps',
    (mode) => {
      for (const fps of [0, -5, 0.5, Number.NaN]) {
        const e = thrown(() => host({ mode, fps }));
        expect(e).toBeInstanceOf(SessionError);
        expect((e as SessionError).code).toBe('bad-argument');
        expect((e as SessionError).message.startsWith('fps: ')).toBe(true);
      }
    },
  );

  it('lockstep modes keep their own limits: the rollback-only options are not checked, input delay 0..255', () => {
    for (const mode of ['lockstep-cs', 'lockstep-p2p', 'frame-advance'] as const)
      expect(() => host({ mode, maxPrediction: 500, inputDelay: 255, fps: 1 })).not.toThrow();
  });

  it('valid options construct, the edges of each range included', () => {
    expect(() => host({ maxPrediction: 120, checksumInterval: 0, fps: 1000, inputDelay: 30 })).not.toThrow();
    expect(() => host({ maxPrediction: 0, fps: 0.5 })).not.toThrow();
  });

  it('a game with checked options still starts and runs (the options reach the scheduler)', () => {
    const { net, host: h, join } = setup(11, { maxPrediction: 3, checksumInterval: 10 }, { latencyMs: 10 });
    const c = join('alice');
    const input = new Uint8Array(2);
    for (let i = 0; i < 200; i++) {
      h.tick(input);
      c.tick(input);
      net.advance(FRAME_MS);
    }
    expect(h.rollback?.maxPrediction).toBe(3);
    expect(h.rollback?.checksumInterval).toBe(10);
    expect(h.rollback?.currentFrame).toBeGreaterThan(50);
  });
});

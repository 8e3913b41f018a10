import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { checkAgreement, FinalStates, LockstepFinals } from '../src/agreement.js';

function peer(name: string, hashes: Map<number, number>): FinalStates {
  const p = new FinalStates(name);
  for (const [f, h] of hashes) p.hashes.set(f, h);
  return p;
}

const histories = fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 1, maxLength: 40 });

describe('checkAgreement', () => {
  test.prop([histories, fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 })])(
    'peers holding prefixes of one history agree at the shortest prefix end',
    (history, lengths) => {
      const peers = lengths.map((n, i) => peer(`p${i}`, new Map(history.slice(0, n).map((h, f) => [f, h]))));
      const a = checkAgreement(peers);
      const common = Math.min(...lengths.map((n) => Math.min(n, history.length))) - 1;
      expect(a.frame).toBe(common);
      expect(a.agree).toBe(true);
      expect(a.differing).toBe(0);
      expect(a.hashes.every((h) => h.crc === history[common])).toBe(true);
    },
  );

  test.prop([histories, fc.nat(), fc.integer({ min: 1, max: 0xffffffff })])(
    'one differing frame anywhere a second peer also holds makes them disagree',
    (history, at, flip) => {
      const f = at % history.length;
      const other = history.slice();
      other[f] = (other[f]! ^ flip) >>> 0;
      const a = checkAgreement([
        peer('a', new Map(history.map((h, i) => [i, h]))),
        peer('b', new Map(other.map((h, i) => [i, h]))),
      ]);
      expect(a.agree).toBe(false);
      expect(a.differing).toBe(1);
    },
  );

  test.prop([histories])('a peer with no final frame means no agreement', (history) => {
    const a = checkAgreement([peer('a', new Map(history.map((h, i) => [i, h]))), peer('b', new Map())]);
    expect(a.agree).toBe(false);
  });
});

describe('LockstepFinals', () => {
  /** A core whose state is its frame counter, advanced by hand. */
  function counterCore() {
    const core = {
      frame: 0,
      stateBytes: 4,
      saveInto(target: Uint8Array): number {
        new DataView(target.buffer, target.byteOffset, 4).setUint32(0, core.frame);
        return 4;
      },
    };
    return core;
  }

  it('records a frame only once it is final; frames never final are never recorded', () => {
    const core = counterCore();
    const finals = new FinalStates('p');
    const rec = new LockstepFinals(finals, core);
    for (let f = 0; f < 10; f++) {
      core.frame = f + 1;
      rec.ran(f);
    }
    expect(finals.hashes.size).toBe(0);
    expect(rec.pendingFrames).toBe(10);
    rec.final(5);
    expect([...finals.hashes.keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(finals.last).toBe(6);
    expect(rec.pendingFrames).toBe(4);
    rec.final(3); // never backwards
    expect(rec.pendingFrames).toBe(4);
    // A frame that runs at or below the final frame already known is final at once.
    core.frame = 99;
    rec.ran(4);
    expect(finals.hashes.has(99)).toBe(true);
    // Frames 6..9 never become final: they are not recorded.
    expect(finals.hashes.has(10)).toBe(false);
  });
});

import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { checkAgreement, FinalStates } from '../src/agreement.js';

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

import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { listExamples, passed, runExample } from '../run-all.mjs';

const names: string[] = listExamples();

describe('examples', () => {
  it('lists the seven examples', () => {
    expect(names).toEqual([
      'lockstep-mesh',
      'message-channel-transport',
      'retroarch-decode',
      'rollback-two-peers',
      'rollback-udp',
      'savestate-registry',
      'spectator',
    ]);
  });

  for (const name of names) {
    it(`${name} runs to completion and its closing assertion passes`, async () => {
      const run = await runExample(name);
      if (!passed(run)) console.error(run.output);
      expect(run.code, `${name} exit code`).toBe(0);
      expect(passed(run), `${name} ends with "ok:"`).toBe(true);
    });
  }
});

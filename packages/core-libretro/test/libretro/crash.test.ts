// Cores that abort or need what a headless frontend refuses, built from test/fixtures/fake-core.c:
// probeLibretroCore runs them in a child process, so the host process survives.
import { afterAll, describe, expect, it } from 'vitest';
import { LibretroCore, LibretroError, probeLibretroCore } from '../../src/index.js';
import { buildFakeCore, removeFakeCores } from './fake-core.js';
import { EFP, NESTOPIA, requireFile } from './fixtures.js';

describe('cores that crash or refuse', () => {
  afterAll(removeFakeCores);
  it('a core that aborts on load: core-crashed from the probe, this process unharmed', () => {
    const core = buildFakeCore('abort', ['ABORT_ON_LOAD']);
    let error: unknown;
    try {
      probeLibretroCore({ core, content: new Uint8Array([1, 2, 3]), contentName: 'x.bin' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LibretroError);
    expect((error as LibretroError).code).toBe('core-crashed');
    expect((error as LibretroError).file).toBe(core);
    expect((error as Error).message).toContain('SIGABRT');
  });

  it('a core that needs hardware rendering: unsupported-environment naming the call', () => {
    const core = buildFakeCore('hw', ['NEEDS_HW_RENDER']);
    let error: unknown;
    try {
      LibretroCore.load({ core, content: new Uint8Array([1]), contentName: 'x.bin' });
    } catch (e) {
      error = e;
    }
    expect((error as LibretroError).code).toBe('unsupported-environment');
    expect((error as LibretroError).file).toBe(core);
    expect((error as Error).message).toContain('SET_HW_RENDER');
    // The same error comes back through the probe.
    expect(() => probeLibretroCore({ core, content: new Uint8Array([1]), contentName: 'x.bin' })).toThrow(
      expect.objectContaining({ code: 'unsupported-environment' }),
    );
  });

  it('the fake core without defines and Nestopia/efp probe fine', () => {
    const fake = probeLibretroCore({
      core: buildFakeCore('plain'),
      content: new Uint8Array([1]),
      contentName: 'x.bin',
    });
    expect(fake).toMatchObject({ libraryName: 'FakeCore', reloadAgrees: true, frames: 61 });
    const nes = probeLibretroCore({ core: requireFile(NESTOPIA), content: requireFile(EFP), frames: 120 });
    expect(nes).toMatchObject({
      libraryName: 'Nestopia',
      reloadAgrees: true,
      frames: 121,
      savestateContextAsked: false,
    });
    expect(nes.stateBytes).toBeGreaterThan(20_000);
  });
});

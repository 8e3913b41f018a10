// Tests that need no libretro core: option validation, state header checks, errors, helpers.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  crc32,
  encodeRetroPad,
  LibretroCore,
  type LibretroCoreOptions,
  LibretroError,
  parseVariableDeclaration,
  RetroPad,
  resolveLibretroCore,
  STATE_HEADER_BYTES,
  validateOptions,
} from '../src/index.js';
import { checkCoreOptions } from '../src/options.js';
import { readStateHeader, writeStateHeader } from '../src/state-header.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'core-libretro-test-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LibretroError);
    return (e as LibretroError).code;
  }
  return undefined;
}

const base: LibretroCoreOptions = { core: '/nonexistent/x_libretro.so', content: new Uint8Array([1]) };

describe('validateOptions', () => {
  it('accepts the minimal options', () => {
    expect(() => validateOptions(base)).not.toThrow();
    expect(() => validateOptions({ ...base, ports: 4, savestateContext: 'normal', options: { a: 'b' } })).not.toThrow();
  });
  it.each([
    ['ports 0', { ports: 0 }],
    ['ports 9', { ports: 9 }],
    ['ports 1.5', { ports: 1.5 }],
    ['empty core', { core: '' }],
    ['empty content bytes', { content: new Uint8Array(0) }],
    ['content a number', { content: 3 }],
    ['unknown key', { colour: 'red' }],
    ['bad savestate context', { savestateContext: 'later' }],
    ['option value not a string', { options: { a: 1 } }],
    ['content name with a slash', { contentName: '../x.nes' }],
    ['negative slack', { stateSlack: -1 }],
    ['video not a function', { video: 'screen' }],
  ])('rejects %s with bad-option', (_name, patch) => {
    expect(codeOf(() => validateOptions({ ...base, ...(patch as object) } as LibretroCoreOptions))).toBe('bad-option');
  });
});

describe('LibretroCore.load without a core', () => {
  it('names a missing core file', () => {
    try {
      LibretroCore.load(base);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(LibretroError);
      expect((e as LibretroError).code).toBe('missing-core');
      expect((e as LibretroError).file).toBe(base.core);
      expect((e as Error).message).toContain(base.core);
    }
  });
  it('names a file that is not a shared library (not-libretro)', () => {
    const dir = tempDir();
    const fake = join(dir, 'fake_libretro.so');
    writeFileSync(fake, 'this is not an ELF file');
    try {
      LibretroCore.load({ ...base, core: fake });
      expect.unreachable();
    } catch (e) {
      expect((e as LibretroError).code).toBe('not-libretro');
      expect((e as LibretroError).file).toBe(fake);
    }
  });
  it('names missing content', () => {
    const dir = tempDir();
    const fake = join(dir, 'fake_libretro.so');
    writeFileSync(fake, 'x');
    const missing = join(dir, 'none.nes');
    try {
      LibretroCore.load({ core: fake, content: missing });
      expect.unreachable();
    } catch (e) {
      expect((e as LibretroError).code).toBe('missing-content');
      expect((e as LibretroError).file).toBe(missing);
    }
  });
});

describe('resolveLibretroCore', () => {
  it('resolves a name in the given folder and passes paths through', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'toy_libretro.so'), 'x');
    expect(resolveLibretroCore('toy', dir)).toBe(join(dir, 'toy_libretro.so'));
    expect(resolveLibretroCore(join(dir, 'toy_libretro.so'))).toBe(join(dir, 'toy_libretro.so'));
  });
  it('says how to install a missing core', () => {
    const dir = tempDir();
    try {
      resolveLibretroCore('nosuchcore', dir);
      expect.unreachable();
    } catch (e) {
      expect((e as LibretroError).code).toBe('missing-core');
      expect((e as Error).message).toContain('setup-libretro.sh');
      expect((e as LibretroError).file).toBe(join(dir, 'nosuchcore_libretro.so'));
    }
    expect(codeOf(() => resolveLibretroCore('a b'))).toBe('bad-option');
  });
});

describe('core options', () => {
  it('parses SET_VARIABLES declarations (first value is the default)', () => {
    expect(parseVariableDeclaration('k', 'Palette; cxa2025as|consumer|canonical')).toEqual({
      key: 'k',
      description: 'Palette',
      values: ['cxa2025as', 'consumer', 'canonical'],
    });
  });
  it('rejects unknown keys and values not declared', () => {
    const declared = new Map([['k', parseVariableDeclaration('k', 'K; a|b')]]);
    expect(() => checkCoreOptions({ k: 'b' }, declared, 'core.so')).not.toThrow();
    expect(codeOf(() => checkCoreOptions({ k: 'c' }, declared, 'core.so'))).toBe('bad-option');
    expect(codeOf(() => checkCoreOptions({ z: 'a' }, declared, 'core.so'))).toBe('bad-option');
  });
});

describe('state header', () => {
  const make = (coreId: number, contentId: number, payload: number, extra = 0) => {
    const s = new Uint8Array(STATE_HEADER_BYTES + payload + extra);
    writeStateHeader(s, { coreId, contentId, frame: 77, payloadBytes: payload });
    return s;
  };
  it('round-trips', () => {
    expect(readStateHeader(make(1, 2, 10), 1, 2, 'f')).toEqual({
      coreId: 1,
      contentId: 2,
      frame: 77,
      payloadBytes: 10,
    });
  });
  it('tells truncated, foreign, other-content and not-a-state apart', () => {
    expect(codeOf(() => readStateHeader(make(1, 2, 10).subarray(0, 20), 1, 2, 'f'))).toBe('truncated-state');
    expect(codeOf(() => readStateHeader(make(1, 2, 10).subarray(0, 33), 1, 2, 'f'))).toBe('truncated-state');
    expect(codeOf(() => readStateHeader(make(9, 2, 10), 1, 2, 'f'))).toBe('foreign-state');
    expect(codeOf(() => readStateHeader(make(1, 9, 10), 1, 2, 'f'))).toBe('other-content');
    const raw = make(1, 2, 10);
    raw[0] = 0;
    expect(codeOf(() => readStateHeader(raw, 1, 2, 'f'))).toBe('not-a-state');
  });
});

describe('helpers', () => {
  it('crc32 is zlib crc32', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
  });
  it('encodes RetroPad masks little-endian', () => {
    expect([...encodeRetroPad(RetroPad.A | RetroPad.START)]).toEqual([0x08, 0x01]);
  });
});

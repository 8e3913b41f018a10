import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SnapshotError, StateRegistry } from '@netplay/state';
import { loadNvramFile, saveNvramFile } from '@netplay/state/node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netplay-state-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function machine() {
  const r = new StateRegistry();
  const hiscores = new Uint32Array(10);
  const eeprom = new Uint8Array(128);
  const ram = new Uint8Array(64);
  r.register('driver', 0, 'hiscores', hiscores, { nvram: true });
  r.register('eeprom', 0, 'data', eeprom, { nvram: true });
  r.register('main', 0, 'ram', ram);
  r.freeze();
  return { r, hiscores, eeprom, ram };
}

describe('NVRAM file adapter', () => {
  it('persists NVRAM entries across power cycles, and only them', async () => {
    const path = join(dir, 'game.nv');
    const first = machine();
    expect(await loadNvramFile(first.r, path)).toBe(false);
    first.hiscores[0] = 99_999;
    first.eeprom.fill(0xa5);
    first.ram.fill(7);
    await saveNvramFile(first.r, path);

    const second = machine();
    expect(await loadNvramFile(second.r, path)).toBe(true);
    expect(second.hiscores[0]).toBe(99_999);
    expect(second.eeprom.every((b) => b === 0xa5)).toBe(true);
    expect(second.ram.every((b) => b === 0)).toBe(true);
    expect((await readFile(path)).length).toBe(first.r.nvramBytes);
  });

  it('a damaged file is rejected and loads nothing', async () => {
    const path = join(dir, 'game.nv');
    const m = machine();
    m.hiscores[0] = 5;
    await saveNvramFile(m.r, path);
    const bytes = await readFile(path);
    bytes[40]! ^= 0xff;
    await writeFile(path, bytes);
    const fresh = machine();
    await expect(loadNvramFile(fresh.r, path)).rejects.toBeInstanceOf(SnapshotError);
    expect(fresh.hiscores[0]).toBe(0);
  });

  it('other file system errors are passed on', async () => {
    await expect(loadNvramFile(machine().r, dir)).rejects.toMatchObject({ code: 'EISDIR' });
  });
});

describe('browser safety', () => {
  it('only src/node.ts imports node: modules, and the main entry does not import it', async () => {
    const { readdir } = await import('node:fs/promises');
    const src = new URL('../src/', import.meta.url);
    const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts'));
    const offenders: string[] = [];
    for (const f of files) {
      const text = await readFile(new URL(f, src), 'utf8');
      if (f !== 'node.ts' && /from ['"]node:/.test(text)) offenders.push(f);
      if (f !== 'node.ts' && /from ['"]\.\/node\.js['"]/.test(text)) offenders.push(`${f} imports ./node.js`);
    }
    expect(files).toContain('index.ts');
    expect(offenders).toEqual([]);
  });
});

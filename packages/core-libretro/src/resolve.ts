import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LibretroError } from './errors.js';

/** Where Debian and Ubuntu install libretro cores (`libretro-nestopia`, `libretro-gambatte`, `libretro-mgba`…). */
export const DEBIAN_LIBRETRO_DIR = '/usr/lib/x86_64-linux-gnu/libretro';

/**
 * Resolves a core name to a path: `'nestopia'` → `<dir>/nestopia_libretro.so`. A value holding a
 * `/` or ending in `.so` is a path and passes through unchanged (checked to exist).
 * @throws LibretroError `missing-core` naming the file looked for
 */
export function resolveLibretroCore(nameOrPath: string, dir: string = DEBIAN_LIBRETRO_DIR): string {
  if (typeof nameOrPath !== 'string' || nameOrPath.length === 0)
    throw new LibretroError('bad-option', 'a core name or path is required');
  const isPath = nameOrPath.includes('/') || nameOrPath.endsWith('.so');
  if (!isPath && !/^[A-Za-z0-9_+.-]+$/.test(nameOrPath))
    throw new LibretroError('bad-option', `"${nameOrPath}" is neither a core name nor a path`);
  const path = isPath ? nameOrPath : join(dir, `${nameOrPath}_libretro.so`);
  if (!existsSync(path))
    throw new LibretroError(
      'missing-core',
      isPath
        ? `no core file at ${path}`
        : `core "${nameOrPath}" not found at ${path} (on Debian: apt-get install libretro-${nameOrPath}; in this repo: .ci/setup-libretro.sh)`,
      path,
    );
  return path;
}

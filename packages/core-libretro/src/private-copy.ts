import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

const live = new Set<string>();
let hooked = false;
let root: string | undefined;

/** Where private copies go (internal: the probe child uses a folder its parent deletes). */
export function setPrivateCopyRoot(dir: string | undefined): void {
  root = dir;
}

/**
 * A private folder holding a copy of the core library. A libretro core keeps its state in the
 * library's globals, and the dynamic loader shares one library per path: two instances in one
 * process (or worker threads) need two copies at different paths.
 */
export class PrivateCopy {
  /** The private folder (also the default system and save directory). */
  readonly dir: string;
  /** Path of the copied library. */
  readonly corePath: string;

  constructor(core: string) {
    this.dir = mkdtempSync(join(root ?? tmpdir(), 'netplay-libretro-'));
    live.add(this.dir);
    if (!hooked) {
      hooked = true;
      process.once('exit', () => {
        for (const d of live) rmSync(d, { recursive: true, force: true });
      });
    }
    this.corePath = join(this.dir, basename(core));
    try {
      copyFileSync(core, this.corePath);
    } catch (e) {
      this.remove();
      throw e;
    }
  }

  /** Deletes the folder and the copy. */
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
    live.delete(this.dir);
  }
}

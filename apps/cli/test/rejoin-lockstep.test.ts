import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';
import { type Child, spawnCli } from './child.js';

// The lockstep helper's CLI end-to-end tests (issue 15): real `netplay host` / `netplay join`
// processes over UDP on loopback. A spectator joins a running lockstep-cs game; at the end its
// `--finals` file (the CRC-32 of each final frame's state) is compared with the host's and the
// player's, read by the documented format, not by the code that writes it.

const dir = mkdtempSync(join(tmpdir(), 'netplay-cli-rejoin-lockstep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const children: Child[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill();
});

function cli(args: string[], timeoutMs = 40_000): Child {
  const c = spawnCli(args, timeoutMs);
  children.push(c);
  return c;
}

const finalsPath = (name: string) => join(dir, `${name}.finals`);

/** A finals file's hashes by frame (`FRAME CRC32` lines; `#` lines skipped). */
function readFinals(path: string): Map<number, number> {
  const hashes = new Map<number, number>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\d+) ([0-9a-f]{8})$/.exec(line);
    expect(m, `a FRAME CRC32 line in ${path}: ${JSON.stringify(line)}`).not.toBeNull();
    hashes.set(Number(m![1]), Number.parseInt(m![2]!, 16));
  }
  return hashes;
}

/** Frames two peers both hold, and those of them where their hashes differ. */
function compare(a: ReadonlyMap<number, number>, b: ReadonlyMap<number, number>) {
  let common = 0;
  const differing: number[] = [];
  for (const [f, h] of a) {
    const other = b.get(f);
    if (other === undefined) continue;
    common++;
    if (other !== h) differing.push(f);
  }
  return { common, differing };
}

const output = (...cs: Child[]) => cs.map((c) => `${c.stdout()}${c.stderr()}`).join('\n----\n');

describe('netplay host --mode lockstep-cs: a spectator joins mid-game', () => {
  it('it gets the running game from its entry frame, and its final frames agree with the host and the player', async () => {
    const host = cli([
      'host',
      '--mode',
      'lockstep-cs',
      '--players',
      '2',
      '--bind',
      '127.0.0.1',
      '--port',
      '0',
      '--bot',
      '--seconds',
      '8',
      '--finals',
      finalsPath('host'),
    ]);
    const port = (await host.waitFor(/hosting on udp 127\.0\.0\.1:(\d+)/))[1]!;
    const target = `127.0.0.1:${port}`;
    // The join and the spectator run until the host stops (then they lose it: exit PeerLost, files written).
    const ann = cli(['join', target, '--bot', '--nick', 'ann', '--players', '2', '--finals', finalsPath('ann')]);
    await ann.waitFor(/joined 127\.0\.0\.1:\d+ as ann \(P2\), lockstep-cs/);
    await new Promise((r) => setTimeout(r, 1500));
    const watcher = cli([
      'join',
      target,
      '--spectate',
      '--nick',
      'sam',
      '--players',
      '2',
      '--finals',
      finalsPath('sam'),
    ]);
    await watcher.waitFor(/joined 127\.0\.0\.1:\d+ as sam \(a spectator\), lockstep-cs/, 10_000);
    await host.waitFor(/sam joined as a spectator/);
    expect(await host.exit, output(host)).toBe(ExitCode.Ok);
    expect(await watcher.exit, output(watcher)).toBe(ExitCode.PeerLost);
    expect(await ann.exit, output(ann)).toBe(ExitCode.PeerLost);

    const h = readFinals(finalsPath('host'));
    const a = readFinals(finalsPath('ann'));
    const s = readFinals(finalsPath('sam'));
    const entry = Math.min(...s.keys());
    console.log(`finals: host ${h.size}, ann ${a.size}, spectator ${s.size} (from frame ${entry})`);
    // It joined a running game (not frame 0), and its state at its entry frame is the host's.
    expect(entry).toBeGreaterThan(60);
    expect(s.get(entry)).toBe(h.get(entry));
    // Seconds of watching at 60 fps: well over 100 frames, all equal to the host's and the player's.
    expect(s.size, output(watcher)).toBeGreaterThan(100);
    for (const [name, x, y] of [
      ['host vs ann', h, a],
      ['host vs spectator', h, s],
      ['ann vs spectator', a, s],
    ] as const) {
      const c = compare(x, y);
      expect(c.differing, name).toEqual([]);
      expect(c.common, name).toBeGreaterThan(100);
    }
  }, 40_000);
});

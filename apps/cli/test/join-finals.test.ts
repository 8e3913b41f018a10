import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAgreement, FINALS_HEADER, FinalStates, formatFinals } from '../src/agreement.js';
import { runCli } from '../src/cli.js';
import { ExitCode } from '../src/exit-codes.js';
import { memoryIo } from '../src/io.js';
import { join_, printed, startHost } from './in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'netplay-cli-finals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A finals file read by the documented grammar alone (not by the code that writes it). */
interface FinalsFile {
  readonly comments: string[];
  readonly hashes: Map<number, number>;
}

function readFinals(text: string): FinalsFile {
  expect(text.endsWith('\n'), 'every line ends with \\n').toBe(true);
  const comments: string[] = [];
  const hashes = new Map<number, number>();
  let previous = -1;
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.startsWith('#')) {
      comments.push(line);
      continue;
    }
    const m = /^(0|[1-9]\d*) ([0-9a-f]{8})$/.exec(line);
    expect(m, `a FRAME CRC32 line: ${JSON.stringify(line)}`).not.toBeNull();
    const frame = Number(m![1]);
    expect(frame, 'ascending frames').toBeGreaterThan(previous);
    previous = frame;
    hashes.set(frame, Number.parseInt(m![2]!, 16));
  }
  return { comments, hashes };
}

/** How many frames two hash maps share, and at which of those they differ. */
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

describe('the finals file format', () => {
  const hashMaps = fc
    .array(fc.tuple(fc.nat({ max: 1_000_000 }), fc.integer({ min: 0, max: 0xffffffff })), { maxLength: 60 })
    .map((pairs) => new Map(pairs));

  test.prop([hashMaps, fc.string({ minLength: 1, maxLength: 24, unit: 'grapheme' })])(
    'holds the header, the nick and every frame with its hash, in ascending frame order',
    (hashes, nick) => {
      const finals = new FinalStates(nick);
      for (const [f, h] of hashes) finals.hashes.set(f, h);
      const file = readFinals(formatFinals(finals));
      expect(file.hashes).toEqual(hashes);
      expect(file.comments[0]).toBe(FINALS_HEADER);
      expect(file.comments).toHaveLength(2);
      // dotAll: a nick may hold U+2028 / U+2029, which `.` does not match otherwise (seed -1335824638).
      const nickLine = /^# nick (.*)$/s.exec(file.comments[1]!);
      expect(JSON.parse(nickLine![1]!)).toBe(nick);
    },
  );
});

describe('netplay join --finals (in-process)', () => {
  it('two joiners and a spectator write the hashes they kept, which agree with the host and each other', async () => {
    const host = startHost(['--players', '3'], 5);
    const port = await host.port;

    const joiner = (nick: string, args: string[]) => {
      const path = join(dir, `${nick}.finals`);
      return { path, ...join_(port, ['--nick', nick, '--players', '3', '--finals', path, ...args]) };
    };
    const watcher = joiner('watcher', ['--spectate']);
    const a = joiner('ann', ['--bot', '--seconds', '3']);
    const b = joiner('ben', ['--bot', '--seconds', '3']);
    // Once both players are in, a third is refused: its file is left empty.
    await printed(host.io, [/ann joined/, /ben joined/]);
    const late = joiner('late', ['--bot']);
    expect(await late.done).toBe(ExitCode.Full);
    expect(readFileSync(late.path, 'utf8')).toBe('');

    expect(await a.done).toBe(ExitCode.Ok);
    expect(await b.done).toBe(ExitCode.Ok);
    expect(await host.done, `${host.io.stdout.join('')}${host.io.stderr.join('')}`).toBe(ExitCode.Ok);
    // The spectator loses the host, and still writes what it kept.
    expect(await watcher.done).toBe(ExitCode.PeerLost);

    const files = [a, b, watcher].map((p) => {
      const file = readFinals(readFileSync(p.path, 'utf8'));
      // The file holds exactly the hashes the command kept (the in-process hook's).
      expect(file.hashes).toEqual(p.finals()!.hashes);
      expect(file.comments).toContain(`# nick ${JSON.stringify(p.finals()!.name)}`);
      expect(p.io.stdout.join('')).toContain(`wrote the state hashes of ${file.hashes.size} final frames to ${p.path}`);
      return file.hashes;
    });
    const hostFinals = host.finals()!;
    const hostHashes = hostFinals.hashes;
    // 3 s of play at 60 fps: well over 100 final frames in common, and not one differs.
    for (const [i, hashes] of files.entries()) {
      const vsHost = compare(hashes, hostHashes);
      expect(vsHost.differing, `peer ${i} vs host`).toEqual([]);
      expect(vsHost.common, `peer ${i} vs host`).toBeGreaterThan(100);
    }
    const ab = compare(files[0]!, files[1]!);
    expect(ab.differing).toEqual([]);
    expect(ab.common).toBeGreaterThan(100);
    const agreement = checkAgreement([hostFinals, a.finals()!, b.finals()!, watcher.finals()!]);
    expect(agreement.agree).toBe(true);
  });

  it('an unwritable --finals path is a usage error before connecting', async () => {
    const io = memoryIo();
    const path = join(dir, 'no-such-dir', 'out.finals');
    // Port 9 (discard) on loopback: nothing listens there; the command must fail before connecting.
    const code = await runCli(['join', '127.0.0.1:9', '--finals', path], io);
    expect(code).toBe(ExitCode.Usage);
    expect(io.stderr.join('')).toMatch(/cannot write --finals .*no-such-dir.*ENOENT/);
  });
});

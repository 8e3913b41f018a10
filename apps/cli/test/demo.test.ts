import { describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import { ExitCode } from '../src/exit-codes.js';
import { memoryIo } from '../src/io.js';

describe('netplay demo', () => {
  it('--seconds 3 runs host, guest and spectator over the UDP relay and all agree', async () => {
    const io = memoryIo();
    const code = await runCli(['demo', '--seconds', '3', '--seed', '7'], io);
    const out = io.stdout.join('');
    expect(out).toMatch(/OK: all peers agree\./);
    expect(code).toBe(ExitCode.Ok);
    const m = /State hash \(CRC-32\) at frame (\d+)/.exec(out);
    expect(Number(m![1])).toBeGreaterThan(60);
    // The live stats name every peer.
    expect(out).toMatch(/host +P1 frame/);
    expect(out).toMatch(/guest +P2 frame/);
    expect(out).toMatch(/spectator +frame/);
  });

  it.each(['lockstep-cs', 'lockstep-p2p', 'frame-advance'])(
    '--mode %s runs two bots over the relay and they agree',
    async (mode) => {
      const io = memoryIo();
      const code = await runCli(['demo', '--mode', mode, '--seconds', '2', '--seed', '11'], io);
      const out = io.stdout.join('');
      expect(out).toMatch(/OK: all peers agree\./);
      expect(code).toBe(ExitCode.Ok);
      expect(out).toContain(`${mode} over UDP via a relay`);
      const m = /State hash \(CRC-32\) at frame (\d+)/.exec(out);
      expect(Number(m![1])).toBeGreaterThan(30);
    },
  );

  it('bad options exit Usage', async () => {
    expect(await runCli(['demo', '--mode', 'frame-advance', '--interactive'], memoryIo())).toBe(ExitCode.Usage);
    expect(await runCli(['demo', '--mode', 'teleport'], memoryIo())).toBe(ExitCode.Usage);
    expect(await runCli(['demo', '--seconds', '0'], memoryIo())).toBe(ExitCode.Usage);
  });

  it('--interactive needs a terminal; with one, key presses are taken, Q ends the demo early and raw mode is restored', async () => {
    expect(await runCli(['demo', '--interactive'], memoryIo())).toBe(ExitCode.Usage);
    let feed: ((chunk: string) => void) | undefined;
    const modes: boolean[] = [];
    const stdin = {
      isTTY: true,
      setRawMode: (m: boolean) => modes.push(m),
      setEncoding: () => {},
      on: (_e: 'data', fn: (chunk: string) => void) => {
        feed = fn;
      },
      off: () => {
        feed = undefined;
      },
      resume: () => {},
      pause: () => {},
    };
    const io = memoryIo();
    const started = Date.now();
    const run = runCli(['demo', '--interactive', '--seconds', '60'], io, { demo: { stdin } });
    while (feed === undefined) await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 20; i++) {
      feed('w');
      await new Promise((r) => setTimeout(r, 50));
    }
    feed('q');
    expect(await run).toBe(ExitCode.Ok);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(io.stdout.join('')).toMatch(/you play P1/);
    expect(io.stdout.join('')).toMatch(/OK: all peers agree\./);
    expect(modes).toEqual([true, false]); // raw mode on, then restored
  });
});

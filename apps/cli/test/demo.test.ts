import { describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import { runDemo } from '../src/commands/demo.js';
import { ExitCode } from '../src/exit-codes.js';
import { memoryIo } from '../src/io.js';

describe('netplay demo', () => {
  it('--seconds 3 runs host, guest and spectator over the UDP relay and all agree', async () => {
    const io = memoryIo();
    const code = await runCli(['demo', '--seconds', '3', '--seed', '7'], io);
    const out = io.stdout.join('');
    expect(out).toMatch(/OK: all peers agree\./);
    expect(code).toBe(ExitCode.Ok);
    expect(out).toContain('rollback over UDP via a relay');
    const m = /State hash \(CRC-32\) at frame (\d+)/.exec(out);
    expect(Number(m![1])).toBeGreaterThan(60);
    // The live stats name every peer.
    expect(out).toMatch(/host +P1 frame/);
    expect(out).toMatch(/guest +P2 frame/);
    expect(out).toMatch(/spectator +frame/);
  });

  it.each(['lockstep-cs', 'lockstep-p2p', 'frame-advance'])(
    '--mode %s runs host, bot guest and spectator through the session over the relay, and they agree on every frame',
    async (mode) => {
      const io = memoryIo();
      const code = await runCli(['demo', '--mode', mode, '--seconds', '2', '--seed', '11'], io);
      const out = io.stdout.join('');
      expect(out).toMatch(/OK: all peers agree\./);
      expect(code).toBe(ExitCode.Ok);
      expect(out).toContain(`${mode} over UDP via a relay`);
      expect(out).toContain('a spectator watches');
      const m = /State hash \(CRC-32\) at frame (\d+)/.exec(out);
      const frame = Number(m![1]);
      expect(frame).toBeGreaterThan(30);
      // The lockstep stats line for both players, and the spectator's frame.
      expect(out).toMatch(/host +P1 frame +\d+ +input latency/);
      expect(out).toMatch(/guest +P2 frame +\d+ +input latency/);
      expect(out).toMatch(/spectator +frame +\d+/);
      // Every frame is compared, not a sample: the guest's and the spectator's frames from their
      // first to the common last one, each against the host's.
      const c = /(\d+) earlier final states compared with host's: 0 differ\./.exec(out);
      expect(c).not.toBeNull();
      expect(Number(c![1])).toBeGreaterThan(frame * 0.8);
    },
  );

  it('lockstep finals hold the state after every frame each peer ran, with no gap', async () => {
    const io = memoryIo();
    const options = { mode: 'frame-advance', seconds: 1, seed: 5, latencyMs: 20, jitterMs: 5, loss: 0.02 } as const;
    const result = await runDemo(options, io);
    expect(result.agreement.agree).toBe(true);
    expect(result.finals.map((f) => f.name)).toEqual(['host', 'guest', 'spectator']);
    for (const peer of result.finals) {
      const frames = [...peer.hashes.keys()].sort((a, b) => a - b);
      expect(frames.length).toBeGreaterThan(60);
      expect(frames[frames.length - 1]! - frames[0]! + 1).toBe(frames.length);
      expect(peer.last).toBe(frames[frames.length - 1]);
    }
    expect(result.agreement.compared).toBeGreaterThanOrEqual(result.agreement.frame - 1);
    expect(result.rollbacks).toEqual([0, 0]);
  });

  it('bad options exit Usage', async () => {
    expect(await runCli(['demo', '--mode', 'teleport'], memoryIo())).toBe(ExitCode.Usage);
    expect(await runCli(['demo', '--seconds', '0'], memoryIo())).toBe(ExitCode.Usage);
    expect(await runCli(['demo', '--jitter', '50', '--latency', '40'], memoryIo())).toBe(ExitCode.Usage);
    expect(await runCli(['demo', '--mode', 'frame-advance', '--interactive'], memoryIo())).toBe(ExitCode.Usage);
  });

  it.each(['rollback', 'lockstep-p2p'])(
    '--mode %s --interactive: with a terminal, key presses are taken, Q ends the demo early and raw mode is restored',
    async (mode) => {
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
      const run = runCli(['demo', '--mode', mode, '--interactive', '--seconds', '60'], io, { demo: { stdin } });
      let settled = false;
      void run.finally(() => {
        settled = true;
      });
      // Stops waiting if the demo ends before it reads the keyboard (a failed join), so that failure shows.
      while (feed === undefined && !settled) await new Promise((r) => setTimeout(r, 20));
      expect(feed, io.stderr.join('')).toBeDefined();
      if (feed === undefined) return;
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
    },
  );
});

import { type RejoinTarget, SessionError } from '@netplay/session';
import { ManualClock } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { CliError, ExitCode } from '../src/exit-codes.js';
import { isConnectionLoss, RejoinTargets, rejoinLoop } from '../src/rejoin.js';

// The logic `netplay join` uses to come back after a hand-over (src/rejoin.ts), on a ManualClock:
// which ends are a lost connection, which failures are tried again, the rounds' pacing and bound,
// and the order of the hosts tried. The real processes are tested in handover-rejoin.test.ts.

const target = (host: string, slot = 2): RejoinTarget => ({
  host,
  address: `127.0.0.1:${4000 + host.length}`,
  slot,
  token: new Uint8Array(8),
});

/** Settles `p`, advancing the clock 100 ms whenever nothing else is left to run. */
async function drive<T>(clock: ManualClock, p: Promise<T>): Promise<T> {
  let done = false;
  p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let i = 0; i < 10_000 && !done; i++) {
    await new Promise((r) => setImmediate(r));
    if (!done) clock.advance(100);
  }
  return p;
}

describe('rejoinLoop', () => {
  it('tries again every interval until admitted', async () => {
    const clock = new ManualClock();
    const at: number[] = [];
    const said: string[] = [];
    const r = await drive(
      clock,
      rejoinLoop({
        targets: [target('ann')],
        attempt: async () => {
          at.push(clock.now());
          if (at.length < 4) throw new SessionError('closed', 'closed: not taking links');
          return 'in';
        },
        clock,
        windowMs: 10_000,
        intervalMs: 1000,
        say: (l) => said.push(l),
      }),
    );
    expect(r.value).toBe('in');
    expect(r.target.host).toBe('ann');
    expect(at).toEqual([0, 1000, 2000, 3000]);
    expect(said).toHaveLength(3);
    expect(said[0]).toMatch(
      /rejoin attempt 1 failed \(connection closed: closed: not taking links\); trying again in 1 s/,
    );
  });

  it('gives up once the window has passed: PeerLost naming the host, the slot and the last failure', async () => {
    const clock = new ManualClock();
    const at: number[] = [];
    const p = drive(
      clock,
      rejoinLoop({
        targets: [target('ann', 3)],
        attempt: async () => {
          at.push(clock.now());
          throw new CliError(ExitCode.Network, 'cannot reach 127.0.0.1:4003');
        },
        clock,
        windowMs: 10_000,
        intervalMs: 1000,
        say: () => {},
      }),
    );
    const e = await p.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode).toBe(ExitCode.PeerLost);
    expect((e as CliError).message).toMatch(
      /could not get back in at ann \(127\.0\.0\.1:4003\) as P4 after 11 attempts/,
    );
    expect((e as CliError).message).toMatch(/cannot reach/);
    expect(at[0]).toBe(0);
    expect(at.at(-1)).toBeLessThanOrEqual(10_000);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBe(1000);
  });

  it('a refusal ends the tries at once', async () => {
    const clock = new ManualClock();
    let n = 0;
    const e = await drive(
      clock,
      rejoinLoop({
        targets: [target('ann')],
        attempt: async () => {
          n++;
          throw new SessionError('bad-password', 'wrong rejoin token: bob did not hold slot 2 with this host');
        },
        clock,
        windowMs: 10_000,
        intervalMs: 1000,
        say: () => {},
      }),
    ).catch((x: unknown) => x);
    expect(n).toBe(1);
    expect((e as CliError).exitCode).toBe(ExitCode.PeerLost);
    expect((e as CliError).message).toMatch(/password refused: wrong rejoin token/);
  });

  it('tries every host followed in a round, latest first; the person quitting stops it', async () => {
    const clock = new ManualClock();
    const tried: string[] = [];
    const r = await drive(
      clock,
      rejoinLoop({
        targets: [target('cy'), target('ann')],
        attempt: async (t) => {
          tried.push(t.host);
          if (t.host === 'cy') throw new SessionError('closed', 'closed: not taking links');
          return t.host;
        },
        clock,
        windowMs: 10_000,
        intervalMs: 1000,
        say: () => {
          throw new Error('no retry line within one round');
        },
      }),
    );
    expect(tried).toEqual(['cy', 'ann']);
    expect(r.value).toBe('ann');
    expect(clock.now()).toBe(0);

    let n = 0;
    const e = await drive(
      clock,
      rejoinLoop({
        targets: [target('ann')],
        attempt: async () => {
          n++;
          throw new SessionError('timeout', 'handshake timed out');
        },
        clock,
        windowMs: 10_000,
        intervalMs: 1000,
        say: () => {},
        quit: () => true,
      }),
    ).catch((x: unknown) => x);
    expect(n).toBe(1);
    expect((e as CliError).exitCode).toBe(ExitCode.PeerLost);
  });
});

describe('RejoinTargets and isConnectionLoss', () => {
  it('keeps every host followed once, latest first', () => {
    const t = new RejoinTargets();
    t.note(undefined);
    t.note(target('bob'));
    t.note(target('cy'));
    t.note({ ...target('bob'), address: '127.0.0.1:9' });
    expect(t.all.map((x) => [x.host, x.address])).toEqual([
      ['bob', '127.0.0.1:9'],
      ['cy', '127.0.0.1:4002'],
    ]);
  });

  it('a lost connection or a game ended by the finality rule is a loss; a refusal is not', () => {
    for (const code of ['closed', 'timeout', 'host-lost', 'partitioned', 'removed'] as const)
      expect(isConnectionLoss(new SessionError(code, 'x')), code).toBe(true);
    for (const code of ['bad-password', 'server-full', 'flood', 'unsupported-mode', 'version-mismatch'] as const)
      expect(isConnectionLoss(new SessionError(code, 'x')), code).toBe(false);
  });
});

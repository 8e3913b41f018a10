import { parseArgs } from 'node:util';
import { NetplayClient, NetplayHost } from '@netplay/session';
import { type Clock, Prng, systemClock } from '@netplay/transport';
import { UdpRelay } from '@netplay/transport-udp/relay';
import { type Agreement, checkAgreement, FinalStates, formatAgreement } from '../agreement.js';
import { choiceOption, intOption, numberOption, usageErrors } from '../args.js';
import { RacerBot } from '../bot.js';
import { chip8Content } from '../content.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import type { RawInput } from '../keyboard.js';
import { connectSession, listenSession } from '../net.js';
import { FRAME_MS, inputSource, paceFrames } from '../play.js';
import { drawScreen, redraw, statsLine } from '../render.js';
import { makeCore, readRom, SPACE_RACER_URL } from '../rom.js';
import { sessionFailure } from '../session-errors.js';
import { runLockstepDemo } from './demo-lockstep.js';

/** Scheduler modes named by the issue; the demo runs `rollback` so far. */
export const DEMO_MODES = ['rollback', 'lockstep-cs', 'lockstep-p2p', 'frame-advance'] as const;

/** Usage text of `netplay demo`. */
export const DEMO_USAGE = `netplay demo [--seconds N] [--mode M] [--interactive] [--seed N] [--latency MS --jitter MS --loss F]

Starts a host and two more peers on loopback over UDP, through a seeded impairment relay
(default 40 ms ± 10 ms one way, 2 % loss): the host and a guest are bots racing in Space Racer
(CHIP-8, CC0) with rollback, and a spectator watches. Shows the host's screen and every peer's
stats live, then checks that every peer holds the same state hash at the last frame final on all
of them (exit 0), or not (exit 1).
  --seconds N   seconds of play (default 20)
  --interactive you play the host's side (P1) from the keyboard: W/S or arrows, Q to stop early
  --mode M      rollback (default), or lockstep-cs, lockstep-p2p, frame-advance (two bots, no spectator)
  --seed N      seed of the relay's impairment and the bots (default 2024)
  --latency MS  mean one-way latency (default 40), --jitter MS ± (default 10), --loss F (default 0.02)`;

/** Frames run after the timed part, with no input, so every peer's final frame catches up. */
const DRAIN_FRAMES = 90;

/** In-process hooks for tests. */
export interface DemoDeps {
  /** The clock given to the sessions and transports (default the system clock). */
  readonly clock?: Clock;
  /** The keyboard for `--interactive` (main.ts passes process.stdin when it is a terminal). */
  readonly stdin?: RawInput;
}

/** Options of {@link runDemo}. */
export interface DemoOptions {
  readonly seconds: number;
  readonly seed: number;
  readonly latencyMs: number;
  readonly jitterMs: number;
  readonly loss: number;
  /** The host's player reads the keyboard instead of being a bot. */
  readonly interactive?: boolean;
}

/** What a demo run ended with. */
export interface DemoResult {
  /** The agreement check over the host, the guest and the spectator. */
  readonly agreement: Agreement;
  /** Frames the host simulated. */
  readonly frames: number;
  /** Rollbacks of the host and the guest. */
  readonly rollbacks: readonly number[];
}

/** `netplay demo`. Returns the exit code (peers disagree: `CheckFailed`). */
export async function demoCommand(argv: string[], io: CliIo, deps: DemoDeps = {}): Promise<ExitCodeValue> {
  const { values } = usageErrors(() =>
    parseArgs({
      args: argv,
      options: {
        seconds: { type: 'string' },
        mode: { type: 'string' },
        seed: { type: 'string' },
        latency: { type: 'string' },
        jitter: { type: 'string' },
        loss: { type: 'string' },
        interactive: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }),
  );
  if (values.help) {
    io.out(`${DEMO_USAGE}\n`);
    return ExitCode.Ok;
  }
  const mode = choiceOption('mode', values.mode, DEMO_MODES, 'rollback');
  const latencyMs = numberOption('latency', values.latency, 40, 0, 1000);
  const jitterMs = numberOption('jitter', values.jitter, 10, 0, latencyMs);
  const options: DemoOptions = {
    seconds: numberOption('seconds', values.seconds, 20, 1, 3600),
    seed: intOption('seed', values.seed, 2024, 0, 2 ** 31),
    latencyMs,
    jitterMs,
    loss: numberOption('loss', values.loss, 0.02, 0, 0.5),
    interactive: values.interactive === true,
  };
  if (options.interactive && mode !== 'rollback')
    throw new CliError(ExitCode.Usage, '--interactive works with --mode rollback only (so far)');
  if (options.interactive && deps.stdin === undefined)
    throw new CliError(ExitCode.Usage, '--interactive needs a terminal (stdin is not a TTY)');
  const result =
    mode === 'rollback' ? await runDemo(options, io, deps) : await runLockstepDemo(mode, options, io, deps);
  io.out(`\n${formatAgreement(result.agreement)}\n`);
  return result.agreement.agree ? ExitCode.Ok : ExitCode.CheckFailed;
}

/**
 * Runs the demo: a @netplay/session host on a UDP listener, the impairment relay in front of it,
 * and a guest and a spectator joining through the relay with the session handshake (version, nick,
 * INFO, SYNC), then `seconds` of bot play paced to real time, then a short drain with no input so
 * every peer's final frame catches up.
 */
export async function runDemo(options: DemoOptions, io: CliIo, deps: DemoDeps = {}): Promise<DemoResult> {
  const clock = deps.clock ?? systemClock;
  const rom = await readRom(SPACE_RACER_URL);
  const content = chip8Content(rom);
  const newCore = () => makeCore(rom, 'Space Racer', { ports: 2 });
  const closers: (() => unknown)[] = [];
  /** Sockets closed last, once the peers' close messages went through the relay. */
  const sockets: (() => unknown)[] = [];
  try {
    const hostCore = newCore();
    const host = new NetplayHost({
      core: hostCore,
      content,
      clock,
      nick: 'host',
      players: 2,
      randomU32: seeded(options.seed),
    });
    closers.push(() => host.close('closed: the demo is over'));
    const bound = await listenSession('udp', '127.0.0.1', 0, clock);
    sockets.push(() => bound.listener.close('closed: the demo is over'));
    host.listen(bound.listener);
    host.on('peer-refused', ({ error }) => io.err(`demo: a peer was refused: ${error.message}\n`));
    const relay = await UdpRelay.start({
      targetHost: '127.0.0.1',
      targetPort: bound.port,
      seed: options.seed,
      impairment: {
        latencyMs: options.latencyMs - options.jitterMs,
        jitterMs: 2 * options.jitterMs,
        loss: options.loss,
      },
    });
    sockets.push(() => relay.close());
    const join = async (nick: string, spectate: boolean): Promise<NetplayClient> => {
      const conn = await connectSession('udp', relay.host, relay.port, clock);
      const client = new NetplayClient(conn, { core: newCore(), content, clock, nick, spectate });
      closers.push(() => client.close('closed: the demo is over'));
      // The host only starts once every player slot is filled: tick it while the guest joins.
      const timer = setInterval(() => host.tick(idle), FRAME_MS);
      try {
        await client.joined();
      } catch (e) {
        throw sessionFailure(e);
      } finally {
        clearInterval(timer);
      }
      return client;
    };
    const idle = new Uint8Array(2);
    const guest = await join('guest', false);
    const spectator = await join('spectator', true);
    const hostBot = new RacerBot(options.seed + 17);
    const guestBot = new RacerBot(options.seed + 34);
    const keyboard = options.interactive && deps.stdin ? inputSource({ stdin: deps.stdin }, clock) : undefined;
    closers.push(() => keyboard?.close());
    const finals = [new FinalStates('host'), new FinalStates('guest'), new FinalStates('spectator')] as const;
    for (const s of [host.rollback, guest.rollback])
      s?.on('desync-detected', ({ frame }) => io.err(`desync detected at frame ${frame}\n`));

    const tick = (botsPlay: boolean, now: number) => {
      host.tick(botsPlay ? (keyboard ? keyboard.next(now) : hostBot.next()) : idle);
      guest.tick(botsPlay ? guestBot.next() : idle);
      spectator.tick();
      const hs = host.rollback;
      const hd = host.driver;
      if (hs && hd) finals[0].record(Math.min(hs.confirmedFrame, hs.currentFrame), (f) => hd.stateOf(f));
      const gs = guest.rollback;
      const gd = guest.driver;
      if (gs && gd) finals[1].record(Math.min(gs.confirmedFrame, gs.currentFrame), (f) => gd.stateOf(f));
      const sd = spectator.driver;
      if (sd && spectator.frame !== undefined) finals[2].record(spectator.frame, (f) => sd.stateOf(f));
    };
    const header = () =>
      `netplay demo: Space Racer, rollback over UDP via a relay (${options.latencyMs} ± ${options.jitterMs} ms, ` +
      `${(options.loss * 100).toFixed(1)} % loss, seed ${options.seed}); ${options.interactive ? 'you play P1 (W/S), a bot plays P2' : 'host and guest are bots'}, a spectator watches`;
    const draw = (t: number) => {
      const lines = [header(), `t = ${t.toFixed(1)} s   host's screen:`, drawScreen(hostCore.framebuffer())];
      if (host.rollback) lines.push(statsLine('host', host.rollback, 0));
      if (guest.rollback) lines.push(statsLine('guest', guest.rollback, 1));
      lines.push(
        `${'spectator'.padEnd(10)}    frame ${String(spectator.frame ?? '-').padStart(5)}  (confirmed inputs only)`,
      );
      io.out(io.live ? redraw(lines) : `${lines.join('\n')}\n\n`);
    };

    const frames = Math.round((options.seconds * 1000) / FRAME_MS);
    const snapshotEvery = Math.round(5000 / FRAME_MS);
    const start = clock.now();
    let f = 0;
    await paceFrames(clock, undefined, (now) => {
      if ((io.signal?.aborted || keyboard?.quit) && f < frames) f = frames;
      if (f >= frames + DRAIN_FRAMES) return false;
      tick(f < frames, now);
      if (io.live ? f % 2 === 0 : f % snapshotEvery === 0 && f < frames) draw((now - start) / 1000);
      f++;
      return true;
    });
    draw((clock.now() - start) / 1000);
    return {
      agreement: checkAgreement(finals),
      frames: host.frame,
      rollbacks: [host.stats?.rollbacks ?? 0, guest.stats?.rollbacks ?? 0],
    };
  } finally {
    for (const close of closers.reverse()) await close();
    await new Promise<void>((resolve) => clock.setTimer(sockets.length > 0 ? 300 : 0, resolve));
    for (const close of sockets.reverse()) await close();
  }
}

/** A seeded u32 source for the host's password salts (the demo has no password; keeps runs reproducible). */
function seeded(seed: number): () => number {
  const prng = new Prng(seed ^ 0x5a17);
  return () => prng.nextU32();
}

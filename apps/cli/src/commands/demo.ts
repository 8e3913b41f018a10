import { parseArgs } from 'node:util';
import { NetplayClient, NetplayHost, SESSION_MODES, type SessionMode } from '@netplay/session';
import type { Core } from '@netplay/state';
import { type Clock, Prng, systemClock } from '@netplay/transport';
import { UdpRelay } from '@netplay/transport-udp/relay';
import { type Agreement, checkAgreement, FinalStates, formatAgreement, LockstepFinals } from '../agreement.js';
import { choiceOption, intOption, numberOption, usageErrors } from '../args.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { type Game, type GameSpec, openGame } from '../game.js';
import type { CliIo } from '../io.js';
import type { RawInput } from '../keyboard.js';
import { connectSession, listenSession } from '../net.js';
import { FRAME_MS, inputSource, paceFrames } from '../play.js';
import { lockstepStatsLine, redraw, statsLine } from '../render.js';
import { SPACE_RACER_URL } from '../rom.js';
import { sessionFailure } from '../session-errors.js';

/** The scheduler modes the demo runs: every @netplay/session mode. */
export const DEMO_MODES: readonly SessionMode[] = SESSION_MODES;

/** Usage text of `netplay demo`. */
export const DEMO_USAGE = `netplay demo [--seconds N] [--mode M] [--interactive] [--seed N] [--latency MS --jitter MS --loss F]
                [--core NAME|PATH --rom FILE]

Starts a @netplay/session host and a bot guest on loopback over UDP, through a seeded impairment
relay (default 40 ms ± 10 ms one way, 2 % loss), plus a spectator: host and guest are
bots racing in Space Racer (CHIP-8, CC0). Shows the host's screen and every peer's stats live, then
checks that every peer holds the same state hash at the last frame final on all of them (exit 0),
or not (exit 1).
  --seconds N   seconds of play (default 20)
  --interactive you play the host's side (P1) from the keyboard: W/S or arrows, Q to stop early
  --mode M      rollback (default), or lockstep-cs, lockstep-p2p, frame-advance
  --seed N      seed of the relay's impairment and the bots (default 2024)
  --latency MS  mean one-way latency (default 40), --jitter MS ± (default 10), --loss F (default 0.02)
  --core C --rom FILE  play FILE on a libretro core (a name in Debian's libretro folder, or a path)
                instead of Space Racer: every peer loads its own copy and starts from the host's state`;

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
  /** The scheduler the host runs (default `rollback`). */
  readonly mode?: SessionMode;
  readonly seconds: number;
  readonly seed: number;
  readonly latencyMs: number;
  readonly jitterMs: number;
  readonly loss: number;
  /** The host's player reads the keyboard instead of being a bot. */
  readonly interactive?: boolean;
  /** The game (default Space Racer on CHIP-8). */
  readonly game?: GameSpec;
}

/** What a demo run ended with. */
export interface DemoResult {
  /** The agreement check over the host, the guest and the spectator. */
  readonly agreement: Agreement;
  /**
   * Each peer's final-state hashes (host, guest, then the spectator), keyed by the
   * core's frame counter: rollback records every frame as it becomes final; the lockstep modes
   * record the state after every frame the peer ran (lockstep frames are final when they run).
   */
  readonly finals: readonly FinalStates[];
  /** Frames the host simulated. */
  readonly frames: number;
  /** Rollbacks of the host and the guest (0 in the lockstep modes, which never roll back). */
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
        core: { type: 'string' },
        rom: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }),
  );
  if (values.help) {
    io.out(`${DEMO_USAGE}\n`);
    return ExitCode.Ok;
  }
  const latencyMs = numberOption('latency', values.latency, 40, 0, 1000);
  const jitterMs = numberOption('jitter', values.jitter, 10, 0, latencyMs);
  const options: DemoOptions = {
    mode: choiceOption('mode', values.mode, DEMO_MODES, 'rollback'),
    seconds: numberOption('seconds', values.seconds, 20, 1, 3600),
    seed: intOption('seed', values.seed, 2024, 0, 2 ** 31),
    latencyMs,
    jitterMs,
    loss: numberOption('loss', values.loss, 0.02, 0, 0.5),
    interactive: values.interactive === true,
    game: {
      ...(values.core !== undefined ? { core: values.core } : {}),
      ...(values.rom !== undefined ? { rom: values.rom } : {}),
    },
  };
  if (options.interactive && deps.stdin === undefined)
    throw new CliError(ExitCode.Usage, '--interactive needs a terminal (stdin is not a TTY)');
  const result = await runDemo(options, io, deps);
  io.out(`\n${formatAgreement(result.agreement)}\n`);
  return result.agreement.agree ? ExitCode.Ok : ExitCode.CheckFailed;
}

/**
 * Runs the demo in any mode, one code path: a @netplay/session `NetplayHost` running `mode` on a
 * UDP listener, the impairment relay in front of it, and a guest and a spectator
 * joining through the relay with the session handshake (version, nick, INFO, SYNC), then `seconds`
 * of bot play paced to real time, then a short drain with no input so every peer's final frame
 * catches up. The P2P lockstep modes run relayed through the host, as the session runs them.
 */
export async function runDemo(options: DemoOptions, io: CliIo, deps: DemoDeps = {}): Promise<DemoResult> {
  const mode = options.mode ?? 'rollback';
  const rollback = mode === 'rollback';
  const clock = deps.clock ?? systemClock;
  const closers: (() => unknown)[] = [];
  /** Each peer's own game (libretro: its own private copy of the core; the first is probed in a child process). */
  let probed = false;
  const newGame = async (): Promise<Game> => {
    const g = await openGame(options.game ?? {}, 2, SPACE_RACER_URL, io, !probed);
    probed = true;
    closers.unshift(() => g.close());
    return g;
  };
  /** Sockets closed last, once the peers' close messages went through the relay. */
  const sockets: (() => unknown)[] = [];
  try {
    const hostGame = await newGame();
    const hostCore = hostGame.core;
    const content = hostGame.content;
    let host: NetplayHost;
    try {
      host = new NetplayHost({
        core: hostCore,
        content,
        clock,
        mode,
        nick: 'host',
        players: 2,
        randomU32: seeded(options.seed ^ 0x5a17),
      });
    } catch (e) {
      throw sessionFailure(e);
    }
    closers.push(() => host.close('closed: the demo is over'));
    const finals: FinalStates[] = [new FinalStates('host')];
    // Lockstep: the host's `frame` event fires after each frame ran on its core; `final` once it is final.
    closers.push(...everyFinalFrame(host, finals[0]!, hostCore));
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
    const idle = new Uint8Array(2);
    const join = async (nick: string, spectate: boolean, seed: number) => {
      const conn = await connectSession('udp', relay.host, relay.port, clock);
      const core = (await newGame()).core;
      const client = new NetplayClient(conn, {
        core,
        content,
        clock,
        nick,
        spectate,
        randomU32: seeded(seed),
      });
      closers.push(() => client.close('closed: the demo is over'));
      const peerFinals = new FinalStates(nick);
      finals.push(peerFinals);
      closers.push(...everyFinalFrame(client, peerFinals, core));
      // The host only starts once every player slot is filled: tick it while the guest joins.
      const timer = setInterval(() => host.tick(idle), FRAME_MS);
      try {
        await client.joined();
      } catch (e) {
        throw sessionFailure(e);
      } finally {
        clearInterval(timer);
      }
      return { client, finals: peerFinals };
    };
    const guest = await join('guest', false, options.seed ^ 0x6b28);
    // Rollback: the spectator's scheduler syncs it from the host's savestate; lockstep: it watches the
    // host's frames (its `frame` and `final` events record its finals like the players').
    const spectator = await join('spectator', true, options.seed ^ 0x7c39);
    const hostBot = hostGame.bot(options.seed + 17);
    const guestBot = hostGame.bot(options.seed + 34);
    const keyboard =
      options.interactive && deps.stdin ? inputSource({ stdin: deps.stdin }, clock, hostGame.padInput) : undefined;
    closers.push(() => keyboard?.close());
    for (const s of [host.rollback, guest.client.rollback])
      s?.on('desync-detected', ({ frame }) => io.err(`desync detected at frame ${frame}\n`));

    /** Rollback: records the frames that became final (lockstep records in its `frame` events). */
    const recordFinal = () => {
      const hs = host.rollback;
      const hd = host.driver;
      if (hs && hd) finals[0]!.record(Math.min(hs.confirmedFrame, hs.currentFrame), (f) => hd.stateOf(f));
      const gs = guest.client.rollback;
      const gd = guest.client.driver;
      if (gs && gd) guest.finals.record(Math.min(gs.confirmedFrame, gs.currentFrame), (f) => gd.stateOf(f));
      const sd = spectator.client.driver;
      const sf = spectator.client.frame;
      if (sd && sf !== undefined) spectator.finals.record(sf, (f) => sd.stateOf(f));
    };
    const tick = (botsPlay: boolean, now: number) => {
      host.tick(botsPlay ? (keyboard ? keyboard.next(now) : hostBot.next()) : idle);
      guest.client.tick(botsPlay ? guestBot.next() : idle);
      spectator.client.tick();
      if (rollback) recordFinal();
    };
    const who = options.interactive ? 'you play P1 (W/S), a bot plays P2' : 'host and guest are bots';
    const header =
      `netplay demo: ${hostGame.title}, ${mode} over UDP via a relay (${options.latencyMs} ± ${options.jitterMs} ms, ` +
      `${(options.loss * 100).toFixed(1)} % loss, seed ${options.seed}); ${who}, a spectator watches`;
    const peerLine = (name: string, peer: NetplayHost | NetplayClient, player: number) => {
      const s = peer.rollback;
      if (s !== undefined) return statsLine(name, s, player);
      const r = peer.lockstepReport();
      return r !== undefined ? lockstepStatsLine(name, r, player) : `${name.padEnd(10)} P${player + 1} not started`;
    };
    const draw = (t: number) => {
      const lines = [header, `t = ${t.toFixed(1)} s   host's screen:`, hostGame.screen() ?? ''];
      lines.push(peerLine('host', host, 0), peerLine('guest', guest.client, 1));
      lines.push(
        `${'spectator'.padEnd(10)}    frame ${String(spectator.client.frame ?? '-').padStart(5)}  (confirmed inputs only)`,
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
      finals,
      frames: host.frame,
      rollbacks: [host.stats?.rollbacks ?? 0, guest.client.stats?.rollbacks ?? 0],
    };
  } finally {
    for (const close of closers.reverse()) await close();
    await new Promise<void>((resolve) => clock.setTimer(sockets.length > 0 ? 300 : 0, resolve));
    for (const close of sockets.reverse()) await close();
  }
}

/**
 * Lockstep modes: records the CRC-32 of the core's state after each frame (the session's `frame`
 * event, keyed by the core's frame counter as the finals files key it) once the session reports that
 * frame final (`final`: a P2P client's frames wait for the host's progress). Returns the unsubscribes.
 */
function everyFinalFrame(peer: NetplayHost | NetplayClient, finals: FinalStates, core: Core): Array<() => void> {
  const recorder = new LockstepFinals(finals, core);
  const ran = ({ frame }: { readonly frame: number }) => recorder.ran(frame);
  const final = ({ frame }: { readonly frame: number }) => recorder.final(frame);
  return peer instanceof NetplayHost
    ? [peer.on('frame', ran), peer.on('final', final)]
    : [peer.on('frame', ran), peer.on('final', final)];
}

/** A seeded u32 source (the host's salts and lockstep-cs magic, frame-advance's event-order seed): reproducible runs. */
function seeded(seed: number): () => number {
  const prng = new Prng(seed);
  return () => prng.nextU32();
}

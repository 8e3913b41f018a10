import { parseArgs } from 'node:util';
import type { Chip8Core } from '@netplay/core-wasm';
import { ConnectionSet, CoreDriver, P2PSession, ROLLBACK_CHANNELS, SpectatorSession } from '@netplay/rollback';
import { type Clock, type Connection, systemClock } from '@netplay/transport';
import { connectUdp, listenUdp, type UdpListener } from '@netplay/transport-udp';
import { UdpRelay } from '@netplay/transport-udp/relay';
import { type Agreement, checkAgreement, FinalStates, formatAgreement } from '../agreement.js';
import { choiceOption, intOption, numberOption, usageErrors } from '../args.js';
import { RacerBot } from '../bot.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import type { RawInput } from '../keyboard.js';
import { inputSource } from '../play.js';
import { CLEAR, drawScreen, statsLine } from '../render.js';
import { makeCore, readRom, SPACE_RACER_URL } from '../rom.js';

/** Scheduler modes named by the issue; the demo runs `rollback` so far. */
export const DEMO_MODES = ['rollback', 'lockstep-cs', 'lockstep-p2p', 'frame-advance'] as const;

/** Usage text of `netplay demo`. */
export const DEMO_USAGE = `netplay demo [--seconds N] [--mode rollback] [--interactive] [--seed N] [--latency MS --jitter MS --loss F]

Starts a host and two more peers on loopback over UDP, through a seeded impairment relay
(default 40 ms ± 10 ms one way, 2 % loss): the host and a guest are bots racing in Space Racer
(CHIP-8, CC0) with rollback, and a spectator watches. Shows the host's screen and every peer's
stats live, then checks that every peer holds the same state hash at the last frame final on all
of them (exit 0), or not (exit 1).
  --seconds N   seconds of play (default 20)
  --interactive you play the host's side (P1) from the keyboard: W/S or arrows, Q to stop early
  --mode M      rollback (lockstep-cs, lockstep-p2p and frame-advance: not supported yet, exit 9)
  --seed N      seed of the relay's impairment and the bots (default 2024)
  --latency MS  mean one-way latency (default 40), --jitter MS ± (default 10), --loss F (default 0.02)`;

/** 60 frames per second. */
const FRAME_MS = 1000 / 60;
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
  if (mode !== 'rollback')
    throw new CliError(ExitCode.Unsupported, `--mode ${mode} is not supported by the demo yet (only rollback)`);
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
  if (options.interactive && deps.stdin === undefined)
    throw new CliError(ExitCode.Usage, '--interactive needs a terminal (stdin is not a TTY)');
  const result = await runDemo(options, io, deps);
  io.out(`\n${formatAgreement(result.agreement)}\n`);
  return result.agreement.agree ? ExitCode.Ok : ExitCode.CheckFailed;
}

interface Player {
  readonly name: string;
  readonly player: number;
  readonly core: Chip8Core;
  readonly session: P2PSession;
  readonly driver: CoreDriver;
  readonly conns: ConnectionSet;
  readonly bot: RacerBot;
  readonly finals: FinalStates;
  wait: number;
}

/**
 * Runs the demo: a UDP listener for the host, the impairment relay in front of it, a guest and a
 * spectator connecting through the relay, then `seconds` of bot play paced to real time.
 * The rollback sessions are wired to the UDP connections directly (no handshake).
 */
export async function runDemo(options: DemoOptions, io: CliIo, deps: DemoDeps = {}): Promise<DemoResult> {
  const clock = deps.clock ?? systemClock;
  const rom = await readRom(SPACE_RACER_URL);
  const newCore = () => makeCore(rom, 'Space Racer', { ports: 2 });
  const closers: (() => unknown)[] = [];
  try {
    let listener: UdpListener;
    try {
      listener = await listenUdp({ channels: ROLLBACK_CHANNELS, host: '127.0.0.1', port: 0, clock });
    } catch (e) {
      throw new CliError(ExitCode.Network, `cannot listen on loopback: ${(e as Error).message}`);
    }
    closers.push(() => listener.close('demo over'));
    const accepted: Connection[] = [];
    const waiting: ((c: Connection) => void)[] = [];
    listener.on('connection', (c) => {
      const w = waiting.shift();
      if (w) w(c);
      else accepted.push(c);
    });
    const nextAccepted = () =>
      new Promise<Connection>((resolve) => {
        const c = accepted.shift();
        if (c) resolve(c);
        else waiting.push(resolve);
      });
    const relay = await UdpRelay.start({
      targetHost: '127.0.0.1',
      targetPort: listener.port,
      seed: options.seed,
      impairment: {
        latencyMs: options.latencyMs - options.jitterMs,
        jitterMs: 2 * options.jitterMs,
        loss: options.loss,
      },
    });
    closers.push(() => relay.close());
    // Connect one at a time, so the host knows which accepted connection is which peer.
    const link = async (): Promise<{ client: Connection; server: Connection }> => {
      const server = nextAccepted();
      const client = await connectUdp({ channels: ROLLBACK_CHANNELS, host: relay.host, port: relay.port, clock });
      closers.push(() => client.close('demo over'));
      return { client, server: await server };
    };
    const guestLink = await link();
    const spectatorLink = await link();

    const names = ['host', 'guest'];
    const players: Player[] = names.map((name, player) => {
      const core = newCore();
      const conns = new ConnectionSet();
      let driver: CoreDriver | undefined;
      const session = new P2PSession({
        players: 2,
        inputBytes: core.inputBytes,
        localPlayer: player,
        remotes: names.flatMap((peer, p) => (p === player ? [] : [{ peer, player: p }])),
        isHost: player === 0,
        hostPeer: 'host',
        clock,
        send: conns.send,
        stateSource: (f) => driver?.stateOf(f),
      });
      driver = new CoreDriver(core, session.ringFrames);
      const p: Player = {
        name,
        player,
        core,
        session,
        driver,
        conns,
        bot: new RacerBot(options.seed + 17 * (player + 1)),
        finals: new FinalStates(name),
        wait: 0,
      };
      session.on('wait-recommended', ({ frames }) => {
        p.wait = frames;
      });
      session.on('desync-detected', ({ frame }) => io.err(`[${name}] desync detected at frame ${frame}\n`));
      return p;
    });
    const [host, guest] = players as [Player, Player];
    host.conns.bind('guest', guestLink.server, host.session);
    guest.conns.bind('host', guestLink.client, guest.session);

    const spectatorConns = new ConnectionSet();
    const spectatorSession = new SpectatorSession({ hostPeer: 'host', send: spectatorConns.send });
    const spectatorDriver = new CoreDriver(newCore(), spectatorSession.ringFrames);
    const spectatorFinals = new FinalStates('spectator');
    spectatorConns.bind('host', spectatorLink.client, spectatorSession);
    host.conns.bind('spectator', spectatorLink.server, host.session);

    const idle = new Uint8Array(2);
    const keyboard = options.interactive && deps.stdin ? inputSource({ stdin: deps.stdin }, clock) : undefined;
    closers.push(() => keyboard?.close());
    const hostInput = (now: number) => (keyboard ? keyboard.next(now) : host.bot.next());
    const tick = (botsPlay: boolean) => {
      for (const p of players) {
        const s = p.session;
        if (p.wait > 0) {
          p.wait--;
          s.poll();
        } else {
          s.addLocalInput(botsPlay ? (p === host ? hostInput(clock.now()) : p.bot.next()) : idle);
          p.driver.run(s.advanceFrame(), s);
        }
        p.finals.record(Math.min(s.confirmedFrame, s.currentFrame), (f) => p.driver.stateOf(f));
      }
      spectatorDriver.run(spectatorSession.advanceFrame(), spectatorSession);
      const cur = spectatorSession.currentFrame;
      if (cur !== undefined) spectatorFinals.record(cur, (f) => spectatorDriver.stateOf(f));
    };
    const header = () =>
      `netplay demo: Space Racer, rollback over UDP via a relay (${options.latencyMs} ± ${options.jitterMs} ms, ` +
      `${(options.loss * 100).toFixed(1)} % loss, seed ${options.seed}); ${options.interactive ? 'you play P1 (W/S), a bot plays P2' : 'host and guest are bots'}, a spectator watches`;
    const draw = (t: number) => {
      const lines = [
        header(),
        `t = ${t.toFixed(1)} s   host's screen:`,
        drawScreen(host.core.framebuffer()),
        statsLine('host', host.session, 0),
        statsLine('guest', guest.session, 1),
        `${'spectator'.padEnd(10)}    frame ${String(spectatorSession.currentFrame ?? '-').padStart(5)}  (confirmed inputs only)`,
      ];
      io.out(io.live ? `${CLEAR}${lines.join('\n')}\n` : `${lines.join('\n')}\n\n`);
    };

    const frames = Math.round((options.seconds * 1000) / FRAME_MS);
    const snapshotEvery = Math.round(5000 / FRAME_MS);
    const start = clock.now();
    let due = start;
    for (let f = 0; f < frames + DRAIN_FRAMES; f++) {
      if ((io.signal?.aborted || keyboard?.quit) && f < frames) f = frames;
      tick(f < frames);
      if (io.live ? f % 2 === 0 : f % snapshotEvery === 0 && f < frames) draw((clock.now() - start) / 1000);
      due += FRAME_MS;
      const now = clock.now();
      if (due < now - 100) due = now; // far behind (a busy machine): do not burst to catch up
      await sleep(clock, Math.max(0, due - now));
    }
    draw((clock.now() - start) / 1000);
    return {
      agreement: checkAgreement([host.finals, guest.finals, spectatorFinals]),
      frames: host.session.currentFrame,
      rollbacks: players.map((p) => p.session.stats.rollbacks),
    };
  } finally {
    for (const close of closers.reverse()) await close();
  }
}

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(ms, resolve));
}

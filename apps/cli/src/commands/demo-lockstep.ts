import type { Chip8Core } from '@netplay/core-wasm';
import {
  CLIENT_SERVER_CHANNELS,
  ClientServerClient,
  ClientServerServer,
  FRAME_ADVANCE_CHANNELS,
  FrameAdvancePeer,
  LockstepRunner,
  type LockstepScheduler,
  MESH_CHANNELS,
  MeshPeer,
} from '@netplay/lockstep';
import { crc32 } from '@netplay/protocol';
import { type Clock, type Connection, systemClock } from '@netplay/transport';
import { connectUdp, listenUdp } from '@netplay/transport-udp';
import { UdpRelay } from '@netplay/transport-udp/relay';
import { checkAgreement, FinalStates } from '../agreement.js';
import { RacerBot } from '../bot.js';
import { CliError, ExitCode } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import { FRAME_MS, paceFrames } from '../play.js';
import { drawScreen, lockstepStatsLine, redraw } from '../render.js';
import { makeCore, readRom, SPACE_RACER_URL } from '../rom.js';
import type { DemoOptions, DemoResult } from './demo.js';

/** The lockstep modes the demo runs. */
export type LockstepDemoMode = 'lockstep-cs' | 'lockstep-p2p' | 'frame-advance';

const DRAIN_MS = 1500;

/**
 * The demo on a lockstep scheduler: FCE Ultra's client-server (`lockstep-cs`), MAMEHub's mesh
 * (`lockstep-p2p`) or FS-UAE's frame-advance, two bot players (host and guest, no spectator: these schedulers have none),
 * connected over UDP through the relay; each peer hashes its state after every frame it runs
 * (lockstep frames are final when they run).
 */
export async function runLockstepDemo(
  mode: LockstepDemoMode,
  options: DemoOptions,
  io: CliIo,
  deps: { readonly clock?: Clock } = {},
): Promise<DemoResult> {
  const clock = deps.clock ?? systemClock;
  const rom = await readRom(SPACE_RACER_URL);
  const channels =
    mode === 'lockstep-cs' ? CLIENT_SERVER_CHANNELS : mode === 'lockstep-p2p' ? MESH_CHANNELS : FRAME_ADVANCE_CHANNELS;
  const closers: (() => unknown)[] = [];
  /** Sockets closed last, once the peers' close messages went through the relay. */
  const sockets: (() => unknown)[] = [];
  try {
    let listener: Awaited<ReturnType<typeof listenUdp>>;
    try {
      listener = await listenUdp({ channels, host: '127.0.0.1', port: 0, clock });
    } catch (e) {
      throw new CliError(ExitCode.Network, `cannot listen on loopback: ${(e as Error).message}`);
    }
    sockets.push(() => listener.close('demo over'));
    const accepted = new Promise<Connection>((resolve) => {
      const off = listener.on('connection', (c) => {
        off();
        resolve(c);
      });
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
    sockets.push(() => relay.close());
    const guestConn = await connectUdp({ channels, host: relay.host, port: relay.port, clock });
    closers.push(() => guestConn.close('demo over'));
    const hostConn = await accepted;

    const startMs = clock.now() + 200;
    const common = { ports: 2, inputBytes: 2, frameMs: FRAME_MS, startMs };
    let hostScheduler: LockstepScheduler;
    let guestScheduler: LockstepScheduler;
    let server: ClientServerServer | undefined;
    if (mode === 'lockstep-cs') {
      server = new ClientServerServer({ ...common, id: 0, port: 0 });
      hostScheduler = server;
      guestScheduler = new ClientServerClient({ ...common, id: 1, server: 0 });
    } else if (mode === 'lockstep-p2p') {
      const members = [
        { id: 0, port: 0 },
        { id: 1, port: 1 },
      ];
      hostScheduler = new MeshPeer({ ...common, id: 0, members });
      guestScheduler = new MeshPeer({ ...common, id: 1, members });
    } else {
      hostScheduler = new FrameAdvancePeer({ ...common, id: 0, port: 0, peers: [1], seed: options.seed });
      guestScheduler = new FrameAdvancePeer({ ...common, id: 1, port: 1, peers: [0], seed: options.seed });
    }
    const peer = (name: string, scheduler: LockstepScheduler, core: Chip8Core) => {
      const finals = new FinalStates(name);
      const runner = new LockstepRunner({
        clock,
        scheduler,
        core,
        onFrame: (req) => {
          finals.hashes.set(req.frame + 1, crc32(core.save()));
          finals.last = req.frame + 1;
        },
      });
      closers.push(() => runner.stop());
      return { name, core, runner, finals };
    };
    const host = peer('host', hostScheduler, makeCore(rom, 'Space Racer', { ports: 2 }));
    const guest = peer('guest', guestScheduler, makeCore(rom, 'Space Racer', { ports: 2 }));
    host.runner.addPeer(1, hostConn);
    guest.runner.addPeer(0, guestConn);
    server?.addClient(1, 1);
    host.runner.pump();

    const bots = [new RacerBot(options.seed + 17), new RacerBot(options.seed + 34)];
    const idle = new Uint8Array(2);
    const stats = (p: typeof host, player: number) => lockstepStatsLine(p.name, p.runner.report(), player);
    const draw = (t: number) => {
      const lines = [
        `netplay demo: Space Racer, ${mode} over UDP via a relay (${options.latencyMs} ± ${options.jitterMs} ms, ` +
          `${(options.loss * 100).toFixed(1)} % loss, seed ${options.seed}); two bots`,
        `t = ${t.toFixed(1)} s   host's screen:`,
        drawScreen(host.core.framebuffer()),
        stats(host, 0),
        stats(guest, 1),
      ];
      io.out(io.live ? redraw(lines) : `${lines.join('\n')}\n\n`);
    };
    const playMs = options.seconds * 1000;
    const start = clock.now();
    let f = 0;
    let stopAt = start + playMs;
    await paceFrames(clock, undefined, (now) => {
      if (io.signal?.aborted && stopAt > now) stopAt = now;
      if (now >= stopAt + DRAIN_MS) return false;
      const play = now < stopAt;
      host.runner.setLocalInput(play ? bots[0]!.next() : idle);
      guest.runner.setLocalInput(play ? bots[1]!.next() : idle);
      if (io.live ? f % 2 === 0 : f % 300 === 0 && play) draw((now - start) / 1000);
      f++;
      return true;
    });
    draw((clock.now() - start) / 1000);
    return {
      agreement: checkAgreement([host.finals, guest.finals]),
      frames: host.runner.framesRun,
      rollbacks: [0, 0],
    };
  } finally {
    for (const close of closers.reverse()) await close();
    await new Promise<void>((resolve) => clock.setTimer(sockets.length > 0 ? 300 : 0, resolve));
    for (const close of sockets.reverse()) await close();
  }
}

import { createServer, type Server } from 'node:http';
import { parseArgs } from 'node:util';
import { type Clock, systemClock } from '@netplay/transport';
import { listenSignaling, type SignalingServer } from '@netplay/transport-webrtc/server';
import { friendAddresses, hostPort } from '../addresses.js';
import { intOption, numberOption, usageErrors } from '../args.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import { isAddressInUse } from '../net.js';

/** The default port of `netplay signal`. */
export const DEFAULT_SIGNAL_PORT = 8787;

/** Usage text of `netplay signal`. */
export const SIGNAL_USAGE = `netplay signal [--port N] [--bind ADDRESS] [--seconds N]

Runs a WebRTC signaling server (@netplay/transport-webrtc/server): it introduces the peers of a room
("netplay host/join --transport webrtc --signal ws://THIS-MACHINE:PORT", or a browser page) and never
sees game data. Runs until Ctrl-C.
  --port N        port (default ${DEFAULT_SIGNAL_PORT}; 0 picks a free one)
  --bind ADDRESS  address to listen on (default 0.0.0.0: reachable by others; 127.0.0.1: this machine only)
  --seconds N     stop after N seconds`;

/** In-process hooks for tests. */
export interface SignalDeps {
  readonly clock?: Clock;
  /** Called once the server listens, with its URL (on the bound address) and port. */
  readonly onListening?: (url: string, port: number) => void;
}

/** `netplay signal`. */
export async function signalCommand(argv: string[], io: CliIo, deps: SignalDeps = {}): Promise<ExitCodeValue> {
  const { values } = usageErrors(() =>
    parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        bind: { type: 'string' },
        seconds: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }),
  );
  if (values.help) {
    io.out(`${SIGNAL_USAGE}\n`);
    return ExitCode.Ok;
  }
  const port = intOption('port', values.port, DEFAULT_SIGNAL_PORT, 0, 65535);
  const bind = values.bind ?? '0.0.0.0';
  const seconds = values.seconds === undefined ? undefined : numberOption('seconds', values.seconds, 0, 0.1, 1e6);
  const clock = deps.clock ?? systemClock;
  // Our own HTTP server, listening before the signaling server attaches to it: listenSignaling's
  // own server re-emits a listen error (EADDRINUSE) on its WebSocketServer, where nothing handles it.
  const http = createServer((_req, res) => {
    res.writeHead(426, { 'Content-Type': 'text/plain', Connection: 'close' });
    res.end('Upgrade Required: this is a netplay WebRTC signaling server (WebSocket)');
  });
  try {
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, bind, () => {
        http.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    http.close();
    if (isAddressInUse(e)) throw new CliError(ExitCode.Network, `port ${port} is busy (EADDRINUSE): try --port`);
    throw new CliError(ExitCode.Network, `cannot listen on ${hostPort(bind, port)}: ${(e as Error).message}`);
  }
  let server: SignalingServer;
  try {
    server = await listenSignaling({ server: http, clock });
  } catch (e) {
    await closeHttp(http);
    throw e;
  }
  const url = `ws://${hostPort(bind, server.port)}`;
  io.out(`signaling on ${url}\n`);
  const others = friendAddresses(bind);
  if (others.length > 0) {
    io.out('players use one of:\n');
    for (const a of others) io.out(`  --transport webrtc --signal ws://${hostPort(a.address, server.port)}\n`);
    io.out(
      `from the internet: forward TCP port ${server.port} on your router to ${others[0]!.address} (NAT); the game ` +
        'itself then goes peer to peer (WebRTC finds a path through most NATs with a STUN server: --ice)\n',
    );
  }
  deps.onListening?.(url, server.port);
  try {
    await new Promise<void>((resolve) => {
      const timer = seconds !== undefined ? clock.setTimer(seconds * 1000, resolve) : undefined;
      const signal = io.signal;
      if (signal?.aborted) resolve();
      signal?.addEventListener(
        'abort',
        () => {
          timer?.cancel();
          resolve();
        },
        { once: true },
      );
    });
  } finally {
    await server.close();
    await closeHttp(http);
  }
  io.out(`signal: stopped (${server.stats.relayed} signals relayed)\n`);
  return ExitCode.Ok;
}

function closeHttp(http: Server): Promise<void> {
  return new Promise((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}

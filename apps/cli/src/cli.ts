import { readFileSync } from 'node:fs';
import { type DemoDeps, demoCommand } from './commands/demo.js';
import { type HostDeps, hostCommand } from './commands/host.js';
import { type JoinDeps, joinCommand } from './commands/join.js';
import { type RecordDeps, recordCommand } from './commands/record.js';
import { type RoomsDeps, roomsCommand } from './commands/rooms.js';
import { type SignalDeps, signalCommand } from './commands/signal.js';
import { type SyncTestDeps, synctestCommand } from './commands/synctest.js';
import { CliError, ExitCode, type ExitCodeValue } from './exit-codes.js';
import type { CliIo } from './io.js';

/** Usage text of `netplay`. */
export const USAGE = `netplay: netplay for CHIP-8 ROMs and libretro cores (rollback and lockstep over UDP, WebSocket or WebRTC)

Commands:
  netplay demo [--seconds N] [--mode M] [--interactive]        host + bot guest (+ spectator) over an impaired UDP relay
  netplay synctest --rom FILE [--frames N --check-distance N]  find non-determinism in a ROM's run
  netplay host [--rom FILE] [--port N --transport udp|ws|webrtc ...]  host a game (default ROM: Space Racer)
  netplay join HOST:PORT [--spectate] [--rom FILE]             join a game and play in the terminal
  netplay join --transport webrtc --signal URL [--room NAME]   join through a WebRTC signaling server
  netplay host --lobby URL [--name TEXT] [--relay]             host and announce the room on a lobby
  netplay rooms --lobby URL [--open --game G ...] [--watch]    list (and follow) a lobby's rooms
  netplay join --lobby URL ROOM [--direct]                     join a lobby's room (direct, relay or WebRTC)
  (host, join, demo, synctest: --core NAME|PATH --rom FILE runs a libretro core, e.g. --core nestopia)
  netplay record HOST:PORT --out FILE [--frames N]             record a RetroArch 1.14 session's inputs
  netplay signal [--port N] [--bind ADDRESS]                   run a WebRTC signaling server (host/join --transport webrtc)
  netplay --version (-V)                                       print the version

Run "netplay COMMAND --help" for a command's options. Exit codes: see the README.`;

/** The version of this package (its package.json, one folder above src/ and dist/). */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

/** In-process hooks for tests. */
export interface CliDeps {
  readonly synctest?: SyncTestDeps;
  readonly demo?: DemoDeps;
  readonly host?: HostDeps;
  readonly join?: JoinDeps;
  readonly record?: RecordDeps;
  readonly signal?: SignalDeps;
  readonly rooms?: RoomsDeps;
}

/**
 * Runs the `netplay` command with `argv` (without node and the script) and returns its exit code.
 * Never throws for expected failures: they are printed to `io.err` with their exit code.
 */
export async function runCli(argv: readonly string[], io: CliIo, deps: CliDeps = {}): Promise<ExitCodeValue> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'synctest':
        return await synctestCommand(rest, io, deps.synctest);
      case 'demo':
        return await demoCommand(rest, io, deps.demo);
      case 'host':
        return await hostCommand(rest, io, deps.host);
      case 'join':
        return await joinCommand(rest, io, deps.join);
      case 'record':
        return await recordCommand(rest, io, deps.record);
      case 'signal':
        return await signalCommand(rest, io, deps.signal);
      case 'rooms':
        return await roomsCommand(rest, io, deps.rooms);
      case '--version':
      case '-V':
      case 'version':
        io.out(`netplay ${cliVersion()}\n`);
        return ExitCode.Ok;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(`${USAGE}\n`);
        return command === undefined ? ExitCode.Usage : ExitCode.Ok;
      default:
        throw new CliError(ExitCode.Usage, `unknown command "${command}"\n\n${USAGE}`);
    }
  } catch (e) {
    if (e instanceof CliError) {
      io.err(`netplay ${command ?? ''}: ${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  }
}

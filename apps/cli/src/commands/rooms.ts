import { parseArgs } from 'node:util';
import { ROOM_MODES, type RoomInfo } from '@netplay/lobby';
import { choiceOption, usageErrors } from '../args.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import { feedLine, lobbyClient, lobbyFailure, lobbyUrl, roomFilter, roomsTable } from '../lobby.js';

/** Usage text of `netplay rooms`. */
export const ROOMS_USAGE = `netplay rooms --lobby URL [--game NAME] [--core ID] [--mode M] [--password yes|no] [--open]
              [--search TEXT] [--watch]

Lists the rooms of a lobby: id, name, game (core), mode, players/slots, password, transport
("+relay": the lobby's relay carries it). Join one with "netplay join --lobby URL ROOM".
  --lobby URL       the lobby (http://HOST:PORT; "netplay-lobby" runs one)
  --game NAME       only this game (the ROM's file name, e.g. spaceracer.ch8)
  --core ID         only this core (chip8, libretro:Nestopia, ...)
  --mode M          only this mode (${ROOM_MODES.join(', ')})
  --password yes|no only rooms with (yes) or without (no) a password
  --open            only rooms with a free player slot
  --search TEXT     only rooms whose name holds TEXT (any case)
  --watch           then follow the lobby's feed: one line per room added or changed ("room …")
                    and removed ("gone ID (deleted|expired)"), until Ctrl-C`;

/** In-process hooks for tests. */
export interface RoomsDeps {
  /** Called with each line `--watch` prints after the table (tests wait on it). */
  readonly onLine?: (line: string) => void;
}

/** `netplay rooms`. */
export async function roomsCommand(argv: string[], io: CliIo, deps: RoomsDeps = {}): Promise<ExitCodeValue> {
  const { values } = usageErrors(() =>
    parseArgs({
      args: argv,
      options: {
        lobby: { type: 'string' },
        game: { type: 'string' },
        core: { type: 'string' },
        mode: { type: 'string' },
        password: { type: 'string' },
        open: { type: 'boolean' },
        search: { type: 'string' },
        watch: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }),
  );
  if (values.help) {
    io.out(`${ROOMS_USAGE}\n`);
    return ExitCode.Ok;
  }
  if (values.lobby === undefined) throw new CliError(ExitCode.Usage, `rooms needs --lobby URL\n\n${ROOMS_USAGE}`);
  const lobby = lobbyUrl(values.lobby);
  if (values.mode !== undefined) choiceOption('mode', values.mode, ROOM_MODES, 'rollback');
  const filter = roomFilter(values);
  const client = lobbyClient(lobby);
  if (!values.watch) {
    let rooms: RoomInfo[];
    try {
      rooms = await client.list(filter);
    } catch (e) {
      throw lobbyFailure(e, lobby, 'rooms');
    }
    printTable(io, lobby, rooms);
    return ExitCode.Ok;
  }
  // --watch: the feed's snapshot is the table, then one line per change until Ctrl-C.
  return await new Promise<ExitCodeValue>((resolve, reject) => {
    let snapshot = false;
    let stopped = false;
    const stop = client.watch(
      filter,
      (msg) => {
        if (msg.type === 'snapshot') {
          if (!snapshot) printTable(io, lobby, msg.rooms);
          snapshot = true;
          io.out(`watching ${lobby} for changes (Ctrl-C to stop)\n`);
          return;
        }
        if (msg.type === 'refused') {
          stopped = true;
          stop();
          reject(new CliError(ExitCode.Network, `the lobby ${lobby} refused the feed: ${msg.code}: ${msg.reason}`));
          return;
        }
        const line = feedLine(msg);
        if (line === undefined) return;
        io.out(`${line}\n`);
        deps.onLine?.(line);
      },
      (code, reason) => {
        if (stopped) return;
        stopped = true;
        io.signal?.removeEventListener('abort', onAbort);
        reject(
          new CliError(
            ExitCode.Network,
            snapshot
              ? `the lobby ${lobby} closed the feed (${code}${reason ? ` ${reason}` : ''})`
              : `cannot reach the lobby ${lobby} (feed closed: ${code}${reason ? ` ${reason}` : ''})`,
          ),
        );
      },
    );
    const onAbort = () => {
      if (stopped) return;
      stopped = true;
      stop();
      resolve(ExitCode.Ok);
    };
    if (io.signal?.aborted) onAbort();
    else io.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function printTable(io: CliIo, lobby: string, rooms: readonly RoomInfo[]): void {
  if (rooms.length === 0) {
    io.out(`no rooms on ${lobby}\n`);
    return;
  }
  for (const line of roomsTable(rooms)) io.out(`${line}\n`);
  io.out(`${rooms.length} room${rooms.length === 1 ? '' : 's'}: join one with "netplay join --lobby ${lobby} ID"\n`);
}

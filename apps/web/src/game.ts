import { Chip8Core } from '@netplay/core-wasm';
import { crc32 } from '@netplay/protocol';
import { type JoinInfo, NetplayClient, SESSION_CHANNELS } from '@netplay/session';
import { systemClock } from '@netplay/transport';
import { connect, waitOpen } from '@netplay/transport-ws';
import { chip8Content } from './content.js';
import { BotInput, type InputSource, KeyboardInput } from './input.js';
import type { PageParams } from './params.js';
import { rollbackStats } from './stats.js';

/** What the page exposes as `window.netplay` (the end-to-end tests read it). */
export interface NetplayState {
  /** The session frame the page is at (-1 before the game starts). */
  frame: number;
  /** CRC-32 of the state of each final frame (every input known), by frame. */
  readonly finals: Map<number, number>;
  /** Set once the page stopped playing (after `seconds` or `frames`, or when the session closed). */
  done: boolean;
  /** The error that stopped the page, if any. */
  error: string | undefined;
  /** The joined nick and slot (undefined: spectator), once joined. */
  nick: string | undefined;
  slot: number | undefined;
}

/** What the game loop draws to. */
export interface GameView {
  status(text: string): void;
  stats(text: string): void;
  draw(core: Chip8Core): void;
}

const FRAME_MS = 1000 / 60;
/** At most this many frames run per timer callback when the page falls behind. */
const MAX_CATCH_UP = 4;

/** Loads the core, joins the host and plays until `seconds`/`frames` or the session ends. */
export async function play(rom: Uint8Array, params: PageParams, state: NetplayState, view: GameView): Promise<void> {
  if (params.host === undefined) throw new Error('no ?host=ws://HOST:PORT in the URL');
  const core = await Chip8Core.create(rom, { ports: Math.min(4, params.players) });
  view.status(`connecting to ${params.host}…`);
  const conn = connect(params.host, { channels: SESSION_CHANNELS });
  await waitOpen(conn);
  const client = new NetplayClient(conn, {
    core,
    content: chip8Content(rom),
    clock: systemClock,
    nick: params.nick,
    spectate: params.spectate,
    ...(params.password !== undefined ? { password: params.password } : {}),
  });
  let info: JoinInfo;
  try {
    info = await client.joined();
  } catch (e) {
    conn.close('closed: the client left');
    throw e;
  }
  state.nick = info.nick;
  state.slot = info.slot;
  const role = info.slot === undefined ? 'spectator' : `P${info.slot + 1}`;
  view.status(`joined ${params.host} as ${info.nick} (${role}), ${info.mode}, host ${info.hostNick}`);

  let input: InputSource | undefined;
  if (info.slot !== undefined)
    input = params.bot ? new BotInput(params.seed ?? 2 + info.slot) : new KeyboardInput(window);
  let lastFinal = -1;
  const record = (upTo: number): void => {
    const d = client.driver;
    if (d === undefined) return;
    for (let f = lastFinal + 1; f <= upTo; f++) {
      const st = d.stateOf(f);
      if (st !== undefined) state.finals.set(f, crc32(st));
      lastFinal = f;
    }
  };

  await new Promise<void>((resolve) => {
    let closedError: string | undefined;
    const offClosed = client.on('closed', ({ error }) => {
      closedError = error === undefined ? 'the session closed' : `${error.code}: ${error.message}`;
    });
    const start = performance.now();
    let ran = 0;
    const stop = (error: string | undefined): void => {
      clearInterval(timer);
      offClosed();
      input?.close();
      if (error === undefined) client.close('closed: the client left');
      state.error = error;
      state.done = true;
      resolve();
    };
    const timer = setInterval(() => {
      const now = performance.now();
      if (closedError !== undefined) return stop(closedError);
      if (params.seconds !== undefined && now - start >= params.seconds * 1000) return stop(undefined);
      const due = Math.floor((now - start) / FRAME_MS);
      if (due - ran > MAX_CATCH_UP) ran = due - MAX_CATCH_UP;
      const s = client.rollback;
      while (ran < due) {
        ran++;
        client.tick(input?.next());
        // After every tick: a spectator keeps only its last states, so a frame not recorded
        // before the next ticks would be gone (a loaded machine runs several ticks per callback).
        if (s !== undefined) record(Math.min(s.confirmedFrame, s.currentFrame));
        else if (client.frame !== undefined) record(client.frame);
      }
      state.frame = client.frame ?? -1;
      view.draw(core);
      view.stats(s !== undefined ? rollbackStats(s) : `frame ${state.frame} (spectating: confirmed inputs only)`);
      if (params.frames !== undefined && lastFinal >= params.frames) stop(undefined);
    }, FRAME_MS / 2);
  });
}

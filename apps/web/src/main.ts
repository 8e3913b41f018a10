import { LobbyClient } from '@netplay/lobby';
import romUrl from '../../cli/assets/spaceracer.ch8?url';
import { type GameView, hostGame, type LobbyRoom, type NetplayState, play } from './game.js';
import { announceRoom } from './lobby-host.js';
import { parseParams } from './params.js';
import { defaultLobbyUrl } from './rooms.js';
import { showRooms } from './rooms-view.js';
import { Screen } from './screen.js';
import { defaultSignalUrl } from './share.js';

declare global {
  interface Window {
    /** The page's session state, read by the end-to-end tests. */
    netplay: NetplayState;
  }
}

const state: NetplayState = {
  frame: -1,
  finals: new Map(),
  done: false,
  error: undefined,
  nick: undefined,
  slot: undefined,
  link: undefined,
  hosts: [],
};
window.netplay = state;

function element<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`the page has no #${id}`);
  return e as T;
}

const statusEl = element<HTMLElement>('status');
const statsEl = element<HTMLElement>('stats');
const lobbyEl = element<HTMLElement>('lobby');
const lobbyNoteEl = element<HTMLElement>('lobby-note');
const hostButton = element<HTMLButtonElement>('host-game');
const shareEl = element<HTMLElement>('share');
const shareLinkEl = element<HTMLAnchorElement>('share-link');
const rooms = {
  section: element<HTMLElement>('rooms'),
  body: element<HTMLTableSectionElement>('rooms-body'),
  filter: element<HTMLInputElement>('rooms-filter'),
  openOnly: element<HTMLInputElement>('rooms-open'),
  note: element<HTMLElement>('rooms-note'),
};
const screen = new Screen(element<HTMLCanvasElement>('screen'));

const view: GameView = {
  status: (text) => {
    statusEl.textContent = text;
  },
  stats: (text) => {
    statsEl.textContent = text;
  },
  draw: (core) => screen.draw(core.framebuffer()),
  link: (url) => {
    shareLinkEl.href = url;
    shareLinkEl.textContent = url;
    shareEl.hidden = false;
  },
};

async function loadRom(): Promise<Uint8Array> {
  statusEl.textContent = 'loading the ROM…';
  const response = await fetch(romUrl);
  if (!response.ok) throw new Error(`cannot load the ROM: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

function finished(): void {
  statusEl.textContent = state.error === undefined ? `${statusEl.textContent} — stopped` : `stopped: ${state.error}`;
}

async function main(): Promise<void> {
  const params = parseParams(location.search);
  if (params.host !== undefined || params.room !== undefined) {
    if (params.host === undefined && params.signal === undefined)
      throw new Error('a ?room= link needs its ?signal=ws://… server');
    await play(await loadRom(), params, state, view);
    finished();
    return;
  }
  // The lobby: the rooms of a lobby (?lobby=, or the dev server's), host a game over WebRTC (or
  // join a WebSocket host with ?host=ws://…).
  let signal = params.signal ?? defaultSignalUrl(location, import.meta.env.VITE_NETPLAY_SIGNAL);
  const lobbyUrl = defaultLobbyUrl(
    location,
    params.lobby,
    import.meta.env.VITE_NETPLAY_LOBBY,
    __NETPLAY_DEV_LOBBY_PORT__,
  );
  const lobby = lobbyUrl === undefined ? undefined : new LobbyClient(lobbyUrl);
  statusEl.textContent = lobby
    ? 'Join a room below, or host a game: it is listed here and gets a link to share.'
    : 'Host a game and share its link, or open this page with ?host=ws://HOST:PORT to join a netplay host.';
  lobbyNoteEl.textContent = lobby ? `lobby ${lobbyUrl}` : `signaling server ${signal}`;
  lobbyEl.hidden = false;
  const stopRooms = lobby ? showRooms(lobby, rooms, location) : undefined;
  await new Promise<void>((resolve) => hostButton.addEventListener('click', () => resolve(), { once: true }));
  stopRooms?.();
  lobbyEl.hidden = true;
  let lobbyRoom: LobbyRoom | undefined;
  if (lobby) {
    try {
      ({ signal, lobbyRoom } = await announceRoom(lobby, params));
    } catch (e) {
      // The dev server's default lobby may be down: host without it. A lobby named in the URL must work.
      if (params.lobby !== undefined) throw e;
      lobbyNoteEl.textContent = `not listed: ${(e as Error).message}`;
    }
  }
  await hostGame(await loadRom(), params, signal, state, view, lobbyRoom);
  finished();
}

main().catch((e: unknown) => {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  state.error = message;
  state.done = true;
  statusEl.textContent = `error: ${message}`;
});

import romUrl from '../../cli/assets/spaceracer.ch8?url';
import { type GameView, hostGame, type NetplayState, play } from './game.js';
import { parseParams } from './params.js';
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
  // The lobby: host a game over WebRTC (or join a WebSocket host with ?host=ws://…).
  const signal = params.signal ?? defaultSignalUrl(location, import.meta.env.VITE_NETPLAY_SIGNAL);
  statusEl.textContent =
    'Host a game and share its link, or open this page with ?host=ws://HOST:PORT to join a netplay host.';
  lobbyNoteEl.textContent = `signaling server ${signal}`;
  lobbyEl.hidden = false;
  await new Promise<void>((resolve) => hostButton.addEventListener('click', () => resolve(), { once: true }));
  lobbyEl.hidden = true;
  await hostGame(await loadRom(), params, signal, state, view);
  finished();
}

main().catch((e: unknown) => {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  state.error = message;
  state.done = true;
  statusEl.textContent = `error: ${message}`;
});

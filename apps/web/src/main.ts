import romUrl from '../../cli/assets/spaceracer.ch8?url';
import { type NetplayState, play } from './game.js';
import { parseParams } from './params.js';
import { Screen } from './screen.js';

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
};
window.netplay = state;

function element<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`the page has no #${id}`);
  return e as T;
}

const statusEl = element<HTMLElement>('status');
const statsEl = element<HTMLElement>('stats');
const screen = new Screen(element<HTMLCanvasElement>('screen'));

async function main(): Promise<void> {
  const params = parseParams(location.search);
  if (params.host === undefined) {
    statusEl.textContent =
      'Start a host (netplay host --rom apps/cli/assets/spaceracer.ch8 --transport ws --port 7845), ' +
      'then open this page with ?host=ws://127.0.0.1:7845';
    state.error = 'no host';
    state.done = true;
    return;
  }
  statusEl.textContent = 'loading the ROM…';
  const response = await fetch(romUrl);
  if (!response.ok) throw new Error(`cannot load the ROM: HTTP ${response.status}`);
  const rom = new Uint8Array(await response.arrayBuffer());
  await play(rom, params, state, {
    status: (text) => {
      statusEl.textContent = text;
    },
    stats: (text) => {
      statsEl.textContent = text;
    },
    draw: (core) => screen.draw(core.framebuffer()),
  });
  statusEl.textContent = state.error === undefined ? `${statusEl.textContent} — stopped` : `stopped: ${state.error}`;
}

main().catch((e: unknown) => {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  state.error = message;
  state.done = true;
  statusEl.textContent = `error: ${message}`;
});

/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The signaling server the lobby uses when the URL names none (`ws://…` or `wss://…`). */
  readonly VITE_NETPLAY_SIGNAL?: string;
  /** The lobby whose rooms the page lists when the URL names none (`http://…` or `https://…`). */
  readonly VITE_NETPLAY_LOBBY?: string;
}

/** The port of the dev server's in-memory lobby (`npm run demo:web`; 0 in a build: none). */
declare const __NETPLAY_DEV_LOBBY_PORT__: number;

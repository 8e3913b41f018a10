/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The signaling server the lobby uses when the URL names none (`ws://…` or `wss://…`). */
  readonly VITE_NETPLAY_SIGNAL?: string;
}

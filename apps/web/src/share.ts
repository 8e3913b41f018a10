import { ROOM_NAME } from './params.js';

/** The port `npm run demo:web` starts its signaling server on (see vite.config.ts). */
export const DEFAULT_SIGNAL_PORT = 8787;

/**
 * The signaling server the page uses when the URL names none: the build-time setting
 * `VITE_NETPLAY_SIGNAL` if given, else port {@link DEFAULT_SIGNAL_PORT} of the host that served the
 * page (`ws://`, or `wss://` on an https page).
 */
export function defaultSignalUrl(page: { protocol: string; hostname: string }, configured?: string): string {
  if (configured !== undefined && /^wss?:\/\//.test(configured)) return configured;
  const scheme = page.protocol === 'https:' ? 'wss' : 'ws';
  const host = page.hostname.includes(':') ? `[${page.hostname}]` : page.hostname;
  return `${scheme}://${host}:${DEFAULT_SIGNAL_PORT}`;
}

/** Fills `bytes` with random values (default `crypto.getRandomValues`). */
export type RandomFill = (bytes: Uint8Array<ArrayBuffer>) => void;
const defaultFill: RandomFill = (b) => {
  crypto.getRandomValues(b);
};

/** An unguessable room name: `np-` and 20 hex digits (80 random bits from `random`). */
export function newRoomName(fill: RandomFill = defaultFill): string {
  const bytes = new Uint8Array(10);
  fill(bytes);
  let hex = '';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  const name = `np-${hex}`;
  if (!ROOM_NAME.test(name)) throw new Error(`bad room name ${name}`);
  return name;
}

/** This peer's name in a room: `guest-` and 12 hex digits (the host is always `host`). */
export function newPeerName(fill: RandomFill = defaultFill): string {
  return `guest-${newRoomName(fill).slice(3, 15)}`;
}

/** The peer name the hosting page takes in its room. */
export const HOST_PEER = 'host';

/**
 * The link a guest opens: this page with the signaling server, the room and the ICE servers (every
 * other parameter of `pageUrl` is dropped, so a host's own `bot`/`frames` do not travel).
 */
export function shareLink(pageUrl: string, signal: string, room: string, ice: readonly string[] = []): string {
  const url = new URL(pageUrl);
  const q = new URLSearchParams();
  q.set('signal', signal);
  q.set('room', room);
  for (const u of ice) q.append('ice', u);
  url.search = q.toString();
  url.hash = '';
  return url.toString();
}

import type { HostGuard } from './admission.js';
import type { ContentInfo } from './content.js';
import type { SessionError } from './errors.js';
import { contentError, helloError, passwordMismatch } from './handshake-checks.js';
import type { Peer } from './host-peer.js';
import { encodeChallenge, type HelloMessage, type InfoMessage } from './messages.js';
import type { SessionMode } from './mode.js';

/** What the host's handshake steps need of the host. */
export interface HandshakeHost {
  readonly mode: SessionMode;
  /** The host's nick. */
  readonly nick: string;
  /** The session's password ('' or undefined: none). */
  readonly password: string | undefined;
  readonly content: ContentInfo;
  readonly guard: HostGuard<Peer>;
  now(): number;
  randomU32(): number;
  /** The refusal when there is no room for `peer` (not counting itself), if any. */
  roomError(peer: Peer): SessionError | undefined;
  /** Gives `peer` a nick unique in the session, from the one it asked for. */
  assignNick(peer: Peer, asked: string): string;
  send(peer: Peer, data: Uint8Array): void;
  refuse(peer: Peer, error: SessionError): void;
  admit(peer: Peer): void;
}

function hasPassword(h: HandshakeHost): boolean {
  return h.password !== undefined && h.password !== '';
}

/** HELLO from a peer at stage `hello`: protocol checks, a blocked address, room (without a password), then CHALLENGE. */
export function onHello(h: HandshakeHost, peer: Peer, m: HelloMessage): void {
  peer.spectate = m.spectate;
  // The order of the checks (issue 15): protocol (magic, version, nick, mode), then the password,
  // then room. A session with a password checks room only after INFO proved it, so a wrong
  // password reads "wrong password" even when the game is full.
  const error = helloError(m) ?? (hasPassword(h) ? h.guard.blocked(peer.address, h.now()) : undefined);
  if (error) {
    h.refuse(peer, error);
    return;
  }
  const nick = h.assignNick(peer, m.nick);
  const full = hasPassword(h) ? undefined : h.roomError(peer);
  if (full) {
    h.refuse(peer, full);
    return;
  }
  peer.salt = h.randomU32() >>> 0;
  peer.stage = 'info';
  h.send(peer, encodeChallenge({ passwordRequired: hasPassword(h), salt: peer.salt, nick, hostNick: h.nick }));
}

/** INFO from a peer at stage `info`: password (limited per address), core and content, room; then admission. */
export function onInfo(h: HandshakeHost, peer: Peer, m: InfoMessage): void {
  if (hasPassword(h)) {
    // Blocked addresses are answered without checking the password.
    const now = h.now();
    const blocked = h.guard.blocked(peer.address, now);
    const wrong = blocked ? undefined : passwordMismatch(m, peer.salt, h.password ?? '');
    if (blocked || wrong !== undefined) {
      h.refuse(peer, blocked ?? h.guard.failed(peer.address, now, wrong ?? ''));
      return;
    }
    h.guard.succeeded(peer.address);
  }
  const mismatch = contentError(m, h.content);
  if (mismatch) {
    h.refuse(peer, mismatch);
    return;
  }
  const full = h.roomError(peer);
  if (full) {
    h.refuse(peer, full);
    return;
  }
  h.admit(peer);
}

import type { Core } from '@netplay/state';
import { SessionError } from './errors.js';
import { MAX_NICK_BYTES, utf8Length } from './messages.js';
import { type SessionMode, SUPPORTED_MODES } from './mode.js';

/** What {@link checkHostShape} checks of a host's options (defaults applied). */
export interface HostShape {
  readonly mode: SessionMode;
  readonly players: number;
  readonly inputDelay: number;
  readonly nick: string;
  readonly core: Core;
}

/**
 * The host's options this version can run: a supported mode, 2–16 players (lockstep-cs up to 255
 * and the core's ports), lockstep-p2p's 1–4 input bytes, an input delay of 0–255 and a 1–32-byte nick.
 * @throws SessionError `unsupported-mode`, `bad-argument` or `bad-nick` naming what is wrong.
 */
export function checkHostShape(s: HostShape): void {
  const { mode, players, inputDelay, core } = s;
  if (!SUPPORTED_MODES.includes(mode))
    throw new SessionError('unsupported-mode', `mode ${String(mode)} is not one of ${SUPPORTED_MODES.join(', ')}`);
  if (mode !== 'lockstep-cs' && (players < 2 || players > 16))
    throw new SessionError('bad-argument', `${mode} sessions have 2..16 players, got ${players}`);
  if (mode === 'lockstep-p2p' && (core.inputBytes < 1 || core.inputBytes > 4))
    throw new SessionError(
      'bad-argument',
      `lockstep-p2p carries 1..4 input bytes per player (one MAMEHub mask); the core has ${core.inputBytes}`,
    );
  if (!Number.isInteger(players) || players < 2 || players > 255)
    throw new SessionError('bad-argument', `players must be 2..255, got ${players}`);
  if (core.ports < players)
    throw new SessionError('bad-argument', `the core has ${core.ports} ports, fewer than ${players} players`);
  if (!Number.isInteger(inputDelay) || inputDelay < 0 || inputDelay > 255)
    throw new SessionError('bad-argument', `inputDelay must be 0..255, got ${inputDelay}`);
  const n = utf8Length(s.nick);
  if (n === 0 || n > MAX_NICK_BYTES) throw new SessionError('bad-nick', `nick must be 1..${MAX_NICK_BYTES} bytes`);
}

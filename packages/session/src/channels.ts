import { CLIENT_SERVER_CHANNELS } from '@netplay/lockstep';
import { ROLLBACK_CHANNELS } from '@netplay/rollback';
import type { ChannelSpec } from '@netplay/transport';

/** The reliable channel that carries the session handshake (HELLO … SYNC, REFUSE). */
export const SESSION_CONTROL_CHANNEL = 'np-session';

/**
 * The channels a session connection declares, in this order: the session control channel, then
 * @netplay/rollback's `ROLLBACK_CHANNELS` (`rb-input` unreliable, `rb-control` reliable), then
 * @netplay/lockstep's `CLIENT_SERVER_CHANNELS` (`frame`, `frame-u`, `input`, `control`, `chat`,
 * `sync`). One connection carries the handshake and then the game, whatever the mode.
 */
export const SESSION_CHANNELS: readonly ChannelSpec[] = Object.freeze([
  { name: SESSION_CONTROL_CHANNEL, kind: 'reliable' },
  ...ROLLBACK_CHANNELS,
  ...CLIENT_SERVER_CHANNELS,
]);

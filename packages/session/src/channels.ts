import { CLIENT_SERVER_CHANNELS } from '@netplay/lockstep';
import { ROLLBACK_CHANNELS } from '@netplay/rollback';
import type { ChannelSpec } from '@netplay/transport';

/** The reliable channel that carries the session handshake (HELLO … SYNC, REFUSE). */
export const SESSION_CONTROL_CHANNEL = 'np-session';

/**
 * Rollback with more than 2 players: a client's `rb-control` messages to another player travel
 * to the host on this reliable channel, behind a u8 player slot (the destination on the way to
 * the host, the source on the way from it), and the host forwards them.
 */
export const RELAY_CONTROL_CHANNEL = 'np-relay';
/** The same for `rb-input` (unreliable). */
export const RELAY_INPUT_CHANNEL = 'np-relay-u';

/**
 * The channels a session connection declares, in this order: the session control channel, then
 * @netplay/rollback's `ROLLBACK_CHANNELS` (`rb-input` unreliable, `rb-control` reliable), then
 * @netplay/lockstep's `CLIENT_SERVER_CHANNELS` (`frame`, `frame-u`, `input`, `control`, `chat`,
 * `sync`), then the relay channels `np-relay` (reliable) and `np-relay-u` (unreliable). One
 * connection carries the handshake and then the game, whatever the mode.
 */
export const SESSION_CHANNELS: readonly ChannelSpec[] = Object.freeze([
  { name: SESSION_CONTROL_CHANNEL, kind: 'reliable' },
  ...ROLLBACK_CHANNELS,
  ...CLIENT_SERVER_CHANNELS,
  { name: RELAY_CONTROL_CHANNEL, kind: 'reliable' },
  { name: RELAY_INPUT_CHANNEL, kind: 'unreliable' },
]);

import { ROLLBACK_CHANNELS } from '@netplay/rollback';

/** The reliable channel that carries the session handshake (HELLO … SYNC, REFUSE). */
export const SESSION_CONTROL_CHANNEL = 'np-session';

/**
 * The channels a session connection declares, in this order: the session control channel, then
 * @netplay/rollback's `ROLLBACK_CHANNELS` (`rb-input` unreliable, `rb-control` reliable). One
 * connection carries the handshake and then the game.
 */
export const SESSION_CHANNELS = [{ name: SESSION_CONTROL_CHANNEL, kind: 'reliable' }, ...ROLLBACK_CHANNELS] as const;

/**
 * The scheduler the host chose: `rollback` (@netplay/rollback `P2PSession`), `lockstep-cs`
 * (FCE Ultra's client-server), `lockstep-p2p` (MAMEHub's mesh) and `frame-advance` (FS-UAE's), the
 * last three from @netplay/lockstep. The two P2P lockstep modes run over the session's star: the
 * host relays what clients send each other.
 */
export type SessionMode = 'rollback' | 'lockstep-cs' | 'lockstep-p2p' | 'frame-advance';

/** Every mode, in wire order (SYNC carries the index). */
export const SESSION_MODES: readonly SessionMode[] = ['rollback', 'lockstep-cs', 'lockstep-p2p', 'frame-advance'];

/** Modes this version runs end to end (all of them). */
export const SUPPORTED_MODES: readonly SessionMode[] = SESSION_MODES;

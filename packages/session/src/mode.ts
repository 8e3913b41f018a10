/**
 * The scheduler the host chose: `rollback` (@netplay/rollback `P2PSession`), `lockstep-cs`,
 * `lockstep-p2p` and `frame-advance` (@netplay/lockstep). `rollback` and `lockstep-cs` run in
 * this version; a host constructed with another mode throws `SessionError('unsupported-mode')`.
 */
export type SessionMode = 'rollback' | 'lockstep-cs' | 'lockstep-p2p' | 'frame-advance';

/** Every mode, in wire order (SYNC carries the index). */
export const SESSION_MODES: readonly SessionMode[] = ['rollback', 'lockstep-cs', 'lockstep-p2p', 'frame-advance'];

/** Modes this version runs end to end. */
export const SUPPORTED_MODES: readonly SessionMode[] = ['rollback', 'lockstep-cs'];

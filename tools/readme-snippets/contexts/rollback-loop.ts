// A running session, the application's core and its ring of savestates.
declare const session: import('@netplay/rollback').P2PSession;
declare const core: import('@netplay/state').Core;
declare const ring: import('@netplay/state').SnapshotRing;

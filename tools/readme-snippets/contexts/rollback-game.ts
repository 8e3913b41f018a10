// The application's core, a connection to the host that declares ROLLBACK_CHANNELS, and its frame skipper.
declare const core: import('@netplay/state').Core;
declare const connection: import('@netplay/transport').Connection;
declare function skip(frames: number): void;

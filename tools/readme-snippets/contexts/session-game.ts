// The ROM, the host's and the client's cores, a listener and a connection (both declare SESSION_CHANNELS),
// the local pad and the application's exit codes.
declare const rom: Uint8Array;
declare const hostCore: import('@netplay/state').Core;
declare const clientCore: import('@netplay/state').Core;
declare const listener: import('@netplay/transport').Listener;
declare const connection: import('@netplay/transport').Connection;
declare function readPad(): Uint8Array;
declare function exitCodeOf(code: string): number;

// A transport's shell: its clock, a message just received from the peer, and its own close function.
declare const clock: import('@netplay/transport').Clock;
declare const bytes: Uint8Array;
declare function close(reason: string, error: import('@netplay/transport').TransportError): void;

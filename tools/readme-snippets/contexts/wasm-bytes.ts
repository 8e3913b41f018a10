// A compiled core and a ROM the application loaded.
declare const wasmBytesOrModule: Uint8Array;
declare const rom: Uint8Array;

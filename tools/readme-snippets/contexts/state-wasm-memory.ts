// A registry and a WebAssembly core's memory with the addresses of its RAM and registers.
declare const state: import('@netplay/state').StateRegistry;
declare const memory: WebAssembly.Memory;
declare const ramPtr: number;
declare const ramBytes: number;
declare const regsPtr: number;

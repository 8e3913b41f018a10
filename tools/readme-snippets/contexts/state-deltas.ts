// A registry and two snapshots of it: the base and the current state.
declare const state: import('@netplay/state').StateRegistry;
declare const initial: Uint8Array;
declare const current: Uint8Array;

// The application's core, its open connections (by peer id), its start time and its input source.
declare const core: import('@netplay/state').Core;
declare const conns: Map<number, import('@netplay/transport').Connection>;
declare const t0: number;
declare function onKeyboard(listener: (bytes: Uint8Array) => void): void;

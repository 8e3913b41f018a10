// The host's input source (RetroPad bits of frame `frame`) and the client's own core.
declare function pad(frame: number): number;
declare const otherCore: import('@netplay/core-libretro').LibretroCore;

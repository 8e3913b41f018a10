// A core and the frames a scheduler names.
declare const core: import('@netplay/state').Core;
declare const frame: number;
declare const confirmedFrame: number;

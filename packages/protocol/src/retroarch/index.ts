/**
 * RetroArch netplay protocol 6 (RetroArch 1.14): connection header, every command, the password
 * hash and LAN discovery. See `docs/retroarch.md` for the byte layouts.
 * @packageDocumentation
 */
export * from './commands.js';
export * from './discovery.js';
export * from './header.js';
export * from './input.js';
/** buffer-layout declarations of the payloads (the oracle of the hand-written per-frame codecs). */
export * as retroArchLayouts from './layouts.js';
export * from './messages.js';
export * from './password.js';

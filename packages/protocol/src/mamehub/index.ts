export * from './input-state.js';
export * from './layouts.js';
export * from './packet.js';

export * from './command.js';
export * from './decode-into.js';
export * from './init.js';
export * from './layouts.js';
export * from './packet.js';
export * from './receiver.js';
export * from './text.js';

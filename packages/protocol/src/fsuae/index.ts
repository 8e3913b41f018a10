export * from './layouts.js';
export * from './messages.js';

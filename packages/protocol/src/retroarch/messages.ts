/**
 * RetroArch protocol 6 messages: the value types (`message-types.ts`), command ids
 * (`message-commands.ts`), encoding (`message-encode.ts`) and decoding (`message-decode.ts`).
 */
export {
  RETROARCH_COMMAND_OF,
  retroArchCommandOf,
  retroArchMessageTypeOf,
} from './message-commands.js';
export * from './message-decode.js';
export * from './message-encode.js';
export type * from './message-types.js';

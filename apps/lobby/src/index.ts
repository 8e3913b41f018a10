/**
 * `@netplay/lobby-server`: the `netplay-lobby` command's pieces, for embedding or testing.
 * @packageDocumentation
 */
export { type LobbyCliOptions, parseArgs, USAGE, UsageError } from './options.js';
export { type RunningLobby, runLobby } from './run.js';

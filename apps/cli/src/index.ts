/**
 * @netplay/cli: the netplay command (see README). The commands are also callable in-process.
 * @packageDocumentation
 */
export { checkAgreement, FINALS_HEADER, FinalStates, formatFinals } from './agreement.js';
export { type CliDeps, runCli, USAGE } from './cli.js';
export { type DemoDeps, type DemoResult, demoCommand, runDemo } from './commands/demo.js';
export { runSyncTest, type SyncTestDeps, type SyncTestResult, synctestCommand } from './commands/synctest.js';
export { CliError, ExitCode, type ExitCodeValue } from './exit-codes.js';
export { type CliIo, memoryIo, processIo } from './io.js';
export { readRom, SPACE_RACER_URL } from './rom.js';

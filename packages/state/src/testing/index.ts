/**
 * @netplay/state/testing: small deterministic JavaScript cores implementing `Core`, for tests
 * of lockstep, rollback and SyncTest, and the README's example.
 * @packageDocumentation
 */
export { ExampleGame } from './example-game.js';
export { TestCore, type TestCoreOptions } from './test-core.js';

/**
 * @netplay/state: the savestate registry, snapshots, deltas, checksums and the `Core` contract.
 * @packageDocumentation
 */
export type { Core } from './core.js';

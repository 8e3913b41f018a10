/**
 * @netplay/cli: the netplay command (see README).
 * @packageDocumentation
 */
export {};

/**
 * @netplay/session: not implemented yet; see the package README.
 * @packageDocumentation
 */
export {};

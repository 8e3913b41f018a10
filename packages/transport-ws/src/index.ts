/**
 * @netplay/transport-ws: not implemented yet; see the package README.
 * @packageDocumentation
 */
export {};

/**
 * @netplay/transport-udp: not implemented yet; see the package README.
 * @packageDocumentation
 */
export {};

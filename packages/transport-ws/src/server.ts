/**
 * `@netplay/transport-ws/server`: the Node-only half of netplay-ws: the listener on `ws`'s
 * WebSocketServer and a Node client on `ws`'s WebSocket. Re-exports everything of the browser-safe
 * main entry too.
 * @packageDocumentation
 */
export * from './index.js';
export {
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  DEFAULT_MAX_RECEIVE_BUFFER_BYTES,
  listen,
  WsListener,
  type WsListenOptions,
} from './listener.js';
export { connectNode } from './node-client.js';
export { attachNodeSocket, mapWsError, nodeSocket } from './node-socket.js';

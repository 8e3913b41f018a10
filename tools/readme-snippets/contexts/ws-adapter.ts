// Another WebSocket library's socket (`sock`), wrapped as a WsSocket (`mySocketAdapter`), and a listener's hooks.
declare const sock: {
  onBinary: (bytes: Uint8Array) => void;
  onClose: (code: number, reason: string) => void;
};
declare const mySocketAdapter: import('@netplay/transport-ws').WsSocket;
declare const address: string;
declare const channels: readonly import('@netplay/transport').ChannelSpec[];
declare const listenerHooks: import('@netplay/transport-ws').WsServerHooks;

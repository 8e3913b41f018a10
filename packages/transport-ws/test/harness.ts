import type { ChannelSpec, Connection, Timeouts } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { connectNode, listen, type WsConnection, type WsListener, type WsListenOptions } from '../src/server.js';
import { TcpRelay } from './tcp-relay.js';

/** A listener, a relay in front of it and a connected client, for tests. */
export interface WsPair {
  readonly listener: WsListener;
  readonly relay: TcpRelay;
  readonly client: WsConnection;
  readonly server: Connection;
  dispose(): Promise<void>;
}

/** Starts a listener on loopback (port 0), a relay in front of it, and connects a client through it. */
export async function makePair(
  channels: readonly ChannelSpec[],
  timeouts: Partial<Timeouts>,
  extra: Partial<WsListenOptions> = {},
): Promise<WsPair> {
  const listener = await listen({ channels, timeouts, ...extra });
  const relay = await TcpRelay.start(listener.port);
  let server: Connection | undefined;
  listener.on('connection', (c) => {
    server ??= c;
  });
  const client = connectNode(`ws://127.0.0.1:${relay.port}`, { channels, timeouts, ...extra });
  const ok = await pollUntil(() => client.state !== 'connecting' && server !== undefined, 5000);
  if (!ok || client.state !== 'open' || !server) {
    client.close();
    listener.close();
    await relay.close();
    throw new Error(`pair did not open (client ${client.state})`);
  }
  return {
    listener,
    relay,
    client,
    server,
    async dispose() {
      client.close('dispose');
      listener.close('dispose');
      await relay.close();
      await listener.whenClosed();
    },
  };
}

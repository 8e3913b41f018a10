import { type Connection, TransportError, type Unsubscribe } from '@netplay/transport';
import type { SendFn } from './channels.js';

/** What a session exposes to the adapter. */
export interface SessionEndpoint {
  /** Takes one message of `peer` that arrived on `channel`. */
  receive(peer: string, channel: string, data: Uint8Array): void;
  /** Optional: told when a peer's connection closes (`left`: the peer closed it itself). */
  disconnectPeer?(peer: string, how?: 'left' | 'lost'): void;
}

/**
 * The thin shell between a sans-I/O session and @netplay/transport connections: `send` (give it to
 * the session) routes messages to the connection of each peer; {@link bind} routes a connection's
 * messages and its close into the session. Connections must declare {@link ROLLBACK_CHANNELS}.
 * Messages to a peer without an open connection, or refused by a full send queue, are dropped
 * (inputs are resent until acknowledged; control messages travel on a reliable channel).
 */
export class ConnectionSet {
  private readonly conns = new Map<string, Connection>();
  /** Messages dropped because no open connection could take them. */
  dropped = 0;

  /** Hand this to the session's `send` option. */
  readonly send: SendFn = (peer, channel, data) => {
    const c = this.conns.get(peer);
    if (c === undefined || c.state === 'closed') {
      this.dropped++;
      return;
    }
    try {
      c.send(channel, data);
    } catch (e) {
      if (!(e instanceof TransportError)) throw e;
      this.dropped++;
    }
  };

  /** Routes `connection` (to `peer`) into `session`; returns a function that unbinds it. */
  bind(peer: string, connection: Connection, session: SessionEndpoint): Unsubscribe {
    this.conns.set(peer, connection);
    const offMessage = connection.on('message', ({ channel, data }) => session.receive(peer, channel, data));
    const offClose = connection.on('close', ({ code }) => {
      if (this.conns.get(peer) === connection) this.conns.delete(peer);
      session.disconnectPeer?.(peer, code === 'remote' ? 'left' : 'lost');
    });
    return () => {
      offMessage();
      offClose();
      if (this.conns.get(peer) === connection) this.conns.delete(peer);
    };
  }

  /** The connection of `peer`, if bound. */
  get(peer: string): Connection | undefined {
    return this.conns.get(peer);
  }
}

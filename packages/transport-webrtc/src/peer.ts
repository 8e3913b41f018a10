import type { Connection, Handler, Listener, ListenerEventMap, Unsubscribe } from '@netplay/transport';
import { Emitter, TransportError, validateChannels } from '@netplay/transport';
import { WebRtcConnection, type WebRtcServerHooks } from './connection.js';
import { resolveOptions, type WebRtcConnectionOptions } from './options.js';
import { resolvePeerConnection } from './rtc.js';
import { SignalingClient, type SignalingClientOptions, type SignalingSocketConstructor } from './signaling-client.js';

/** Where a peer signals: an already joined {@link SignalingClient}, or what is needed to join one. */
export type SignalingTarget =
  | SignalingClient
  | {
      /** `ws://` / `wss://` URL of the signaling server. */
      readonly url: string;
      /** The room to join (1–64 characters of `A–Z a–z 0–9 . _ ~ -`); the listener and its clients must name the same one. */
      readonly room: string;
      /** This peer's name in the room. */
      readonly peer: string;
      /** `WebSocket` constructor (default the global one). */
      readonly WebSocket?: SignalingSocketConstructor;
    };

/** Options of {@link connectWebRtc}. */
export interface ConnectWebRtcOptions extends WebRtcConnectionOptions {
  /** The signaling server and room (or a joined client, e.g. shared by a mesh peer's connections). */
  readonly signaling: SignalingTarget;
  /** Name of the listening peer in the room to connect to. */
  readonly to: string;
}

/** Options of {@link listenWebRtc}. */
export interface ListenWebRtcOptions extends WebRtcConnectionOptions {
  /** The signaling server and room (or a joined client). */
  readonly signaling: SignalingTarget;
  /** Most connections at once, handshaking ones included (default 16); further offers are ignored. */
  readonly maxConnections?: number;
}

function joinOptions(target: Exclude<SignalingTarget, SignalingClient>, timeoutMs: number): SignalingClientOptions {
  return {
    url: target.url,
    room: target.room,
    peer: target.peer,
    timeoutMs,
    ...(target.WebSocket ? { WebSocket: target.WebSocket } : {}),
  };
}

/**
 * Connects to peer `to` of a signaling room: joins the room (unless given a joined client), sends
 * an offer to `to`, and returns the connection at once (state `connecting`; sends are queued). When
 * it opens, a signaling client it joined itself is closed (the data channels need no server). No
 * such peer, a refused join or a failed ICE negotiation end the connection with `refused`/`error`.
 */
export function connectWebRtc(options: ConnectWebRtcOptions): WebRtcConnection {
  const channels = validateChannels(options.channels);
  const resolved = resolveOptions(options, channels);
  const Ctor = resolvePeerConnection(options.rtc);
  const pc = new Ctor({ iceServers: [], ...options.rtc?.config });
  const own = !(options.signaling instanceof SignalingClient);
  let client: SignalingClient | undefined = own ? undefined : (options.signaling as SignalingClient);
  const outbox: Parameters<SignalingClient['send']>[1][] = [];
  const conn = new WebRtcConnection(pc, 'client', `webrtc:${options.to}`, options, (s) => {
    if (client) client.send(options.to, s);
    else outbox.push(s);
  });
  const attach = (c: SignalingClient) => {
    if (conn.state === 'closed') {
      if (own) c.close();
      return;
    }
    if (!c.peers.includes(options.to)) {
      conn.fail(new TransportError('refused', `no peer "${options.to}" in room "${c.room}"`));
      if (own) c.close();
      return;
    }
    client = c;
    const offs = [
      c.on('signal', ({ from, signal, address }) => {
        if (from !== options.to) return;
        if (address !== undefined && signal.kind === 'answer') conn.stampAddress(address);
        conn.handleSignal(signal);
      }),
      c.on('peer-left', (p) => {
        if (p === options.to) conn.signalingLost(`peer "${p}" left the room`);
      }),
      c.on('close', (e) => conn.signalingLost(e.message)),
    ];
    for (const s of outbox.splice(0)) c.send(options.to, s);
    const done = () => {
      for (const off of offs) off();
      if (own) c.close();
    };
    conn.on('open', done);
    conn.on('close', done);
  };
  if (client) attach(client);
  else {
    SignalingClient.join(
      joinOptions(options.signaling as Exclude<SignalingTarget, SignalingClient>, resolved.timeouts.connectMs),
    ).then(attach, (e: Error) => {
      const code = (e as { code?: string }).code;
      conn.fail(
        new TransportError(
          code === 'room-full' || code === 'name-taken' || code === 'limit' ? 'refused' : 'io',
          `signaling: ${e.message}`,
        ),
      );
    });
  }
  return conn;
}

/**
 * The host side: a peer listening in a signaling room. Every offer from a new peer of the room
 * becomes a server-side {@link WebRtcConnection}, emitted as `connection` once its handshake is
 * done. Closing the listener closes its connections and (if it joined it) the signaling client.
 */
export class WebRtcListener implements Listener {
  private readonly emitter = new Emitter<ListenerEventMap>();
  private readonly byPeer = new Map<string, WebRtcConnection>();
  private readonly open: WebRtcConnection[] = [];
  private readonly hooks: WebRtcServerHooks;
  private readonly offs: Unsubscribe[];
  private closed = false;
  /** The cap in force on connections at once, handshaking ones included: `options.maxConnections` or 16; further offers get no answer (their client times out) and the listener emits `error` (`limit`). Fixed for the listener's life. */
  readonly maxConnections: number;

  /** @internal Use {@link listenWebRtc}. */
  constructor(
    /** The signaling client the listener receives offers through. */
    readonly signaling: SignalingClient,
    options: ListenWebRtcOptions,
    private readonly ownSignaling: boolean,
  ) {
    this.maxConnections = options.maxConnections ?? 16;
    this.hooks = {
      accepted: (conn) => {
        this.open.push(conn);
        this.emitter.emit('connection', conn);
      },
      rejected: (_conn, error) => this.emitter.emit('error', error),
      closed: (conn) => {
        for (const [peer, c] of this.byPeer) if (c === conn) this.byPeer.delete(peer);
        const i = this.open.indexOf(conn);
        if (i >= 0) this.open.splice(i, 1);
      },
    };
    this.offs = [
      signaling.on('signal', ({ from, signal, address }) => {
        const existing = this.byPeer.get(from);
        if (existing && signal.kind === 'offer') {
          // The peer connects again (e.g. after a crash we have not noticed yet): the new offer wins.
          existing.close('replaced: the peer connected again');
        } else if (existing) {
          existing.handleSignal(signal);
          return;
        }
        if (signal.kind !== 'offer' || this.closed) return;
        if (this.byPeer.size >= this.maxConnections) {
          this.emitter.emit(
            'error',
            new TransportError('limit', `refused ${from}: listener full (${this.maxConnections})`),
          );
          return;
        }
        const Ctor = resolvePeerConnection(options.rtc);
        const pc = new Ctor({ iceServers: [], ...options.rtc?.config });
        const conn = new WebRtcConnection(
          pc,
          'server',
          `webrtc:${from}`,
          options,
          (s) => signaling.send(from, s),
          this.hooks,
          address,
        );
        this.byPeer.set(from, conn);
        conn.handleSignal(signal);
      }),
      signaling.on('peer-left', (peer) => this.byPeer.get(peer)?.signalingLost(`peer "${peer}" left the room`)),
      signaling.on('close', (e) => {
        for (const c of this.byPeer.values()) c.signalingLost(e.message);
        if (!this.closed) this.emitter.emit('error', new TransportError('io', `signaling: ${e.message}`));
      }),
    ];
  }

  /** `webrtc://room/peer`. */
  get localAddress(): string {
    return `webrtc://${this.signaling.room}/${this.signaling.peer}`;
  }

  get connections(): readonly Connection[] {
    return this.open;
  }

  on<K extends keyof ListenerEventMap>(type: K, handler: Handler<ListenerEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  close(reason = 'listener closed'): void {
    if (this.closed) return;
    this.closed = true;
    for (const off of this.offs) off();
    for (const c of [...this.byPeer.values()]) c.close(reason);
    if (this.ownSignaling) this.signaling.close();
    try {
      this.emitter.emit('close', undefined);
    } finally {
      this.emitter.clear();
    }
  }
}

/**
 * Listens for WebRTC connections in a signaling room (joining it unless given a joined client).
 * Resolves once joined. Rejects with a `TransportError` (`invalid-argument`, `refused` when the
 * room is full or the name taken, `io` when the server cannot be reached).
 */
export async function listenWebRtc(options: ListenWebRtcOptions): Promise<WebRtcListener> {
  const channels = validateChannels(options.channels);
  const resolved = resolveOptions(options, channels);
  resolvePeerConnection(options.rtc);
  if (
    options.maxConnections !== undefined &&
    !(Number.isInteger(options.maxConnections) && options.maxConnections > 0)
  ) {
    throw new TransportError('invalid-argument', 'maxConnections must be a positive integer');
  }
  if (options.signaling instanceof SignalingClient) return new WebRtcListener(options.signaling, options, false);
  try {
    const client = await SignalingClient.join(joinOptions(options.signaling, resolved.timeouts.connectMs));
    return new WebRtcListener(client, options, true);
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new TransportError(
      code === 'room-full' || code === 'name-taken' || code === 'limit' ? 'refused' : 'io',
      `signaling: ${(e as Error).message}`,
      { cause: e },
    );
  }
}

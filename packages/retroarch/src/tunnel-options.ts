/** Options, events and figures of the RetroArch tunnel relay ({@link listenRetroArchTunnel}). */
import type { AdmissionLimits, EventSource, RateLimits } from '@netplay/transport';
import type { RetroArchTunnelError, RetroArchTunnelErrorCode } from './tunnel-errors.js';
import type { listenRetroArchTunnel } from './tunnel-server.js';

/** Options of {@link listenRetroArchTunnel}. */
export interface ListenRetroArchTunnelOptions {
  /** TCP port (0 = any free one). */
  readonly port: number;
  /** Address to listen on. Default 127.0.0.1 (pass `0.0.0.0` or `::` to serve the internet). */
  readonly host?: string;
  /**
   * Sockets that have not sent a whole tunnel message yet: `maxPending` in total (default 64; a
   * newer one evicts the oldest of the address holding the most, closed with `timeout`),
   * `maxPendingPerAddress` (default 8; more are refused with `full`), `pendingTimeoutMs`
   * (default 10 000; then closed with `timeout`).
   */
  readonly admission?: Partial<AdmissionLimits>;
  /** Sockets at most, in any role (default 1024); more are closed at once (`full`). */
  readonly maxConnections?: number;
  /** Sessions at most (default 128, libretro's relay's default); more are refused (`sessions-full`). */
  readonly maxSessions?: number;
  /** Sessions one address may host at once (default 4). */
  readonly maxSessionsPerAddress?: number;
  /** Clients (waiting or linked) per session (default 16; RetroArch takes at most 31). */
  readonly maxClientsPerSession?: number;
  /** How long a client waits for the host's link connection (default 30 000 ms; then `link-timeout`). */
  readonly linkTimeoutMs?: number;
  /** A host silent this long gets a `RATP` ping (default 60 000 ms, libretro's relay's value). */
  readonly pingIntervalMs?: number;
  /** Unanswered pings after which the host is dropped at the next silent interval (default 3). */
  readonly maxUnansweredPings?: number;
  /** Bytes a client may send before its link exists (default 65 536; more is `overflow`). */
  readonly maxPendingBytes?: number;
  /**
   * Bytes the relay may hold unsent for one socket (default 1 MiB; more is `overflow`). Copying
   * pauses the sending side while the receiving side's buffer is full, so a link holds at most
   * one chunk beyond Node's high-water mark.
   */
  readonly maxBufferedBytes?: number;
  /**
   * Tunnel messages a host may send (RATA, RATP; default 20/s, 320 B/s, 5 s burst); past it the
   * host is closed with `flood`. `false` disables it.
   */
  readonly hostRateLimits?: RateLimits | false;
  /**
   * Bytes (and chunks) per second the links of one session may copy, both directions together
   * (default 8 MiB/s, 100 000 chunks/s, 4 s burst); past it the link that overdrew is closed with
   * `bandwidth` (the session and its other links stay). `false` disables it.
   */
  readonly sessionRateLimits?: RateLimits | false;
  /** Source of 12-byte ids (default `crypto.randomBytes`); all-zero and taken ids are drawn again. */
  readonly randomId?: () => Uint8Array;
  /** Every event as a log line, with its reason. */
  readonly log?: (line: string) => void;
}

/** Default host message budget of {@link listenRetroArchTunnel}. */
export const DEFAULT_TUNNEL_HOST_RATE_LIMITS: RateLimits = Object.freeze({
  messagesPerSecond: 20,
  bytesPerSecond: 320,
  burstSeconds: 5,
});

/** Default per-session bandwidth cap of {@link listenRetroArchTunnel}. */
export const DEFAULT_TUNNEL_SESSION_RATE_LIMITS: RateLimits = Object.freeze({
  messagesPerSecond: 100_000,
  bytesPerSecond: 8 * 1024 * 1024,
  burstSeconds: 4,
});

/** Events of a {@link RetroArchTunnel}; ids are 24 hex digits, addresses without the port. */
export interface RetroArchTunnelEvents {
  /** A host got a session (`RATS` + id sent). */
  session: {
    /** The new session's id, 24 hex digits: what clients give to join. */
    readonly session: string;
    /** The host's address. */
    readonly address: string;
  };
  /** A session's host connection ended (its links live on until they close). */
  sessionClosed: {
    /** The session's id. */
    readonly session: string;
    /** The host's address. */
    readonly address: string;
    /** Why, when it failed (`ping-timeout`, `overflow`, `flood`...); undefined when the host closed cleanly. */
    readonly error: RetroArchTunnelError | undefined;
  };
  /** A client asked to join; the host was told (`RATL` + client id). */
  client: {
    /** The session it joins. */
    readonly session: string;
    /** The id the relay gave this client, 24 hex digits. */
    readonly client: string;
    /** The client's address. */
    readonly address: string;
  };
  /** The host asked a client's address (`RATA`) and got it. */
  address: {
    /** The host's session. */
    readonly session: string;
    /** The client id asked about. */
    readonly client: string;
    /** Whether that id was a client of this session (else the reply carried zeros). */
    readonly known: boolean;
  };
  /** The host's link connection for a client arrived: bytes are copied from now. */
  link: {
    /** The session. */
    readonly session: string;
    /** The client id now linked. */
    readonly client: string;
    /** The address of the host's link connection. */
    readonly address: string;
  };
  /** A client (waiting or linked) left; byte counts are what its link copied. */
  unlink: {
    /** The session. */
    readonly session: string;
    /** The client id that left. */
    readonly client: string;
    /** Bytes copied from this client to the host (0 if it never linked). */
    readonly bytesToHost: number;
    /** Bytes copied from the host to this client. */
    readonly bytesToClient: number;
    /** Why, when it failed (`link-timeout`, `overflow`, `bandwidth`, `closed`...); undefined on a clean close. */
    readonly error: RetroArchTunnelError | undefined;
  };
  /** The relay pinged a silent host (`unanswered` pings so far, this one included). */
  ping: {
    /** The pinged host's session. */
    readonly session: string;
    /** Pings since the host was last heard, this one included; past `maxUnansweredPings` the host is dropped. */
    readonly unanswered: number;
  };
  /** A connection was refused or closed before it had a role (no session, bad magic, caps…). */
  refused: {
    /** The connection's address. */
    readonly address: string;
    /** Why it was refused. */
    readonly error: RetroArchTunnelError;
  };
}

/** One session as {@link RetroArchTunnel.sessions} lists it. */
export interface RetroArchTunnelSessionInfo {
  /** The session id, 24 hex digits. */
  readonly id: string;
  /** The host's address, without the port. */
  readonly address: string;
  /** Clients waiting for their link. */
  readonly waiting: number;
  /** Linked clients. */
  readonly links: number;
  /** Bytes copied from this session's clients to its host so far. */
  readonly bytesToHost: number;
  /** Bytes copied from the host to this session's clients so far. */
  readonly bytesToClients: number;
  /** Pings sent since the host was last heard (0 for a talking host). */
  readonly unansweredPings: number;
}

/** Counters of a {@link RetroArchTunnel}. */
export interface RetroArchTunnelStats {
  /** Open sockets, any role. */
  readonly connections: number;
  /** Sockets without a whole tunnel message yet. */
  readonly pending: number;
  /** Sessions open now (at most `maxSessions`). */
  readonly sessions: number;
  /** Client links copying bytes now. */
  readonly links: number;
  /** Sessions created and links made since the start. */
  readonly sessionsCreated: number;
  /** Client links made since the start. */
  readonly linksMade: number;
  /** Bytes copied to hosts and to clients since the start. */
  readonly bytesToHosts: number;
  /** Bytes copied to clients since the start. */
  readonly bytesToClients: number;
  /** Closes with an error, by code. */
  readonly errors: Readonly<Partial<Record<RetroArchTunnelErrorCode, number>>>;
}

/** A running tunnel relay. */
export interface RetroArchTunnel {
  /** The port it listens on. */
  readonly port: number;
  /** What happens on the tunnel (see {@link RetroArchTunnelEvents}). */
  readonly events: EventSource<RetroArchTunnelEvents>;
  /** The sessions it carries now. */
  sessions(): RetroArchTunnelSessionInfo[];
  /** Its counters since the start. */
  stats(): RetroArchTunnelStats;
  /** Stops listening and destroys every socket. */
  close(): Promise<void>;
}

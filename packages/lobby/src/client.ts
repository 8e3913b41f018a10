import { type Clock, systemClock, type Timer } from '@netplay/transport';
import { isLobbyErrorCode, LobbyError } from './errors.js';
import { type FeedServerMessage, parseFeedServerMessage } from './feed-protocol.js';
import { filterQuery, type JoinInfo, type RoomAnnounce, type RoomFilter, type RoomInfo } from './room.js';

/** The answer of `POST /rooms` and `PUT /rooms/:id`. */
export interface AnnounceResult {
  /** The room as the lobby now lists it: the announce plus its id, node, relay flag and times. */
  readonly room: RoomInfo;
  /** The room's secret: heartbeats, updates, deletion and relay registration need it. */
  readonly token: string;
  /** The room vanishes this long after the last heartbeat. */
  readonly ttlMs: number;
  /** How often to heartbeat (a third of the TTL). */
  readonly heartbeatMs: number;
}

/** A minimal `WebSocket` constructor (the browser's, or `ws`'s in Node). */
export interface FeedSocketConstructor {
  new (url: string): FeedSocketLike;
}
/** What {@link LobbyClient.watch} uses of a WebSocket. */
export interface FeedSocketLike {
  /** Set by the client: receives each feed message (`data` a JSON string). */
  onmessage:
    | ((ev: {
        /** The message's payload; the feed sends text (JSON), anything else is ignored. */
        data: unknown;
      }) => void)
    | null;
  /** Set by the client: called once when the socket closes; the client passes code and reason on to `watch`'s `onClose`. */
  onclose:
    | ((ev: {
        /** The WebSocket close code. */
        code: number;
        /** The close reason text (the feed puts its error code there). */
        reason: string;
      }) => void)
    | null;
  /** Set by the client: called when the socket is open; the client then sends its filter. */
  onopen: (() => void) | null;
  /** Sends one text message (the client's filter, JSON). */
  send(data: string): void;
  /** Closes the socket: the client passes 1000 when its watcher is stopped, 4002 after a feed message it cannot parse. */
  close(code?: number, reason?: string): void;
}

/** Options of {@link LobbyClient}. */
export interface LobbyClientOptions {
  /** `fetch` (default the global one). */
  readonly fetch?: typeof fetch;
  /** WebSocket constructor for {@link LobbyClient.watch} (default the global `WebSocket`). */
  readonly WebSocket?: FeedSocketConstructor;
  /** Time source for heartbeats (default the system clock). */
  readonly clock?: Clock;
}

/** A room announced by {@link LobbyClient.announce}, kept alive by heartbeats until `close()`. */
export interface Announcement {
  /** The room's id, assigned by the lobby (12 URL-safe base64 characters). */
  readonly id: string;
  /** The room's secret from the lobby; keep it private (it allows updates, deletion and relay registration). */
  readonly token: string;
  /** The last answer. */
  readonly room: RoomInfo;
  /** Changes what is announced (players, endpoints…); sent with the next heartbeat, and now. */
  update(body: RoomAnnounce): Promise<void>;
  /** Heartbeat failures so far (network errors, refusals); a heartbeat that works resets it. */
  readonly failures: number;
  /** Stops heartbeats and deletes the room (errors while deleting are ignored). */
  close(): Promise<void>;
}

/**
 * The lobby's HTTP and feed client; browser-safe (global `fetch` and `WebSocket`). Every refusal
 * rejects with a {@link LobbyError} carrying the server's code and reason.
 */
export class LobbyClient {
  private readonly fetchFn: typeof fetch;
  private readonly clock: Clock;
  /** The lobby's HTTP base URL, as given without trailing slashes (`http://lobby:8080`). */
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly options: LobbyClientOptions = {},
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.fetchFn = options.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a));
    this.clock = options.clock ?? systemClock;
  }

  /** `GET /rooms`: the rooms matching `filter`. */
  async list(filter: RoomFilter = {}): Promise<RoomInfo[]> {
    const body = (await this.request('GET', `/rooms${filterQuery(filter)}`)) as { rooms: RoomInfo[] };
    return body.rooms;
  }

  /** `GET /rooms/:id`. */
  async get(id: string): Promise<RoomInfo> {
    return ((await this.request('GET', `/rooms/${encodeURIComponent(id)}`)) as { room: RoomInfo }).room;
  }

  /** `GET /rooms/:id/join`: signaling and relay addresses for the room. */
  async join(id: string): Promise<JoinInfo> {
    return (await this.request('GET', `/rooms/${encodeURIComponent(id)}/join`)) as JoinInfo;
  }

  /** `POST /rooms`: creates a room. */
  async create(body: RoomAnnounce): Promise<AnnounceResult> {
    return (await this.request('POST', '/rooms', body)) as AnnounceResult;
  }

  /** `PUT /rooms/:id`: heartbeat and update (re-creates the room if the lobby lost it). */
  async heartbeat(id: string, token: string, body: RoomAnnounce): Promise<AnnounceResult> {
    return (await this.request('PUT', `/rooms/${encodeURIComponent(id)}`, body, token)) as AnnounceResult;
  }

  /** `DELETE /rooms/:id`. */
  async remove(id: string, token: string): Promise<void> {
    await this.request('DELETE', `/rooms/${encodeURIComponent(id)}`, undefined, token);
  }

  /**
   * Creates a room and keeps it alive: a heartbeat (`PUT` with the whole body) every
   * `heartbeatMs`; a heartbeat that fails is retried at the next period (the room outlives up to
   * two lost heartbeats), and one that reaches a lobby which lost the room (node restart, Redis
   * restart) re-creates it with the same id and token.
   */
  async announce(body: RoomAnnounce): Promise<Announcement> {
    const first = await this.create(body);
    let current = body;
    let room = first.room;
    let failures = 0;
    let timer: Timer | undefined;
    let closed = false;
    const beat = async (): Promise<void> => {
      try {
        room = (await this.heartbeat(first.room.id, first.token, current)).room;
        failures = 0;
      } catch {
        failures++;
      }
    };
    const arm = () => {
      if (closed) return;
      timer = this.clock.setTimer(first.heartbeatMs, () => {
        void beat().then(arm);
      });
    };
    arm();
    return {
      id: first.room.id,
      token: first.token,
      get room() {
        return room;
      },
      get failures() {
        return failures;
      },
      update: async (next) => {
        current = next;
        await beat();
      },
      close: async () => {
        closed = true;
        timer?.cancel();
        await this.remove(first.room.id, first.token).catch(() => {});
      },
    };
  }

  /**
   * Opens the change feed (`/feed`) with `filter`; `onMessage` gets the snapshot, then changes.
   * Returns a function that closes it.
   */
  watch(
    filter: RoomFilter,
    onMessage: (msg: FeedServerMessage) => void,
    onClose?: (code: number, reason: string) => void,
  ): () => void {
    const Ctor = this.options.WebSocket ?? (globalThis as unknown as { WebSocket?: FeedSocketConstructor }).WebSocket;
    if (!Ctor) throw new LobbyError('io', 'no WebSocket: pass options.WebSocket');
    const ws = new Ctor(`${this.baseUrl.replace(/^http/, 'ws')}/feed`);
    ws.onopen = () => ws.send(JSON.stringify({ v: 1, type: 'filter', filter }));
    ws.onmessage = (ev) => {
      if (typeof ev.data !== 'string') return;
      try {
        onMessage(parseFeedServerMessage(ev.data));
      } catch {
        ws.close(4002, 'bad feed message');
      }
    };
    ws.onclose = (ev) => onClose?.(ev.code, ev.reason);
    return () => ws.close(1000, 'done');
  }

  private async request(method: string, path: string, body?: unknown, token?: string): Promise<unknown> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    let res: Response;
    try {
      res = await this.fetchFn(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (e) {
      throw new LobbyError('io', `lobby unreachable: ${(e as Error).message}`);
    }
    if (res.status === 204) return undefined;
    let json: unknown;
    try {
      json = await res.json();
    } catch {
      throw new LobbyError('io', `lobby answered ${res.status} without JSON`);
    }
    if (!res.ok) {
      const err = (json as { error?: { code?: unknown; reason?: unknown } }).error;
      throw new LobbyError(
        isLobbyErrorCode(err?.code) ? err.code : 'io',
        typeof err?.reason === 'string' ? err.reason : `lobby answered ${res.status}`,
      );
    }
    return json;
  }
}

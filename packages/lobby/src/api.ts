import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AttemptLimiter,
  type AttemptLimits,
  addressKey,
  type Clock,
  DEFAULT_ATTEMPT_LIMITS,
  type RateLimits,
  systemClock,
} from '@netplay/transport';
import { AddressBudgets } from './address-budgets.js';
import { LOBBY_ERROR_STATUS, LobbyError } from './errors.js';
import { decodePlacement } from './placement.js';
import { checkRoomId, type JoinInfo, matchRoom, parseAnnounce, parseFilter, type RoomInfo } from './room.js';
import type { RoomStore, StoredRoom } from './store.js';

/** Default per-address request budget: 20 requests and 64 KiB a second, bursts of 5 s. */
export const DEFAULT_API_RATE_LIMITS: RateLimits = Object.freeze({
  messagesPerSecond: 20,
  bytesPerSecond: 64 << 10,
  burstSeconds: 5,
});

/** Options of {@link LobbyApi}. */
export interface LobbyApiOptions {
  /** Where rooms are kept and read: this node's own, or one shared with other nodes (Redis). */
  readonly store: RoomStore;
  /** This node's name (shown as `room.node`). */
  readonly nodeId: string;
  /** The node's public HTTP base URL (`http://host:port`), for join info. */
  readonly publicUrl: string;
  /** Room TTL: a room not heartbeated for this long vanishes (default 30 000 ms). */
  readonly ttlMs?: number;
  /** Most rooms in the store (default 10 000). */
  readonly maxRooms?: number;
  /** Most live rooms announced through this node by one address (default 8). */
  readonly maxRoomsPerAddress?: number;
  /** Largest request body (default 4096 bytes). */
  readonly maxBodyBytes?: number;
  /** Most rooms in one list answer (default 500; the oldest first). */
  readonly maxListRooms?: number;
  /** Per-address request budget (default {@link DEFAULT_API_RATE_LIMITS}); `false` disables it. */
  readonly rateLimits?: RateLimits | false;
  /** Back-off for wrong room tokens per address (default `DEFAULT_ATTEMPT_LIMITS`). */
  readonly attemptLimits?: AttemptLimits;
  /** Whether the signaling server is mounted (join info lists it for rooms with a webrtc endpoint). */
  readonly signaling?: boolean;
  /** Time source for budgets (default the system clock). */
  readonly clock?: Clock;
  /** Wall clock for `createdAt`/`updatedAt` (default `Date.now`). */
  readonly wallClock?: () => number;
  /**
   * Extra read-only routes an app mounts next to the API: `GET /<path>` answers 200 with the JSON
   * of what the function returns (e.g. `{ 'retroarch/sessions': () => tunnel.sessions() }`). Paths
   * are one or more segments without leading or trailing slashes; they cannot shadow `rooms` or
   * `health`. Other methods get `method`; a function that throws gets `unavailable`.
   */
  readonly routes?: Readonly<Record<string, () => unknown>>;
}

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{22,64}$/;

/** SHA-256 of a room token, hex. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Reads a body of at most `max` bytes; throws `too-large`. */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > max) {
      reject(new LobbyError('too-large', `body over ${max} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.removeAllListeners('data');
        req.pause();
        reject(new LobbyError('too-large', `body over ${max} bytes`));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => reject(new LobbyError('bad-request', 'request aborted')));
  });
}

/** Parses a JSON body; throws `bad-json`. */
export function parseJsonBody(body: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new LobbyError('bad-json', 'the body is not UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new LobbyError('bad-json', 'the body is not JSON');
  }
}

/**
 * The lobby's HTTP JSON API (sans framework, on `node:http`):
 *
 * | route | |
 * |---|---|
 * | `GET /rooms?game=&core=&mode=&hasPassword=&open=&minPlayers=&maxPlayers=&q=` | `{rooms}` |
 * | `POST /rooms` (a {@link RoomAnnounce}) | 201 `{room, token, ttlMs, heartbeatMs}` |
 * | `GET /rooms/:id` | `{room}` |
 * | `GET /rooms/:id/join` | a {@link JoinInfo} |
 * | `PUT /rooms/:id` + `Authorization: Bearer TOKEN` | heartbeat/update (re-creates a lost room) |
 * | `DELETE /rooms/:id` + token | 204 |
 * | `GET /health` | `{node, rooms}` |
 * | `GET /<path>` of {@link LobbyApiOptions.routes} | what the app's function returns |
 *
 * Every refusal is `{"error":{"code","reason"}}` with the status of {@link LOBBY_ERROR_STATUS}.
 */
export class LobbyApi {
  private readonly store: RoomStore;
  private readonly ttlMs: number;
  private readonly maxRooms: number;
  private readonly maxRoomsPerAddress: number;
  private readonly maxBodyBytes: number;
  private readonly maxListRooms: number;
  private readonly budgets: AddressBudgets | undefined;
  private readonly attempts: AttemptLimiter;
  private readonly clock: Clock;
  private readonly wallClock: () => number;
  /** Rooms announced through this node, per address (for `maxRoomsPerAddress`). */
  private readonly byAddress = new Map<string, Set<string>>();
  private readonly addressOf = new Map<string, string>();
  private readonly unsubscribe: () => void;
  /** Requests answered, by status. */
  readonly stats: {
    /** Requests handled since the start, refused ones included. */
    requests: number;
    /** Refused requests by {@link LobbyErrorCode} (`flood`, `not-found`, `forbidden`, `limit`...). */
    refused: Record<string, number>;
  } = { requests: 0, refused: {} };

  constructor(private readonly options: LobbyApiOptions) {
    this.store = options.store;
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxRooms = options.maxRooms ?? 10_000;
    this.maxRoomsPerAddress = options.maxRoomsPerAddress ?? 8;
    this.maxBodyBytes = options.maxBodyBytes ?? 4096;
    this.maxListRooms = options.maxListRooms ?? 500;
    this.budgets =
      options.rateLimits === false ? undefined : new AddressBudgets(options.rateLimits ?? DEFAULT_API_RATE_LIMITS);
    this.attempts = new AttemptLimiter(options.attemptLimits ?? DEFAULT_ATTEMPT_LIMITS);
    this.clock = options.clock ?? systemClock;
    this.wallClock = options.wallClock ?? Date.now;
    for (const path of Object.keys(options.routes ?? {})) {
      const first = path.split('/')[0];
      if (!/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/.test(path) || first === 'rooms' || first === 'health') {
        throw new LobbyError('bad-request', `bad extra route ${JSON.stringify(path)}`);
      }
    }
    this.unsubscribe = this.store.subscribe((e) => {
      if (e.type === 'removed') this.forget(e.id);
    });
  }

  /** The TTL given to rooms. */
  get roomTtlMs(): number {
    return this.ttlMs;
  }

  /** Stops listening to the store. */
  close(): void {
    this.unsubscribe();
  }

  /** Handles one request (never throws; every failure is a typed JSON refusal). */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.stats.requests++;
    res.setHeader('access-control-allow-origin', '*');
    this.route(req, res).catch((e: unknown) => {
      const err =
        e instanceof LobbyError
          ? e
          : new LobbyError('unavailable', `store failed: ${(e as Error)?.message ?? String(e)}`.slice(0, 200));
      this.stats.refused[err.code] = (this.stats.refused[err.code] ?? 0) + 1;
      if (err.code === 'too-large') res.setHeader('connection', 'close');
      send(res, LOBBY_ERROR_STATUS[err.code], { error: { code: err.code, reason: err.message } });
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const address = addressKey(req.socket.remoteAddress ?? '?');
    const now = this.clock.now();
    const declared = Number(req.headers['content-length'] ?? 0) || 0;
    if (this.budgets && !this.budgets.take(address, Math.min(declared, this.maxBodyBytes) + 256, now)) {
      throw new LobbyError('flood', `${address}: ${this.budgets.describe(address)}`);
    }
    const url = new URL(req.url ?? '/', 'http://lobby');
    const parts = url.pathname.split('/').filter((p) => p !== '');
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST, PUT, DELETE',
        'access-control-allow-headers': 'authorization, content-type',
        'access-control-max-age': '600',
      });
      res.end();
      return;
    }
    if (parts.length === 1 && parts[0] === 'health') {
      if (method !== 'GET') throw new LobbyError('method', `${method} /health`);
      send(res, 200, { node: this.options.nodeId, rooms: await this.store.count() });
      return;
    }
    const extra = parts.join('/');
    const routes = this.options.routes;
    if (routes !== undefined && Object.hasOwn(routes, extra)) {
      if (method !== 'GET') throw new LobbyError('method', `${method} /${extra}`);
      send(res, 200, await (routes[extra] as () => unknown)());
      return;
    }
    if (parts[0] !== 'rooms' || parts.length > 3)
      throw new LobbyError('not-found', `no route ${url.pathname.slice(0, 80)}`);
    if (parts.length === 1) {
      if (method === 'GET') return this.list(url, res);
      if (method === 'POST') return this.create(req, res, address);
      throw new LobbyError('method', `${method} /rooms`);
    }
    const id = checkRoomId(decodeURIComponent(parts[1] as string));
    if (parts.length === 3) {
      if (parts[2] !== 'join') throw new LobbyError('not-found', `no route ${url.pathname.slice(0, 80)}`);
      if (method !== 'GET') throw new LobbyError('method', `${method} /rooms/:id/join`);
      return this.join(id, res);
    }
    if (method === 'GET') {
      const room = await this.store.get(id);
      if (!room) throw new LobbyError('not-found', `no room ${id}`);
      send(res, 200, { room: room.info });
      return;
    }
    if (method === 'PUT') return this.heartbeat(req, res, id, address);
    if (method === 'DELETE') return this.remove(req, res, id, address);
    throw new LobbyError('method', `${method} /rooms/:id`);
  }

  private async list(url: URL, res: ServerResponse): Promise<void> {
    const filter = parseFilter(url.searchParams);
    const rooms: RoomInfo[] = [];
    for (const r of await this.store.list()) if (matchRoom(r.info, filter)) rooms.push(r.info);
    rooms.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
    send(res, 200, { rooms: rooms.slice(0, this.maxListRooms) });
  }

  private async create(req: IncomingMessage, res: ServerResponse, address: string): Promise<void> {
    const body = parseAnnounce(parseJsonBody(await readBody(req, this.maxBodyBytes)));
    await this.checkCaps(address);
    const id = randomBytes(9).toString('base64url');
    const token = randomBytes(18).toString('base64url');
    const now = this.wallClock();
    const room: StoredRoom = {
      info: { ...body, id, node: this.options.nodeId, relay: false, createdAt: now, updatedAt: now },
      tokenHash: hashToken(token),
      address,
    };
    this.remember(id, address);
    await this.store.put(room, this.ttlMs);
    send(res, 201, { room: room.info, token, ttlMs: this.ttlMs, heartbeatMs: Math.floor(this.ttlMs / 3) });
  }

  private async heartbeat(req: IncomingMessage, res: ServerResponse, id: string, address: string): Promise<void> {
    const token = this.bearer(req, address);
    const body = parseAnnounce(parseJsonBody(await readBody(req, this.maxBodyBytes)));
    const existing = await this.store.get(id);
    const now = this.wallClock();
    if (existing) {
      this.checkToken(existing, token, address);
    } else {
      await this.checkCaps(address);
    }
    const relay = (await this.store.getRelay(id)) !== undefined;
    const room: StoredRoom = {
      info: {
        ...body,
        id,
        node: this.options.nodeId,
        relay,
        createdAt: existing?.info.createdAt ?? now,
        updatedAt: now,
      },
      tokenHash: existing?.tokenHash ?? hashToken(token),
      address: existing?.address ?? address,
    };
    if (!existing) this.remember(id, address);
    await this.store.put(room, this.ttlMs);
    send(res, 200, { room: room.info, token, ttlMs: this.ttlMs, heartbeatMs: Math.floor(this.ttlMs / 3) });
  }

  private async remove(req: IncomingMessage, res: ServerResponse, id: string, address: string): Promise<void> {
    const token = this.bearer(req, address);
    const existing = await this.store.get(id);
    if (!existing) throw new LobbyError('not-found', `no room ${id}`);
    this.checkToken(existing, token, address);
    await this.store.delete(id);
    res.writeHead(204);
    res.end();
  }

  private async join(id: string, res: ServerResponse): Promise<void> {
    const room = await this.store.get(id);
    if (!room) throw new LobbyError('not-found', `no room ${id}`);
    const ws = this.options.publicUrl.replace(/^http/, 'ws');
    const rtc = room.info.endpoints.find((e) => e.kind === 'webrtc');
    const stored = await this.store.getRelay(id);
    const placement = stored ? decodePlacement(stored) : undefined;
    const info: JoinInfo = {
      room: room.info,
      ...(rtc && rtc.kind === 'webrtc' && this.options.signaling !== false
        ? { signaling: { url: `${ws}/signal`, room: id, peer: rtc.peer } }
        : {}),
      ...(placement
        ? {
            relay: {
              url: `${placement.ws}/relay/join?room=${encodeURIComponent(id)}`,
              ...(placement.udp ? { udp: placement.udp } : {}),
            },
          }
        : {}),
    };
    send(res, 200, info);
  }

  private bearer(req: IncomingMessage, address: string): string {
    const wait = this.attempts.waitMs(address, this.clock.now());
    if (wait > 0)
      throw new LobbyError('limit', `too many wrong tokens from ${address}: retry in ${Math.ceil(wait)} ms`);
    const auth = req.headers.authorization ?? '';
    const m = /^Bearer ([A-Za-z0-9_-]+)$/.exec(auth);
    if (!m || !TOKEN_PATTERN.test(m[1] as string)) {
      throw new LobbyError('forbidden', 'Authorization: Bearer <room token> is required');
    }
    return m[1] as string;
  }

  private checkToken(room: StoredRoom, token: string, address: string): void {
    if (hashToken(token) !== room.tokenHash) {
      this.attempts.fail(address, this.clock.now());
      throw new LobbyError('forbidden', `wrong token for room ${room.info.id}`);
    }
    this.attempts.succeed(address);
  }

  private async checkCaps(address: string): Promise<void> {
    if ((this.byAddress.get(address)?.size ?? 0) >= this.maxRoomsPerAddress) {
      throw new LobbyError('limit', `too many rooms from ${address} (${this.maxRoomsPerAddress})`);
    }
    if ((await this.store.count()) >= this.maxRooms) {
      throw new LobbyError('limit', `too many rooms (${this.maxRooms})`);
    }
  }

  private remember(id: string, address: string): void {
    let set = this.byAddress.get(address);
    if (!set) {
      set = new Set();
      this.byAddress.set(address, set);
    }
    set.add(id);
    this.addressOf.set(id, address);
  }

  private forget(id: string): void {
    const a = this.addressOf.get(id);
    if (a === undefined) return;
    this.addressOf.delete(id);
    const set = this.byAddress.get(a);
    set?.delete(id);
    if (set?.size === 0) this.byAddress.delete(a);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

import { type Clock, systemClock, type Timer } from '@netplay/transport';
import { closeRedisPair, connectRedisPair, type RedisPair } from './redis-connection.js';
import type { RoomStore, StoredRoom, StoreEvent } from './store.js';

/** Options of {@link RedisRoomStore.connect}. */
export interface RedisRoomStoreOptions {
  /** Key and channel prefix (default `np:lobby:`). */
  readonly prefix?: string;
  /** How often the store compares its view with Redis, to report rooms that expired (default 500 ms). */
  readonly syncMs?: number;
  /** Timer source for the sync (default the system clock). */
  readonly clock?: Clock;
}

function isStoredRoom(v: unknown): v is StoredRoom {
  const r = v as StoredRoom | null;
  return typeof r === 'object' && r !== null && typeof r.info?.id === 'string' && typeof r.tokenHash === 'string';
}

/**
 * A {@link RoomStore} shared by any number of lobby nodes through one Redis:
 * - `<prefix>room:<id>`: the room (JSON) with a TTL (`SET … PX`), so a room nobody heartbeats,
 *   e.g. one whose node died, vanishes by itself;
 * - `<prefix>rooms`: a sorted set of room ids (pruned of ids whose key expired), for listing;
 * - `<prefix>relay:<id>`: the public URL of the node whose relay holds the room's host, with a TTL;
 * - `<prefix>events`: pub/sub channel of puts and deletions. Expiries have no event in Redis
 *   (keyspace notifications are off by default), so each node compares its view with Redis every
 *   `syncMs` and reports rooms that vanished as `removed`/`expired` (and rooms it missed as `put`,
 *   e.g. after a Redis restart dropped a pub/sub message).
 */
export class RedisRoomStore implements RoomStore {
  private readonly listeners = new Set<(event: StoreEvent) => void>();
  /** Rooms this node has seen (its list cache), with the local time it last heard of each. */
  private readonly known = new Map<string, { room: StoredRoom; heard: number }>();
  private timer: Timer | undefined;
  private closed = false;
  private readonly p: string;
  private readonly clock: Clock;
  private readonly syncMs: number;

  private constructor(
    private readonly redis: RedisPair,
    options: RedisRoomStoreOptions,
  ) {
    this.p = options.prefix ?? 'np:lobby:';
    this.clock = options.clock ?? systemClock;
    this.syncMs = options.syncMs ?? 500;
  }

  /** Connects to `url` and subscribes to the change channel. */
  static async connect(url: string, options: RedisRoomStoreOptions = {}): Promise<RedisRoomStore> {
    const store = new RedisRoomStore(await connectRedisPair(url), options);
    await store.redis.sub.subscribe(`${store.p}events`, (message: string) => store.onMessage(message));
    await store.sync().catch(() => {});
    store.arm();
    return store;
  }

  async put(room: StoredRoom, ttlMs: number): Promise<void> {
    const id = room.info.id;
    const text = JSON.stringify(room);
    await this.redis.cmd
      .multi()
      .set(`${this.p}room:${id}`, text, { expiration: { type: 'PX', value: Math.max(1, Math.round(ttlMs)) } })
      .zAdd(`${this.p}rooms`, { score: room.info.createdAt, value: id })
      .publish(`${this.p}events`, JSON.stringify({ type: 'put', room }))
      .exec();
    // Listed here at once (the pub/sub echo, which tells this node's subscribers, follows).
    this.known.set(id, { room, heard: this.clock.now() });
  }

  async get(id: string): Promise<StoredRoom | undefined> {
    const text = await this.redis.cmd.get(`${this.p}room:${id}`);
    return text ? this.parse(text) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    const [n] = (await this.redis.cmd
      .multi()
      .del(`${this.p}room:${id}`)
      .zRem(`${this.p}rooms`, id)
      .del(`${this.p}relay:${id}`)
      .exec()) as unknown as [number];
    if (n === 0) return false;
    await this.redis.cmd.publish(`${this.p}events`, JSON.stringify({ type: 'removed', id, reason: 'deleted' }));
    return true;
  }

  /**
   * Every room, from this node's view: kept by the pub/sub channel (puts, deletions: within
   * milliseconds) and by the sync every `syncMs` (expiries, missed messages). Reading Redis for every
   * list would cost a full `MGET` of every room per request.
   */
  async list(): Promise<StoredRoom[]> {
    const out: StoredRoom[] = [];
    for (const k of this.known.values()) out.push(k.room);
    return out;
  }

  /** Every room, read from Redis (the sync's source of truth). */
  async fetchAll(): Promise<StoredRoom[]> {
    const ids = await this.redis.cmd.zRange(`${this.p}rooms`, 0, -1);
    const out: StoredRoom[] = [];
    const missing: string[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const texts = await this.redis.cmd.mGet(chunk.map((id) => `${this.p}room:${id}`));
      texts.forEach((t, j) => {
        const r = t ? this.parse(t) : undefined;
        if (r) out.push(r);
        else missing.push(chunk[j] as string);
      });
    }
    if (missing.length > 0) await this.redis.cmd.zRem(`${this.p}rooms`, missing);
    return out;
  }

  async count(): Promise<number> {
    return this.redis.cmd.zCard(`${this.p}rooms`);
  }

  async setRelay(room: string, url: string, ttlMs: number): Promise<void> {
    await this.redis.cmd.set(`${this.p}relay:${room}`, url, {
      expiration: { type: 'PX', value: Math.max(1, Math.round(ttlMs)) },
    });
  }

  async getRelay(room: string): Promise<string | undefined> {
    return (await this.redis.cmd.get(`${this.p}relay:${room}`)) ?? undefined;
  }

  async deleteRelay(room: string, url: string): Promise<void> {
    const key = `${this.p}relay:${room}`;
    if ((await this.redis.cmd.get(key)) === url) await this.redis.cmd.del(key);
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(abandon = false): Promise<void> {
    this.closed = true;
    this.timer?.cancel();
    this.listeners.clear();
    await closeRedisPair(this.redis, abandon);
  }

  private parse(text: string): StoredRoom | undefined {
    try {
      const v = JSON.parse(text) as unknown;
      return isStoredRoom(v) ? v : undefined;
    } catch {
      return undefined;
    }
  }

  private onMessage(message: string): void {
    let e: StoreEvent;
    try {
      e = JSON.parse(message) as StoreEvent;
    } catch {
      return;
    }
    if (e.type === 'put' && isStoredRoom(e.room)) {
      this.known.set(e.room.info.id, { room: e.room, heard: this.clock.now() });
      this.emit(e);
    } else if (e.type === 'removed' && typeof e.id === 'string') {
      if (!this.known.delete(e.id)) return;
      this.emit({ type: 'removed', id: e.id, reason: e.reason === 'expired' ? 'expired' : 'deleted' });
    }
  }

  private emit(e: StoreEvent): void {
    for (const l of this.listeners) l(e);
  }

  /** Reports rooms that vanished from Redis (expired) and rooms this node never heard of. */
  private async sync(): Promise<void> {
    const start = this.clock.now();
    const rooms = await this.fetchAll();
    const live = new Set<string>();
    for (const r of rooms) {
      live.add(r.info.id);
      const k = this.known.get(r.info.id);
      if (!k) {
        this.known.set(r.info.id, { room: r, heard: start });
        this.emit({ type: 'put', room: r });
      } else if (k.heard < start) k.room = r;
    }
    for (const [id, { heard }] of [...this.known]) {
      if (live.has(id) || heard >= start) continue; // heard of during this sync: not missing
      this.known.delete(id);
      this.emit({ type: 'removed', id, reason: 'expired' });
    }
  }

  private arm(): void {
    if (this.closed) return;
    this.timer = this.clock.setTimer(this.syncMs, () => {
      this.sync()
        .catch(() => {})
        .finally(() => this.arm());
    });
  }
}

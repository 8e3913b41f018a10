import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { addressKey, type Clock, RateBudget, type RateLimits, systemClock } from '@netplay/transport';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { LobbyError, type LobbyErrorCode } from './errors.js';
import { type FeedServerMessage, MAX_FEED_CLIENT_MESSAGE_BYTES, parseFeedClientMessage } from './feed-protocol.js';
import { matchRoom, parseFilter, type RoomFilter } from './room.js';
import type { RoomStore, StoreEvent } from './store.js';

/** WebSocket close codes of the feed. */
export const FeedCloseCode = {
  /** A refused message (bad JSON, bad filter). */
  protocol: 4002,
  /** Caps: sockets in total or per address. */
  refused: 4001,
  /** Over the message budget. */
  flood: 4004,
  /** The client does not read: its send buffer passed `maxBufferedBytes`. */
  slow: 4008,
} as const;

/** Options of {@link RoomFeed}. */
export interface RoomFeedOptions {
  /** The store whose changes are fed (its `subscribe` events) and whose rooms make the snapshots. */
  readonly store: RoomStore;
  /** Most feed sockets (default 4096) and per address (default 16). */
  readonly maxSockets?: number;
  /** Most feed sockets from one address (default 16); one more is refused with `limit`. */
  readonly maxSocketsPerAddress?: number;
  /** A socket whose unsent data passes this is closed (default 1 MiB). */
  readonly maxBufferedBytes?: number;
  /** Most rooms in a snapshot (default 500). */
  readonly maxSnapshotRooms?: number;
  /** Per-socket message budget (default 5 msg/s, 8 KiB/s, burst 4 s). */
  readonly rateLimits?: RateLimits;
  /** Time source of the per-socket budgets (default the system clock). */
  readonly clock?: Clock;
}

interface Sub {
  readonly ws: WebSocket;
  readonly key: string;
  readonly budget: RateBudget;
  filter: RoomFilter;
  closed: boolean;
}

/** The WebSocket change feed at `/feed`; see {@link FeedClientMessage} for the protocol. */
export class RoomFeed {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FEED_CLIENT_MESSAGE_BYTES,
    perMessageDeflate: false,
    clientTracking: false,
  });
  private readonly subs = new Set<Sub>();
  private readonly perAddress = new Map<string, number>();
  private readonly unsubscribe: () => void;
  private readonly clock: Clock;
  private readonly maxSockets: number;
  private readonly maxPerAddress: number;
  private readonly maxBuffered: number;
  private readonly maxSnapshot: number;
  private readonly rateLimits: RateLimits;
  /** Counters. */
  readonly stats = {
    /** Feed messages sent to sockets since the start (snapshots and changes). */
    sent: 0,
    /** Sockets refused (and closed), by {@link LobbyErrorCode}. */
    refused: {} as Partial<Record<LobbyErrorCode, number>>,
  };

  constructor(private readonly options: RoomFeedOptions) {
    this.clock = options.clock ?? systemClock;
    this.maxSockets = options.maxSockets ?? 4096;
    this.maxPerAddress = options.maxSocketsPerAddress ?? 16;
    this.maxBuffered = options.maxBufferedBytes ?? 1 << 20;
    this.maxSnapshot = options.maxSnapshotRooms ?? 500;
    this.rateLimits = options.rateLimits ?? { messagesPerSecond: 5, bytesPerSecond: 8 << 10, burstSeconds: 4 };
    this.unsubscribe = options.store.subscribe((e) => this.onEvent(e));
    this.wss.on('error', () => {});
  }

  /** Feed sockets open now. */
  get socketCount(): number {
    return this.subs.size;
  }

  /** Takes over an HTTP upgrade for `/feed` (query-string filter allowed: `/feed?game=x`). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws, req));
  }

  /** Closes every feed socket. */
  close(): void {
    this.unsubscribe();
    for (const s of this.subs) s.ws.terminate();
    this.subs.clear();
    this.wss.close();
  }

  private onSocket(ws: WebSocket, req: IncomingMessage): void {
    const key = addressKey(req.socket.remoteAddress ?? '?');
    const sub: Sub = { ws, key, budget: new RateBudget(this.rateLimits, this.clock.now()), filter: {}, closed: false };
    ws.on('error', () => {});
    if (this.subs.size >= this.maxSockets) {
      this.refuse(sub, 'limit', `feed full (${this.maxSockets} sockets)`, FeedCloseCode.refused);
      return;
    }
    if ((this.perAddress.get(key) ?? 0) >= this.maxPerAddress) {
      this.refuse(sub, 'limit', `too many feed sockets from ${key} (${this.maxPerAddress})`, FeedCloseCode.refused);
      return;
    }
    this.subs.add(sub);
    this.perAddress.set(key, (this.perAddress.get(key) ?? 0) + 1);
    ws.on('close', () => this.drop(sub));
    ws.on('message', (data, isBinary) => this.onMessage(sub, data, isBinary));
    try {
      const url = new URL(req.url ?? '/', 'http://lobby');
      sub.filter = parseFilter(url.searchParams);
    } catch (e) {
      this.refuse(sub, (e as LobbyError).code ?? 'bad-request', (e as Error).message, FeedCloseCode.protocol);
      return;
    }
    void this.snapshot(sub);
  }

  private onMessage(sub: Sub, data: RawData, isBinary: boolean): void {
    if (sub.closed) return;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (!sub.budget.take(bytes.length, this.clock.now())) {
      this.refuse(sub, 'flood', sub.budget.describe(), FeedCloseCode.flood);
      return;
    }
    if (isBinary) {
      this.refuse(sub, 'bad-json', 'binary messages are not part of the feed protocol', FeedCloseCode.protocol);
      return;
    }
    try {
      const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      sub.filter = parseFeedClientMessage(text).filter;
    } catch (e) {
      const err = e instanceof LobbyError ? e : new LobbyError('bad-json', 'the message is not UTF-8');
      this.refuse(sub, err.code, err.message, FeedCloseCode.protocol);
      return;
    }
    void this.snapshot(sub);
  }

  private async snapshot(sub: Sub): Promise<void> {
    const filter = sub.filter;
    let rooms: StoreEvent[] = [];
    try {
      rooms = (await this.options.store.list()).map((room) => ({ type: 'put' as const, room }));
    } catch (e) {
      this.refuse(sub, 'unavailable', `store failed: ${(e as Error).message}`.slice(0, 120), FeedCloseCode.refused);
      return;
    }
    if (sub.filter !== filter) return; // a newer filter's snapshot follows
    const matching = [];
    for (const e of rooms) if (e.type === 'put' && matchRoom(e.room.info, filter)) matching.push(e.room.info);
    matching.sort((a, b) => a.createdAt - b.createdAt);
    this.send(sub, { v: 1, type: 'snapshot', rooms: matching.slice(0, this.maxSnapshot) });
  }

  private onEvent(e: StoreEvent): void {
    if (e.type === 'put') {
      let text: string | undefined;
      for (const s of this.subs) {
        if (!matchRoom(e.room.info, s.filter)) continue;
        text ??= JSON.stringify({ v: 1, type: 'room', room: e.room.info });
        this.sendText(s, text);
      }
    } else {
      const text = JSON.stringify({ v: 1, type: 'removed', id: e.id, reason: e.reason });
      for (const s of this.subs) this.sendText(s, text);
    }
  }

  private send(sub: Sub, msg: FeedServerMessage): void {
    this.sendText(sub, JSON.stringify(msg));
  }

  private sendText(sub: Sub, text: string): void {
    if (sub.closed) return;
    if (sub.ws.bufferedAmount > this.maxBuffered) {
      sub.closed = true;
      sub.ws.close(FeedCloseCode.slow, 'slow consumer');
      sub.ws.terminate();
      return;
    }
    this.stats.sent++;
    sub.ws.send(text);
  }

  private refuse(sub: Sub, code: LobbyErrorCode, reason: string, closeCode: number): void {
    if (sub.closed) return;
    this.stats.refused[code] = (this.stats.refused[code] ?? 0) + 1;
    sub.ws.send(JSON.stringify({ v: 1, type: 'refused', code, reason: reason.slice(0, 200) }));
    sub.closed = true;
    sub.ws.close(closeCode, code);
    const t = setTimeout(() => sub.ws.terminate(), 1000);
    sub.ws.once('close', () => clearTimeout(t));
  }

  private drop(sub: Sub): void {
    sub.closed = true;
    if (!this.subs.delete(sub)) return;
    const n = (this.perAddress.get(sub.key) ?? 1) - 1;
    if (n > 0) this.perAddress.set(sub.key, n);
    else this.perAddress.delete(sub.key);
  }
}

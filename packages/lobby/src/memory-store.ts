import { type Clock, systemClock, type Timer } from '@netplay/transport';
import type { RoomStore, StoredRoom, StoreEvent } from './store.js';

/** Options of {@link MemoryRoomStore}. */
export interface MemoryRoomStoreOptions {
  /** Time source for TTLs (default the system clock); tests pass a `ManualClock`. */
  readonly clock?: Clock;
  /** How often expired records are swept (default 250 ms). */
  readonly sweepMs?: number;
}

interface Entry<T> {
  value: T;
  expiresAt: number;
}

/** A single-node {@link RoomStore} in memory: the default, and the one API tests drive with a `ManualClock`. */
export class MemoryRoomStore implements RoomStore {
  private readonly rooms = new Map<string, Entry<StoredRoom>>();
  private readonly relays = new Map<string, Entry<string>>();
  private readonly listeners = new Set<(event: StoreEvent) => void>();
  private readonly clock: Clock;
  private readonly sweepMs: number;
  private timer: Timer | undefined;
  private closed = false;

  constructor(options: MemoryRoomStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.sweepMs = options.sweepMs ?? 250;
  }

  async put(room: StoredRoom, ttlMs: number): Promise<void> {
    this.rooms.set(room.info.id, { value: room, expiresAt: this.clock.now() + ttlMs });
    this.arm();
    this.emit({ type: 'put', room });
  }

  async get(id: string): Promise<StoredRoom | undefined> {
    const e = this.rooms.get(id);
    return e && e.expiresAt > this.clock.now() ? e.value : undefined;
  }

  async delete(id: string): Promise<boolean> {
    if (!this.rooms.delete(id)) return false;
    this.relays.delete(id);
    this.emit({ type: 'removed', id, reason: 'deleted' });
    return true;
  }

  async list(): Promise<StoredRoom[]> {
    const now = this.clock.now();
    const out: StoredRoom[] = [];
    for (const e of this.rooms.values()) if (e.expiresAt > now) out.push(e.value);
    return out;
  }

  async count(): Promise<number> {
    return this.rooms.size;
  }

  async setRelay(room: string, url: string, ttlMs: number): Promise<void> {
    this.relays.set(room, { value: url, expiresAt: this.clock.now() + ttlMs });
    this.arm();
  }

  async getRelay(room: string): Promise<string | undefined> {
    const e = this.relays.get(room);
    return e && e.expiresAt > this.clock.now() ? e.value : undefined;
  }

  async deleteRelay(room: string, url: string): Promise<void> {
    if (this.relays.get(room)?.value === url) this.relays.delete(room);
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.listeners.clear();
  }

  private emit(event: StoreEvent): void {
    for (const l of this.listeners) l(event);
  }

  private arm(): void {
    if (this.timer || this.closed) return;
    this.timer = this.clock.setTimer(this.sweepMs, () => {
      this.timer = undefined;
      const now = this.clock.now();
      for (const [id, e] of this.rooms) {
        if (e.expiresAt > now) continue;
        this.rooms.delete(id);
        this.relays.delete(id);
        this.emit({ type: 'removed', id, reason: 'expired' });
      }
      for (const [id, e] of this.relays) if (e.expiresAt <= now) this.relays.delete(id);
      if (this.rooms.size > 0 || this.relays.size > 0) this.arm();
    });
  }
}

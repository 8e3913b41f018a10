import type { Clock, Timer } from '@netplay/transport';
import { systemClock } from '@netplay/transport';
import type { PeerSignal, SignalingServer } from '@netplay/transport-webrtc/server';
import type { AttachableRouter } from './lobby-server.js';
import { closeRedisPair, connectRedisPair, type RedisPair } from './redis-connection.js';

/** Options of {@link RedisSignalingRouter.connect}. */
export interface RedisSignalingRouterOptions {
  /** This node's id (unique among nodes). */
  readonly nodeId: string;
  /** Key and channel prefix (default `np:lobby:`). */
  readonly prefix?: string;
  /** TTL of the node's presence key; peers of a node whose key expired are dropped (default 5000 ms). */
  readonly nodeTtlMs?: number;
  readonly clock?: Clock;
}

type RouterMessage =
  | { readonly t: 'join' | 'leave'; readonly node: string; readonly room: string; readonly peer: string }
  | {
      readonly t: 'signal';
      readonly node: string;
      readonly room: string;
      readonly from: string;
      readonly to: string;
      readonly signal: PeerSignal;
      /** The IP the sender's node saw it at (the signaling server's stamp). */
      readonly address?: string;
    };

const SEP = '\n';

/**
 * Routes WebRTC signaling between lobby nodes over Redis pub/sub, through the signaling server's
 * `router` hook: each node publishes its peers' joins and leaves on `<prefix>sig` and records them
 * in the hash `<prefix>sig:peers` (`room⏎peer` → node, for nodes that start later); a signal for a
 * peer on another node is published on that node's channel `<prefix>sig:<node>`. Each node keeps
 * a presence key `<prefix>node:<id>` with a TTL; peers of a node whose key expired (a crashed
 * node) are dropped (`peer-left`). After a Redis restart the node re-records its own peers.
 */
export class RedisSignalingRouter implements AttachableRouter {
  private server: SignalingServer | undefined;
  private readonly remote = new Map<string, Map<string, string>>();
  private readonly local = new Set<string>();
  private timer: Timer | undefined;
  private closed = false;
  private readonly p: string;
  private readonly nodeTtlMs: number;
  private readonly clock: Clock;
  readonly nodeId: string;
  /** Counters. */
  readonly stats = { forwarded: 0, delivered: 0 };

  private constructor(
    private readonly redis: RedisPair,
    options: RedisSignalingRouterOptions,
  ) {
    this.nodeId = options.nodeId;
    this.p = options.prefix ?? 'np:lobby:';
    this.nodeTtlMs = options.nodeTtlMs ?? 5000;
    this.clock = options.clock ?? systemClock;
  }

  /** Connects, subscribes, and loads the peers other live nodes recorded. */
  static async connect(url: string, options: RedisSignalingRouterOptions): Promise<RedisSignalingRouter> {
    const r = new RedisSignalingRouter(await connectRedisPair(url), options);
    const handler = (message: string) => r.onMessage(message);
    await r.redis.sub.subscribe([`${r.p}sig`, `${r.p}sig:${r.nodeId}`], handler);
    await r.heartbeat();
    const all = await r.redis.cmd.hGetAll(`${r.p}sig:peers`);
    const nodes = new Set(Object.values(all));
    const alive = new Map<string, boolean>();
    for (const n of nodes) alive.set(n, (await r.redis.cmd.exists(`${r.p}node:${n}`)) === 1);
    for (const [field, node] of Object.entries(all)) {
      const [room, peer] = field.split(SEP);
      if (node === r.nodeId || room === undefined || peer === undefined) continue;
      if (alive.get(node)) r.addRemote(room, peer, node);
      else await r.redis.cmd.hDel(`${r.p}sig:peers`, field);
    }
    r.redis.cmd.on('ready', () => void r.republish());
    r.arm();
    return r;
  }

  attach(server: SignalingServer): void {
    this.server = server;
  }

  remotePeers(room: string): readonly string[] {
    const m = this.remote.get(room);
    return m ? [...m.keys()] : [];
  }

  joined(room: string, peer: string): void {
    this.local.add(room + SEP + peer);
    void this.redis.cmd
      .multi()
      .hSet(`${this.p}sig:peers`, room + SEP + peer, this.nodeId)
      .publish(`${this.p}sig`, JSON.stringify({ t: 'join', node: this.nodeId, room, peer }))
      .exec()
      .catch(() => {});
  }

  left(room: string, peer: string): void {
    this.local.delete(room + SEP + peer);
    void this.redis.cmd
      .multi()
      .hDel(`${this.p}sig:peers`, room + SEP + peer)
      .publish(`${this.p}sig`, JSON.stringify({ t: 'leave', node: this.nodeId, room, peer }))
      .exec()
      .catch(() => {});
  }

  forward(room: string, from: string, to: string, signal: PeerSignal, address?: string): void {
    const node = this.remote.get(room)?.get(to);
    if (!node) return;
    this.stats.forwarded++;
    void this.redis.cmd
      .publish(
        `${this.p}sig:${node}`,
        JSON.stringify({ t: 'signal', node: this.nodeId, room, from, to, signal, address }),
      )
      .catch(() => {});
  }

  /** Stops; with `abandon`, leaves this node's records for the TTL to clear (as a crash would). */
  async close(abandon = false): Promise<void> {
    this.closed = true;
    this.timer?.cancel();
    if (!abandon) {
      try {
        if (this.local.size > 0) await this.redis.cmd.hDel(`${this.p}sig:peers`, [...this.local]);
        await this.redis.cmd.del(`${this.p}node:${this.nodeId}`);
      } catch {
        // Redis gone: the TTL clears it
      }
    }
    await closeRedisPair(this.redis, abandon);
  }

  private onMessage(message: string): void {
    let m: RouterMessage;
    try {
      m = JSON.parse(message) as RouterMessage;
    } catch {
      return;
    }
    if (m.node === this.nodeId || typeof m.room !== 'string') return;
    if (m.t === 'join' && typeof m.peer === 'string') {
      this.addRemote(m.room, m.peer, m.node);
      this.server?.remoteJoined(m.room, m.peer);
    } else if (m.t === 'leave' && typeof m.peer === 'string') {
      if (this.removeRemote(m.room, m.peer, m.node)) this.server?.remoteLeft(m.room, m.peer);
    } else if (m.t === 'signal' && typeof m.to === 'string' && typeof m.from === 'string') {
      // Learn the sender's location too (a join message may have been lost).
      this.addRemote(m.room, m.from, m.node);
      const address = typeof m.address === 'string' ? m.address : undefined;
      if (this.server?.deliver(m.room, m.from, m.to, m.signal, address)) this.stats.delivered++;
    }
  }

  private addRemote(room: string, peer: string, node: string): void {
    let m = this.remote.get(room);
    if (!m) {
      m = new Map();
      this.remote.set(room, m);
    }
    m.set(peer, node);
  }

  private removeRemote(room: string, peer: string, node: string): boolean {
    const m = this.remote.get(room);
    if (m?.get(peer) !== node) return false;
    m.delete(peer);
    if (m.size === 0) this.remote.delete(room);
    return true;
  }

  private async heartbeat(): Promise<void> {
    await this.redis.cmd.set(`${this.p}node:${this.nodeId}`, '1', {
      expiration: { type: 'PX', value: this.nodeTtlMs },
    });
  }

  /** After a Redis restart: record this node's peers again. */
  private async republish(): Promise<void> {
    if (this.closed) return;
    try {
      await this.heartbeat();
      for (const field of this.local) await this.redis.cmd.hSet(`${this.p}sig:peers`, field, this.nodeId);
    } catch {
      // next reconnect
    }
  }

  /** Refreshes this node's presence and drops the peers of nodes whose presence expired. */
  private async sweep(): Promise<void> {
    await this.heartbeat();
    const nodes = new Set<string>();
    for (const m of this.remote.values()) for (const n of m.values()) nodes.add(n);
    for (const n of nodes) {
      if ((await this.redis.cmd.exists(`${this.p}node:${n}`)) === 1) continue;
      for (const [room, m] of [...this.remote]) {
        for (const [peer, node] of [...m]) {
          if (node !== n) continue;
          this.removeRemote(room, peer, node);
          this.server?.remoteLeft(room, peer);
          await this.redis.cmd.hDel(`${this.p}sig:peers`, room + SEP + peer);
        }
      }
    }
  }

  private arm(): void {
    if (this.closed) return;
    this.timer = this.clock.setTimer(this.nodeTtlMs / 3, () => {
      this.sweep()
        .catch(() => {})
        .finally(() => this.arm());
    });
  }
}

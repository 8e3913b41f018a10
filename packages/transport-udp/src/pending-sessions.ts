import {
  AdmissionGate,
  type AdmissionLimits,
  addressKey,
  type Clock,
  DEFAULT_ADMISSION_LIMITS,
  type Timer,
  TransportError,
} from '@netplay/transport';
import type { UdpPeer } from './peer.js';

/**
 * UDP's admission defaults: `AdmissionGate`'s caps (64 in total, 8 per address) with a 2 s
 * timeout. A session is pending between the server's ACCEPT and the first datagram carrying its
 * session id, which an honest client sends at once (one round trip), so 2 s covers lossy links.
 */
export const UDP_ADMISSION_LIMITS: AdmissionLimits = Object.freeze({
  ...DEFAULT_ADMISSION_LIMITS,
  pendingTimeoutMs: 2000,
});

/**
 * Server sessions that passed the cookie handshake (the client proved its address) but have not
 * been heard on their session yet, counted apart from `maxConnections` in an `AdmissionGate`: at
 * most `maxPendingPerAddress` per source address (host without port) and `maxPending` in total,
 * each aborted (nothing sent) when still pending after `pendingTimeoutMs`. A pending session is
 * not announced (`connection`) until it is confirmed.
 *
 * When an address already holds its share, its oldest pending session is aborted to make room
 * (the gate's `whenAddressFull: 'evict-oldest'`): a client behind the same address as an attacker
 * then needs only to answer one ACCEPT before that address fills its share again. And an evicted
 * session is remembered (address, session id, nonce; at most {@link REVIVE_ENTRIES}, while it is
 * younger than the keepalive, so it has sent nothing tracked yet): if its client's first datagram
 * arrives after the eviction, the server recreates the session ({@link revive}) instead of losing
 * it. That gives an attacker nothing new: answering the ACCEPT confirms a session anyway.
 */
/** Evicted sessions remembered for {@link PendingSessions.revive}. */
export const REVIVE_ENTRIES = 256;

interface Evicted {
  readonly session: number;
  readonly nonce: number;
  /** When the session was created. */
  readonly born: number;
}

/**
 * The server's sessions that have not completed their handshake: capped per address and in total
 * through an `AdmissionGate` (evicting the oldest of a full address), timed out, and remembered
 * for a while after eviction so a late first datagram can {@link PendingSessions.revive} them.
 */
export class PendingSessions {
  /** Recently evicted sessions by address (insertion order: oldest first). */
  private readonly evicted = new Map<string, Evicted>();
  /** When each pending session was created. */
  private readonly born = new Map<UdpPeer, number>();
  private readonly gate: AdmissionGate<UdpPeer>;
  private timer: Timer | undefined;
  private readonly expired: UdpPeer[] = [];
  /** Sessions aborted so far: evicted to make room, or still pending at the timeout. */
  dropped = 0;

  constructor(
    limits: AdmissionLimits,
    private readonly clock: Clock,
    /** How long an evicted session may be revived after it was created, ms (the keepalive). */
    private readonly reviveMs: number,
  ) {
    this.gate = new AdmissionGate<UdpPeer>({ whenAddressFull: 'evict-oldest', ...limits });
  }

  /** Sessions pending now. */
  get count(): number {
    return this.gate.pending;
  }

  /** Sessions pending now from `address` (host without port). */
  countFor(address: string): number {
    return this.gate.pendingFor(address);
  }

  /** Whether `peer` is pending. */
  has(peer: UdpPeer): boolean {
    return this.gate.has(peer);
  }

  /** A session was accepted: count it as pending (making room as the class says). */
  admit(peer: UdpPeer): void {
    const key = addressKey(peer.remoteAddress);
    const now = this.clock.now();
    const result = this.gate.admit(key, peer, now);
    if (!result.ok) {
      this.drop(peer, 'refused: too many pending sessions from its address');
      return;
    }
    this.born.set(peer, now);
    if (result.evicted) {
      this.remember(result.evicted);
      const why =
        result.evictedFor === 'per-address' ? 'its address opened newer sessions' : 'too many pending sessions';
      this.drop(result.evicted, `evicted: ${why}`);
    }
    this.arm();
  }

  /** The session was heard (confirmed), or ended: it is no longer pending. */
  release(peer: UdpPeer): void {
    this.gate.release(peer);
    this.born.delete(peer);
  }

  /** Whether an evicted session of `address` is remembered (see {@link revive}). */
  mayRevive(address: string): boolean {
    return this.evicted.has(address);
  }

  /**
   * The nonce of the session `session` of `address` if it was evicted before it could be heard and
   * may still be recreated (it is forgotten either way); undefined otherwise.
   */
  revive(address: string, session: number): number | undefined {
    const e = this.evicted.get(address);
    if (!e || e.session !== session) return undefined;
    this.evicted.delete(address);
    return this.clock.now() - e.born < this.reviveMs ? e.nonce : undefined;
  }

  /**
   * {@link revive} for a version-2 DATA packet, which names its session by the low 16 bits only:
   * the session id and nonce of the evicted session of `address` with that connection id.
   */
  reviveConn(
    address: string,
    conn: number,
  ):
    | {
        /** The full 32-bit session id the server had given the evicted session (its low 16 bits are `conn`). */
        session: number;
        /** The client's handshake nonce of that session, which the recreated session echoes. */
        nonce: number;
      }
    | undefined {
    const e = this.evicted.get(address);
    if (!e || (e.session & 0xffff) !== conn) return undefined;
    this.evicted.delete(address);
    return this.clock.now() - e.born < this.reviveMs ? { session: e.session, nonce: e.nonce } : undefined;
  }

  private remember(peer: UdpPeer): void {
    const born = this.born.get(peer);
    if (born === undefined) return;
    this.evicted.delete(peer.remoteAddress);
    if (this.evicted.size >= REVIVE_ENTRIES) {
      for (const k of this.evicted.keys()) {
        this.evicted.delete(k);
        break;
      }
    }
    this.evicted.set(peer.remoteAddress, { session: peer.session, nonce: peer.clientNonce, born });
  }

  /** Closes every pending session with `reason` (the listener is closing). */
  drain(reason: string): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.born.clear();
    this.evicted.clear();
    for (const p of this.gate.drain()) p.close(reason);
  }

  private drop(peer: UdpPeer, why: string): void {
    this.release(peer);
    this.dropped++;
    peer.abort(new TransportError('timeout', `pending session ${peer.remoteAddress} ${why}`));
  }

  private arm(): void {
    if (this.timer || this.gate.pending === 0) return;
    const period = Math.max(20, Math.min(500, this.gate.limits.pendingTimeoutMs / 10));
    this.timer = this.clock.setTimer(period, () => {
      this.timer = undefined;
      this.expired.length = 0;
      this.gate.expire(this.clock.now(), this.expired);
      for (const p of this.expired) this.drop(p, 'timed out before it was heard');
      this.expired.length = 0;
      this.arm();
    });
  }
}

import { DEFAULT_TIMEOUTS } from '@netplay/transport';
import { LockstepError } from './errors.js';

/**
 * Liveness by progress (issue 13) and the finality rule, shared by the three schedulers. A member
 * counts as alive while it delivers what the game needs: while the scheduler waits on it, only
 * progress of its inputs counts (a new packet time, a new advance, a new input counter), not
 * pings, acks, replays or undecodable bytes. See the README, "Finality and partitions".
 */
export interface LivenessOptions {
  /**
   * A member whose needed inputs have not advanced for this long while the scheduler waits on it
   * is reported `interrupted` (default 750 ms, as `DEFAULT_TIMEOUTS.interruptMs` of @netplay/transport).
   */
  readonly interruptMs?: number;
  /**
   * After this long the host removes it at an agreed frame (if its group has quorum; otherwise
   * the host ends `partitioned`), and a non-host that cannot hear the host usefully ends
   * `host-lost` (default 5000 ms, as `DEFAULT_TIMEOUTS.disconnectMs`).
   */
  readonly disconnectMs?: number;
  /**
   * Extra time a non-host, frozen on another member, waits for the host's decision (the LEAVE
   * travels) before it ends `host-lost` (default 1000 ms).
   */
  readonly slackMs?: number;
  /** `false` turns liveness off: the scheduler waits forever, as before issue 13 (default true). */
  readonly enabled?: boolean;
}

/** Why a scheduler ended (it runs no more frames): see the README, "Finality and partitions". */
export type EndReason =
  /** A non-host could not hear the host usefully for `disconnectMs` (or the host did not settle a stalled member in time). */
  | 'host-lost'
  /** The host's group lacked quorum for `disconnectMs` (it stopped running frames at once). */
  | 'partitioned'
  /** The host removed this peer (it learnt so from the host). */
  | 'removed';

/** What a scheduler reports in its `events` array (the driver empties it, as it does the outbox). */
export type LockstepEvent =
  /** Peer `peer` delivered nothing usable for `interruptMs` while we waited on it. */
  | {
      /** `'interrupted'`: reported once per interruption; a `resumed` follows if the peer delivers again. */
      readonly type: 'interrupted';
      /** The silent member's peer id (0–65535). */
      readonly peer: number;
      /** When the interruption was noticed: the `now` (ms, driver's clock) of the call that checked. */
      readonly at: number;
    }
  /** Peer `peer` delivers again. */
  | {
      /** `'resumed'`: the member reported `interrupted` delivered what we waited for again. */
      readonly type: 'resumed';
      /** The member's peer id (0–65535), as in its `interrupted` event. */
      readonly peer: number;
      /** When its delivery arrived: the `now` (ms, driver's clock) of the call that got it. */
      readonly at: number;
    }
  /** (Host) peer `peer` was removed: its port reads neutral from `frame` on. */
  | {
      /** `'removed'`: the host's liveness removed a stalled member (or a watcher that stopped reporting); a shell's own `removePeer` call reports none. */
      readonly type: 'removed';
      /** The removed member's peer id (0–65535). */
      readonly peer: number;
      /** The agreed cut: the first frame on which its port reads neutral, the same on every member. */
      readonly frame: number;
      /** When the removal was decided: the `now` (ms, driver's clock) of the call that decided it. */
      readonly at: number;
    }
  /** This scheduler ended: it runs no more frames; frames up to `finalFrame` are final (-1: none). */
  | {
      /** `'ended'`: reported once; `poll` returns no frame after it. */
      readonly type: 'ended';
      /** Why it ended: `host-lost`, `partitioned` or `removed` (see {@link EndReason}). */
      readonly reason: EndReason;
      /** The last frame that is final (the same on every peer that ran it); -1 when no frame is. */
      readonly finalFrame: number;
      /** When it ended: the `now` (ms, driver's clock) of the call that ended it. */
      readonly at: number;
    };

/** Liveness of one member, as this peer sees it. */
export interface Watch {
  readonly id: number;
  /** Last time its needed inputs advanced (-1 until the first check). */
  progressAt: number;
  /** Last time a valid message came from it (-1 until the first check). */
  heardAt: number;
  /** Since when the scheduler waits on it (-1: it does not). */
  waitingSince: number;
  interrupted: boolean;
}

/** At most this many events are kept when the driver does not empty `events` (the oldest go). */
const MAX_EVENTS = 256;

/** The liveness state machine of one scheduler (a helper: the schedulers own the protocol). */
export class Liveness {
  readonly interruptMs: number;
  readonly disconnectMs: number;
  readonly slackMs: number;
  readonly enabled: boolean;
  /** Why this scheduler ended, once it did. */
  ended: EndReason | undefined;
  /** The last final frame once ended (-1 none). */
  finalFrame = -1;
  /** Since when this peer's due frame cannot run (-1: it is not blocked). */
  blockedSince = -1;
  /** Since when this peer's group lacks quorum (-1: it has it). */
  noQuorumSince = -1;
  /**
   * The earliest time the next check can change anything (-1: check at once). Between checks the
   * thresholds only move later (progress and messages push them back), so a scheduler's tick is a
   * comparison per frame; what can bring one earlier (a new wait, a block, a member back while
   * interrupted or without quorum, a membership change) resets it.
   */
  due = -1;
  private readonly watches = new Map<number, Watch>();
  private readonly list: Watch[] = [];

  constructor(
    options: LivenessOptions | undefined,
    readonly events: LockstepEvent[],
  ) {
    this.interruptMs = options?.interruptMs ?? DEFAULT_TIMEOUTS.interruptMs;
    this.disconnectMs = options?.disconnectMs ?? DEFAULT_TIMEOUTS.disconnectMs;
    this.slackMs = options?.slackMs ?? 1000;
    this.enabled = options?.enabled !== false;
    if (!(this.interruptMs > 0) || !(this.disconnectMs >= this.interruptMs) || !(this.slackMs >= 0))
      throw new LockstepError('bad-argument', 'liveness needs 0 < interruptMs <= disconnectMs and slackMs >= 0');
  }

  /** Members watched (this peer excluded). */
  get size(): number {
    return this.list.length;
  }

  /** The watch of `id`, if it is a member. */
  get(id: number): Watch | undefined {
    return this.watches.get(id);
  }

  /** Starts watching member `id` (its clocks start at the next check). */
  add(id: number): void {
    if (this.watches.has(id)) return;
    const w: Watch = {
      id,
      progressAt: -1,
      heardAt: -1,
      waitingSince: -1,
      interrupted: false,
    };
    this.watches.set(id, w);
    this.list.push(w);
    this.due = -1;
  }

  /** Stops watching `id` (it left the membership). */
  remove(id: number): void {
    const w = this.watches.get(id);
    if (!w) return;
    this.watches.delete(id);
    this.list.splice(this.list.indexOf(w), 1);
    this.due = -1;
  }

  /** `id` delivered what the game needs (its inputs advanced). */
  progress(id: number, now: number): void {
    const w = this.watches.get(id);
    if (!w) return;
    w.progressAt = now;
    w.heardAt = now;
    if (this.noQuorumSince >= 0) this.due = -1;
    if (w.interrupted) {
      this.due = -1;
      w.interrupted = false;
      this.emit({ type: 'resumed', peer: id, at: now });
    }
  }

  /** A valid message came from `id` (life only while nothing of it is waited on). */
  heard(id: number, now: number): void {
    const w = this.watches.get(id);
    if (!w) return;
    w.heardAt = now;
    if (w.interrupted || this.noQuorumSince >= 0) this.due = -1;
  }

  /** Whether the scheduler waits on `w` now (its inputs for the due frame are missing). */
  waiting(w: Watch, waiting: boolean, now: number): void {
    if (!waiting) w.waitingSince = -1;
    else if (w.waitingSince < 0) {
      w.waitingSince = now;
      this.due = -1;
    }
  }

  /** The due frame ran (or could): not blocked. */
  ran(): void {
    this.blockedSince = -1;
  }

  /** The due frame cannot run. */
  blocked(now: number): void {
    if (this.blockedSince < 0) {
      this.blockedSince = now;
      this.due = -1;
    }
  }

  /** Whether the due frame has been blocked `disconnectMs + slackMs` at `now` (see {@link stalledOrSilent}). */
  frozenTooLong(now: number): boolean {
    return this.blockedSince >= 0 && now >= this.blockedSince + this.disconnectMs + this.slackMs;
  }

  /**
   * Whether `w` has been stalled (waited on without progress) or silent for `ms` at `now`. Written
   * as `now >= since + ms`, the sum {@link nextCheckAt} wakes at: `now - since >= ms` can be false
   * at that very time with fractional-ms clocks (a threshold skipped until the next wake).
   */
  stalledOrSilent(w: Watch, now: number, ms: number): boolean {
    if (now >= w.heardAt + ms) return true;
    if (w.waitingSince < 0) return false;
    // biome-ignore lint/complexity/useMathMinMax: Math.max would turn whole-ms times into heap numbers
    return now >= (w.waitingSince > w.progressAt ? w.waitingSince : w.progressAt) + ms;
  }

  /** Whether `w` is in this peer's group: heard within `interruptMs` and not stalled that long. */
  inGroup(w: Watch, now: number): boolean {
    return !this.stalledOrSilent(w, now, this.interruptMs);
  }

  /**
   * Whether this peer's group (itself and the members it hears usefully, `except` left out) has
   * quorum over the membership (this peer and every watched member): a strict majority, or
   * exactly half with the host in it.
   */
  hasQuorum(now: number, selfIsHost: boolean, hostId: number, except = -1): boolean {
    const members = this.list.length + 1;
    let group = 1;
    let hostIn = selfIsHost;
    for (let i = 0; i < this.list.length; i++) {
      const w = this.list[i]!;
      if (w.id === except || !this.inGroup(w, now)) continue;
      group++;
      if (w.id === hostId) hostIn = true;
    }
    return 2 * group > members || (2 * group === members && hostIn);
  }

  /** Starts the clocks of members seen for the first time; emits `interrupted` events. */
  check(now: number): void {
    for (let i = 0; i < this.list.length; i++) {
      const w = this.list[i]!;
      if (w.progressAt < 0) w.progressAt = now;
      if (w.heardAt < 0) w.heardAt = now;
      if (!w.interrupted && this.stalledOrSilent(w, now, this.interruptMs)) {
        w.interrupted = true;
        this.emit({ type: 'interrupted', peer: w.id, at: now });
      }
    }
  }

  /** The first member stalled (or silent) for `disconnectMs`, if any. */
  lost(now: number): Watch | undefined {
    for (let i = 0; i < this.list.length; i++) {
      const w = this.list[i]!;
      if (this.stalledOrSilent(w, now, this.disconnectMs)) return w;
    }
    return undefined;
  }

  /** The next time after `now` a threshold may be crossed (Infinity when nothing is pending). */
  nextCheckAt(now: number): number {
    let at = Infinity;
    for (let i = 0; i < this.list.length; i++) {
      const w = this.list[i]!;
      const waited = w.waitingSince >= 0;
      // biome-ignore lint/complexity/useMathMinMax: as in stalledOrSilent
      const base = waited ? (w.waitingSince > w.progressAt ? w.waitingSince : w.progressAt) : w.heardAt;
      if (base < 0) continue;
      at = after(now, at, base + this.interruptMs);
      at = after(now, at, base + this.disconnectMs);
      if (waited) {
        at = after(now, at, w.heardAt + this.interruptMs);
        at = after(now, at, w.heardAt + this.disconnectMs);
      }
    }
    if (this.blockedSince >= 0) at = after(now, at, this.blockedSince + this.disconnectMs + this.slackMs);
    if (this.noQuorumSince >= 0) at = after(now, at, this.noQuorumSince + this.disconnectMs);
    return at;
  }

  /** Whether a check is due at `now` (see {@link due}); call {@link checked} after checking. */
  needsCheck(now: number): boolean {
    return this.enabled && this.ended === undefined && now >= this.due;
  }

  /** When the driver should wake the scheduler for its next check (Infinity: never). */
  wakeAt(now: number): number {
    if (!this.enabled || this.ended !== undefined) return Infinity;
    // biome-ignore lint/complexity/useMathMinMax: as in stalledOrSilent
    return this.due > now ? this.due : now;
  }

  /** A check ran at `now`: the next one is due at the next threshold. */
  checked(now: number): void {
    this.due = this.nextCheckAt(now);
  }

  /** Ends the scheduler: no more frames; frames up to `finalFrame` stay final. */
  end(reason: EndReason, finalFrame: number, now: number): void {
    if (this.ended) return;
    this.ended = reason;
    this.finalFrame = finalFrame;
    this.emit({ type: 'ended', reason, finalFrame, at: now });
  }

  /** Reports a removal decided by the host. */
  removed(peer: number, frame: number, now: number): void {
    this.emit({ type: 'removed', peer, frame, at: now });
  }

  private emit(e: LockstepEvent): void {
    if (this.events.length >= MAX_EVENTS) this.events.shift();
    this.events.push(e);
  }
}

/**
 * The finality rule for the P2P schedulers (mesh, frame-advance), run on every tick. The host
 * removes a member stalled (or silent) for `disconnectMs` when its group has quorum without it
 * (the return value: the id to remove, or -1), and ends `partitioned` when it has not; a host
 * whose group lacks quorum runs no frame (see {@link Liveness.noQuorumSince}) and ends
 * `partitioned` after `disconnectMs` (or once frozen `disconnectMs + slackMs`). A non-host
 * ends `host-lost` when the host is stalled or silent for `disconnectMs`, or when it has been
 * frozen for `disconnectMs + slackMs` (the host did not settle a stalled member in time).
 */
export function p2pVerdict(live: Liveness, now: number, selfId: number, hostId: number, finalFrame: number): number {
  if (!live.needsCheck(now)) return -1;
  const id = verdict(live, now, selfId, hostId, finalFrame);
  live.checked(now);
  return id;
}

function verdict(live: Liveness, now: number, selfId: number, hostId: number, finalFrame: number): number {
  live.check(now);
  if (selfId === hostId) {
    const lost = live.lost(now);
    if (lost) {
      if (live.hasQuorum(now, true, hostId, lost.id)) return lost.id;
      // A member is lost and the group cannot remove it: the game cannot go on (rule 3).
      live.end('partitioned', finalFrame, now);
      return -1;
    }
    if (live.hasQuorum(now, true, hostId)) live.noQuorumSince = -1;
    else if (live.noQuorumSince < 0) live.noQuorumSince = now;
    else if (now >= live.noQuorumSince + live.disconnectMs) live.end('partitioned', finalFrame, now);
    if (live.frozenTooLong(now)) live.end('partitioned', finalFrame, now);
    return -1;
  }
  const h = live.get(hostId);
  if ((h && live.stalledOrSilent(h, now, live.disconnectMs)) || live.frozenTooLong(now))
    live.end('host-lost', finalFrame, now);
  return -1;
}

/** `t` if it is after `now` and before `at`, else `at` (the earliest future threshold). */
function after(now: number, at: number, t: number): number {
  return t > now && t < at ? t : at;
}

import { CONTROL_CHANNEL, INPUT_CHANNEL } from './channels.js';
import { MessageType } from './messages.js';
import type { PeerSet } from './peer-set.js';
import type { Remote } from './remote.js';

/** Decisions kept for re-sending (a peer missing an older one cannot be helped: it is removed). */
export const DECISIONS_KEPT = 32;
/** A re-sent decision goes on the unreliable channel up to this size (every transport takes 256+). */
const UNRELIABLE_MAX = 256;
/** Added to the round trip before a decision is (re-)sent again: the peer's INPUT heartbeat and jitter. */
const RESEND_SLACK_MS = 150;

/** Whether `type` is a message type the host counts as a decision (LEAVE, ENTER, MODE, LOAD). */
export function isDecisionType(type: number | undefined): boolean {
  return (
    type === MessageType.Leave || type === MessageType.Enter || type === MessageType.Mode || type === MessageType.Load
  );
}

/** DECISION: `u8 18, u8 count (the host's decision count with this one, mod 256), the decision message`. */
export function encodeDecision(count: number, decision: Uint8Array): Uint8Array {
  const b = new Uint8Array(2 + decision.length);
  b[0] = MessageType.Decision;
  b[1] = count & 0xff;
  b.set(decision, 2);
  return b;
}

/**
 * The host decisions this peer sent (host) or applied (others), by their count, and their re-sending.
 * A decision goes out once on the reliable channel, wrapped in DECISION with its count; a peer
 * applies it only when its count is the next one it expects (so copies are harmless). The host
 * reads from every peer's INPUT how many decisions it applied: one that stays behind for a round
 * trip plus {@link RESEND_SLACK_MS} is sent the decisions it lacks again, on the unreliable channel
 * (a copy on the reliable one would wait behind the original, held up by retransmission backoff:
 * a LEAVE took 5.4 s at 20 % loss), and again after each such interval while it stays behind. A
 * peer that becomes host re-sends from the decisions it applied. Only the last {@link DECISIONS_KEPT}
 * are kept.
 * @internal
 */
export class DecisionLog {
  private readonly kept: Array<Uint8Array | undefined> = new Array(256).fill(undefined);
  /** Decisions re-sent (statistics, and the tests' proof that the path ran). */
  resent = 0;

  constructor(private readonly peers: PeerSet) {}

  /** Keeps decision number `count` (mod 256) as its DECISION message; returns that message. */
  record(count: number, decision: Uint8Array): Uint8Array {
    const wrapped = encodeDecision(count, decision);
    this.kept[count & 0xff] = wrapped;
    this.kept[(count - DECISIONS_KEPT) & 0xff] = undefined;
    return wrapped;
  }

  /**
   * Host: re-sends to every connected peer the decisions its INPUT shows it lacks (`count`: the
   * decisions made), once it stayed behind for its round trip plus the slack since the last send.
   */
  resend(count: number, now: number): void {
    for (const r of this.peers.list) {
      if (!r.connected || !r.inputSeen || r.decisions === count) {
        r.decisionsSentAt = -1;
        continue;
      }
      const missing = (count - r.decisions) & 0xff;
      if (missing >= 128) continue; // it is ahead (it applied a decision of an earlier host this one did not)
      if (r.decisionsSentAt < 0) {
        // The original is on its way: wait a round trip for the peer's INPUT to say it arrived.
        r.decisionsSentAt = now;
        continue;
      }
      if (now - r.decisionsSentAt < r.rttMs + RESEND_SLACK_MS) continue;
      r.decisionsSentAt = now;
      this.sendFrom(r, (r.decisions + 1) & 0xff, missing);
    }
  }

  /** Sends `r` the `n` kept decisions from number `first` on, in order. */
  private sendFrom(r: Remote, first: number, n: number): void {
    for (let i = 0; i < n; i++) {
      const d = this.kept[(first + i) & 0xff];
      if (d === undefined) return;
      this.resent++;
      this.peers.send(r, d.length <= UNRELIABLE_MAX ? INPUT_CHANNEL : CONTROL_CHANNEL, d);
    }
  }
}

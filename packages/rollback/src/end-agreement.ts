import { DecodeError } from '@netplay/protocol';
import { CONTROL_CHANNEL, INPUT_CHANNEL } from './channels.js';
import { MessageType, need, readU32, writeU32 } from './messages.js';
import type { PeerSet } from './peer-set.js';
import type { Remote } from './remote.js';

/** END flags: the sender asks for an answer (it starts its end), it is the host, it ended. */
const ASK = 0x01;
const HOST = 0x02;
const FINAL = 0x04;

/** Why a group that cannot go on ends: `host-lost` when no member of it is the host, else `partitioned`. */
export type AgreedEndReason = 'host-lost' | 'partitioned';

/** What one peer said in an END: its last final frame, whether it is the host, whether it ended. */
interface Proposal {
  frame: number;
  host: boolean;
  final: boolean;
  /**
   * It started its own end (sent an ASK): it stopped finalizing, so its frame is its last. An
   * answer from a member that still finalizes may be passed by frames it finalizes after answering
   * (the held reports of the others still in flight): a peer that ended on such an answer could
   * end a frame before that member (session hand-over property, [886725230, 6, 7, 199, 4243]).
   */
  frozen: boolean;
}

/** How many times an ASK is re-sent (unreliable) within the wait to a member that has not answered. */
const ASK_RESENDS = 4;

/** END: `u8 19, u8 flags (0x01 ASK, 0x02 HOST, 0x04 FINAL), u32 the sender's last final frame`. */
export function encodeEnd(flags: number, frame: number): Uint8Array {
  const b = new Uint8Array(6);
  b[0] = MessageType.End;
  b[1] = flags;
  writeU32(b, 2, frame);
  return b;
}

/**
 * The end agreement of a group that cannot go on (issue 15): its peers end with one reason at one
 * final frame. When the quorum rule says this peer must end, it sends END (ASK, its last final
 * frame, whether it is the host) to every member it still hears usefully and waits, at most
 * `waitMs`, for each one's own end (its ASK, or the END of one that ended: an answer of a member
 * still finalizing counts in the frame but does not end the wait). Then it
 * ends at the highest frame any of them had final and with one reason: `partitioned` when one of
 * them is the host, else `host-lost`. Every member holds every input of that frame (a frame is final
 * only once every member reported holding its inputs: `held`), so this peer's state of it is the
 * same; it runs on until it simulated that frame with those inputs (`ready`), within a second
 * `waitMs`. A peer that hears nobody ends alone at its own frame. Answers go out whatever this
 * peer's state (its last final frame, final everywhere).
 * Every END goes on the reliable channel and, as a copy, on the unreliable one, and an ASK not yet
 * answered is re-sent there {@link ASK_RESENDS} times within the wait: on a lossy link the reliable
 * copy may wait behind a retransmission for longer than the wait (partition property: 7 players,
 * 4 % loss, the host's answer reached p2 650 ms late and p2 ended `host-lost` while the host and
 * p1 ended `partitioned`).
 * @internal
 */
export class EndAgreement {
  private readonly heard = new Map<string, Proposal>();
  private waiting: Set<string> | undefined;
  private deadline = 0;
  private ask: Uint8Array | undefined;
  private askedAt = 0;

  constructor(
    private readonly peers: PeerSet,
    private readonly waitMs: number,
  ) {}

  /** Whether this peer started its end (it sent its END and waits for the others'). */
  get started(): boolean {
    return this.waiting !== undefined;
  }

  /** Quorum is back: the end is off, and what the others said belongs to the past episode. */
  reset(): void {
    this.waiting = undefined;
    this.ask = undefined;
    this.heard.clear();
  }

  /** Starts this peer's end: asks every member of its group (`group`) for its last final frame. */
  start(now: number, frame: number, isHost: boolean, group: (r: Remote) => boolean): void {
    this.waiting = new Set();
    this.deadline = now + this.waitMs;
    const ask = encodeEnd(ASK | (isHost ? HOST : 0), frame);
    this.ask = ask;
    this.askedAt = now;
    for (const r of this.peers.list) {
      if (!r.connected || !group(r)) continue;
      this.waiting.add(r.peer);
      this.sendBoth(r, ask);
    }
  }

  /** Sends `msg` on the reliable channel and a copy on the unreliable one. */
  private sendBoth(r: Remote, msg: Uint8Array): void {
    this.peers.send(r, CONTROL_CHANNEL, msg);
    this.peers.send(r, INPUT_CHANNEL, msg);
  }

  /** Whether `p` (what a member said) settles this peer's wait for it. */
  private static answered(p: Proposal | undefined): boolean {
    return p !== undefined && (p.frozen || p.final);
  }

  /**
   * The agreed end once every member asked answered (or left, or ended) or the wait ran out:
   * the highest frame proposed (own `frame` included) and the reason; undefined while waiting.
   */
  settle(now: number, frame: number, isHost: boolean): { frame: number; reason: AgreedEndReason } | undefined {
    const waiting = this.waiting;
    if (waiting === undefined) return undefined;
    if (now < this.deadline) {
      const resend = this.ask !== undefined && now - this.askedAt >= this.waitMs / (ASK_RESENDS + 1);
      if (resend) this.askedAt = now;
      let open = false;
      for (const peer of waiting) {
        const r = this.peers.byPeer.get(peer);
        if (r?.connected !== true || EndAgreement.answered(this.heard.get(peer))) continue;
        open = true;
        if (resend) this.peers.send(r, INPUT_CHANNEL, this.ask!);
      }
      if (open) return undefined;
    }
    let best = frame;
    let host = isHost;
    for (const [peer, p] of this.heard) {
      if (!waiting.has(peer) && !p.final) continue;
      if (p.frame > best) best = p.frame;
      if (p.host) host = true;
    }
    return { frame: best, reason: host ? 'partitioned' : 'host-lost' };
  }

  /** The wait for the agreed frame to be simulated here is over (`waitMs` after the first wait). */
  overdue(now: number): boolean {
    return now >= this.deadline + this.waitMs;
  }

  /** This peer ended at `frame` by the agreement: tells the members asked, so a late one adopts it. */
  ended(frame: number, isHost: boolean): void {
    const msg = encodeEnd(FINAL | (isHost ? HOST : 0), frame);
    for (const r of this.peers.list) if (r.connected) this.sendBoth(r, msg);
  }

  /** An END from `r`: kept; answered with this peer's last final frame when it asks. */
  onEnd(r: Remote, data: Uint8Array, frame: number, isHost: boolean): void {
    need(data, 6, 'END');
    const flags = data[1]!;
    if (flags > 7) throw new DecodeError('bad-value', 1, `END flags ${flags}`);
    // A late copy of an earlier END (the two channels race) does not undo a FINAL already heard.
    const before = this.heard.get(r.peer);
    if ((flags & FINAL) !== 0 || before?.final !== true)
      this.heard.set(r.peer, {
        frame: readU32(data, 2),
        host: (flags & HOST) !== 0,
        final: (flags & FINAL) !== 0,
        frozen: (flags & ASK) !== 0 || before?.frozen === true,
      });
    if ((flags & ASK) !== 0) this.sendBoth(r, encodeEnd(isHost ? HOST : 0, frame));
  }
}

import { type Connection, TransportError } from '@netplay/transport';
import { RELAY_CONTROL_CHANNEL } from './channels.js';
import { RelayFramer } from './relay.js';

/** What the host keeps of the players' broadcasts for a player entering the game (frame-advance: {@link BroadcastHistory}; lockstep-p2p: `MeshBroadcastHistory`). */
export interface P2PHistory {
  /** Player `slot` broadcast `payload` on `channel` (index `ci`). */
  record(slot: number, channel: string, ci: number, payload: Uint8Array): void;
  /** Player `slot` left: its stream is forgotten. */
  forget(slot: number): void;
}

/** Broadcast messages kept per player (the last ones it sent), for a player entering the game. */
export const BROADCAST_HISTORY = 256;

/** Frame-advance message types that carry a frame (`u8 type, u32 frame, …`): an event and an advance. */
const FA_EVENT = 1;
const FA_ADVANCE = 2;

/**
 * frame-advance at the host: the last {@link BROADCAST_HISTORY} `sched` messages each player
 * broadcast (relayed by the host to every other player), so that a player entering the running
 * game gets each member's stream from where it matters. In the relay, a member's broadcasts reach
 * the newcomer through the host from its admission (SYNC) on, but the events the member scheduled
 * just before, for frames the newcomer will run, went out earlier; and `FrameAdvancePeer`'s own
 * history for a newcomer is a per-peer message on `sched`, which the session's routes send only as
 * broadcasts. So at the admission the host replays, per member, the suffix of its stream from its
 * first event or advance for a frame at or after the newcomer's earliest frame (the host's next
 * frame: its entry frame is later), in the member's order, before forwarding anything newer; the
 * newcomer's scheduler holds it until its welcome, and drops what is before its entry frame.
 */
export class BroadcastHistory implements P2PHistory {
  private readonly rings = new Map<number, { frames: number[]; data: Uint8Array[]; ci: number[]; at: number }>();
  private readonly framer = new RelayFramer();

  /** Player `slot` broadcast `payload` on channel index `ci` (`channel` its name); kept if it is on `sched`. */
  record(slot: number, channel: string, ci: number, payload: Uint8Array): void {
    if (channel !== 'sched' || payload.length < 5) return;
    const type = payload[0]!;
    const frame =
      type === FA_EVENT || type === FA_ADVANCE
        ? ((payload[1]! << 24) | (payload[2]! << 16) | (payload[3]! << 8) | payload[4]!) >>> 0
        : -1;
    let r = this.rings.get(slot);
    if (r === undefined) {
      r = { frames: [], data: [], ci: [], at: 0 };
      this.rings.set(slot, r);
    }
    if (r.data.length < BROADCAST_HISTORY) {
      r.frames.push(frame);
      r.data.push(payload.slice());
      r.ci.push(ci);
      return;
    }
    r.frames[r.at] = frame;
    r.data[r.at] = payload.slice();
    r.ci[r.at] = ci;
    r.at = (r.at + 1) % BROADCAST_HISTORY;
  }

  /** Player `slot` left: its stream is forgotten (a newcomer in its slot starts a new one). */
  forget(slot: number): void {
    this.rings.delete(slot);
  }

  /**
   * Sends `to` (the newcomer in slot `self`), on its connection, every other player's kept stream
   * from its first event or advance for frame `from` or later, as the host relays it
   * (`[source][channel][payload]` on `np-relay`).
   */
  replay(to: Connection, self: number, from: number): number {
    let sent = 0;
    for (const [slot, r] of this.rings) {
      if (slot === self) continue;
      const n = r.data.length;
      let start = -1;
      for (let k = 0; k < n; k++) {
        const i = (r.at + k) % n;
        if (r.frames[i]! >= from) {
          start = k;
          break;
        }
      }
      if (start < 0) continue;
      for (let k = start; k < n; k++) {
        const i = (r.at + k) % n;
        if (to.state === 'closed') return sent;
        try {
          to.send(RELAY_CONTROL_CHANNEL, this.framer.frameRouted(slot, r.ci[i]!, r.data[i]!));
          sent++;
        } catch (e) {
          if (!(e instanceof TransportError)) throw e;
        }
      }
    }
    return sent;
  }
}

import { DecodeError } from '@netplay/protocol';
import { LockstepError } from './errors.js';
import { J_ACCEPTED, K_BASE, K_PACKET } from './mesh-join.js';
import { packetTime, u32msg } from './mesh-packets.js';
import { Ring, readU32BE } from './pool.js';

/** Items kept per member by default (a packet a frame: over 8 s at 60 Hz; a session's sync interval is ~100 frames). */
export const MESH_RELAY_HISTORY = 512;

interface Item {
  id: number;
  time: number;
  bytes: Uint8Array;
}

/**
 * The mesh's late-join histories for a relaying host (a star: @netplay/session, the tests' hub).
 * A `MeshPeer` member sends a newcomer its own input stream since the sync block as per-peer
 * messages on `input`, a broadcast channel, which a star's clients send only once, to the host. So
 * the host records what each member broadcasts on `input` (the reliable copy, in order: the
 * relay forwards it so) and, when its own scheduler sends a candidate the acceptance (`4` on
 * `join`), replays to the candidate each other member's stream as that member would: a base
 * (`3, u32 first id`) and every packet from the last one at or before the sync frame on. At most
 * `capacity` packets per member (reused slots: nothing allocated per packet once full); a member
 * more than that ahead of the sync frame gets a history that starts later (the newcomer then
 * stalls on it: size `capacity` to cover a sync interval plus the lag).
 */
export class MeshRelayHistory {
  private readonly rings = new Map<number, Ring<Item>>();

  /**
   * @param ports The core's ports (the packets' shape).
   * @param capacity Packets kept per member (default {@link MESH_RELAY_HISTORY}).
   */
  constructor(
    private readonly ports: number,
    private readonly capacity = MESH_RELAY_HISTORY,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new LockstepError('bad-argument', `capacity must be an integer >= 1, got ${capacity}`);
  }

  /** The sync frame of a host's message if it is an acceptance (`4` on `join`), else `undefined`. */
  static acceptedSync(channel: string, data: Uint8Array): number | undefined {
    return channel === 'join' && data[0] === J_ACCEPTED && data.length >= 13 ? readU32BE(data, 9) : undefined;
  }

  /**
   * Member `from` broadcast `data` on `channel`: kept if it is a well-formed packet on `input`
   * (anything else is ignored; a malformed packet too: the host's scheduler drops it as well).
   */
  record(from: number, channel: string, data: Uint8Array): void {
    if (channel !== 'input' || data[0] !== K_PACKET || data.length < 5) return;
    let time: number;
    try {
      time = packetTime(data, this.ports);
    } catch (e) {
      if (e instanceof DecodeError) return;
      throw e;
    }
    let ring = this.rings.get(from);
    if (ring === undefined) {
      ring = new Ring<Item>(() => ({ id: 0, time: 0, bytes: new Uint8Array(data.length) }));
      this.rings.set(from, ring);
    }
    while (ring.length >= this.capacity) ring.shift();
    const item = ring.push();
    item.id = readU32BE(data, 1);
    item.time = time;
    if (item.bytes.length !== data.length) item.bytes = new Uint8Array(data.length);
    item.bytes.set(data);
  }

  /** Member `id` left: its stream is forgotten (a successor under its id starts a new one). */
  forget(id: number): void {
    this.rings.delete(id);
  }

  /**
   * Replays to candidate `cand` every other member's stream from the last packet at or before
   * frame `sync` on, after a base naming its id: `send(from, channel, data)` for each (`data` is a
   * copy). Returns the messages sent.
   */
  replay(cand: number, sync: number, send: (from: number, channel: 'input', data: Uint8Array) => void): number {
    let sent = 0;
    for (const [from, ring] of this.rings) {
      if (from === cand || ring.length === 0) continue;
      let start = 0;
      for (let i = 0; i < ring.length; i++) if (ring.at(i).time <= sync) start = i;
      send(from, 'input', u32msg(K_BASE, ring.at(start).id));
      sent++;
      for (let i = start; i < ring.length; i++) {
        send(from, 'input', ring.at(i).bytes.slice());
        sent++;
      }
    }
    return sent;
  }
}

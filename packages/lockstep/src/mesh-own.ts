import { encodeMameHubInputPacket, type MameHubInputPacket } from '@netplay/protocol';
import { K_BASE, K_PACKET } from './mesh-join.js';
import { blankState, type Packet, prune, u32msg } from './mesh-packets.js';
import type { OwnItem } from './mesh-remote.js';
import { Ring } from './pool.js';
import type { Envelope } from './types.js';

/**
 * A mesh peer's own input stream: the packets in force (for the OR-merge) and, for late joiners,
 * every item (packet or join notice, encoded) since the oldest sync block one can still be sent:
 * items older than `retainFrames` before the next frame are dropped (the last one at or before that
 * point stays: it sets the input in force there).
 */
export class OwnStream {
  /** The packets still needed by the merge: the last one at or before the next frame, and every later one. */
  readonly packets: Ring<Packet>;
  private readonly items: Ring<OwnItem>;
  private readonly out: MameHubInputPacket;

  constructor(
    private readonly ports: number,
    private readonly packetSize: number,
    private readonly retainFrames: number,
  ) {
    this.items = new Ring(() => ({ id: 0, time: 0, bytes: new Uint8Array(1 + packetSize) }));
    this.packets = new Ring(() => ({ id: 0, time: 0, masks: new Uint32Array(ports) }));
    this.out = { inputId: 0, futureInputTime: 0, state: blankState(ports) };
  }

  /** Items kept for late joiners. */
  get length(): number {
    return this.items.length;
  }

  /** Appends an item (a reused slot) at `next` (dropping what no late joiner can need any more). */
  push(id: number, time: number, next: number): OwnItem {
    const limit = next - this.retainFrames;
    while (this.items.length >= 2 && this.items.at(1).time <= limit) this.items.shift();
    const item = this.items.push();
    item.id = id;
    item.time = time;
    return item;
  }

  /**
   * Records and encodes packet `id` sent for frame `f` (`mask` on `port`; port -1: none) and
   * returns its bytes (the history slot's: copy them for the outbox). No allocation.
   */
  packet(id: number, time: number, f: number, port: number, mask: number): Uint8Array {
    const packet = this.packets.push();
    packet.id = id;
    packet.time = time;
    packet.masks.fill(0);
    if (port >= 0) packet.masks[port] = mask;
    prune(this.packets, f);
    // Encoded once into the history slot.
    const out = this.out;
    out.inputId = id;
    out.futureInputTime = time;
    for (let p = 0; p < this.ports; p++) out.state[p]!.currentMask = p === port ? mask : 0;
    const item = this.push(id, time, f);
    if (item.bytes.length !== 1 + this.packetSize) item.bytes = new Uint8Array(1 + this.packetSize);
    const bytes = item.bytes;
    bytes[0] = K_PACKET;
    encodeMameHubInputPacket(out, bytes, 1);
    return bytes;
  }

  /**
   * Sends `to` (a joiner) the stream from the last item at or before frame `sync` (it sets the
   * input in force there) onwards, after a base naming its first id (`nextId` if none is kept).
   */
  sendSince(to: number, sync: number, nextId: number, outbox: Envelope[]): void {
    const items = this.items;
    let from = 0;
    for (let i = 0; i < items.length; i++) if (items.at(i).time <= sync) from = i;
    const firstId = items.length > 0 ? items.at(from).id : nextId;
    outbox.push({ to, channel: 'input', data: u32msg(K_BASE, firstId) });
    // Copies: the history's slots are reused.
    for (let i = from; i < items.length; i++) outbox.push({ to, channel: 'input', data: items.at(i).bytes.slice() });
  }
}

import { type Channel, CONTROL_CHANNEL, type SendFn } from './channels.js';
import type { Remote } from './remote.js';

/**
 * The remote peers of a {@link P2PSession}, in the order they were given and by id, and the way
 * messages go to them: every byte sent or received is counted per peer, and the byte rates are
 * averaged over windows of about a second.
 * @internal
 */
export class PeerSet {
  /** Every remote peer, connected or not, in the order of the session's options. */
  readonly list: Remote[] = [];
  private readonly ids = new Map<string, Remote>();
  /** Every remote peer by id (a map, not a method: `receive` looks a peer up per message). */
  readonly byPeer: ReadonlyMap<string, Remote> = this.ids;
  private rateWindowStart: number;

  constructor(
    private readonly sendFn: SendFn,
    now: number,
  ) {
    this.rateWindowStart = now;
  }

  /** Adds a peer (the session checked that its id and slot are new). */
  add(r: Remote): void {
    this.ids.set(r.peer, r);
    this.list.push(r);
  }

  /**
   * A new incarnation of a slot (ENTER): `r` replaces every remote of its slot and any disconnected
   * remote with its id (a rejoin under the same id).
   */
  replace(r: Remote): void {
    for (let i = this.list.length - 1; i >= 0; i--) {
      const old = this.list[i]!;
      if (old.player !== r.player && old.peer !== r.peer) continue;
      this.list.splice(i, 1);
      if (this.ids.get(old.peer) === old) this.ids.delete(old.peer);
    }
    this.ids.set(r.peer, r);
    this.list.push(r);
  }

  /** Sends `data` to `r`, counting its bytes. */
  send(r: Remote, channel: Channel, data: Uint8Array): void {
    r.bytesSent += data.length;
    r.windowSent += data.length;
    this.sendFn(r.peer, channel, data);
  }

  /** Sends a control message to every connected peer. */
  sendToConnected(data: Uint8Array): void {
    for (const r of this.list) if (r.connected) this.send(r, CONTROL_CHANNEL, data);
  }

  /** Counts `bytes` received from `r`. */
  received(r: Remote, bytes: number): void {
    r.bytesReceived += bytes;
    r.windowReceived += bytes;
  }

  /** Closes the rate window once it spans a second, giving every peer its byte rates each way. */
  updateRates(now: number): void {
    const elapsed = now - this.rateWindowStart;
    if (elapsed >= 1000) {
      for (const r of this.list) {
        r.sendRate = (r.windowSent * 1000) / elapsed;
        r.receiveRate = (r.windowReceived * 1000) / elapsed;
        r.windowSent = 0;
        r.windowReceived = 0;
      }
      this.rateWindowStart = now;
    }
  }
}

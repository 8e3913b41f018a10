import { RetroArchCommand } from '@netplay/protocol';

/** Where a {@link RetroArchSessionRelay} sends frames (e.g. a host connection's `relay`). */
export interface RetroArchRelaySink {
  /** Sends one framed message (header and payload) as it is. */
  relay(bytes: Uint8Array): void;
}

/** One downstream attached to a {@link RetroArchSessionRelay}. */
export interface RetroArchRelayAttachment {
  /** The SYNC frame it was attached at. */
  readonly from: number;
  /** INPUT frames relayed to it so far. */
  readonly inputs: number;
  /** Other frames relayed to it so far, by command (LOAD_SAVESTATE, CRC, NOINPUT, MODE). */
  readonly others: Readonly<Record<number, number>>;
  /** Stops relaying to it. */
  detach(): void;
}

interface Attachment {
  readonly sink: RetroArchRelaySink;
  readonly from: number;
  readonly next: Map<number, number>;
  inputs: number;
  readonly others: Record<number, number>;
  attached: boolean;
}

/**
 * Relays the frames of a live RetroArch session (as a spectating client receives them, through
 * `RetroArchClientOptions.onRawFrame`) to downstream clients that join mid-session, in the order
 * RetroArch 1.14 insists on (observed: it drops a connection on "input out of order" and "state
 * load out of order"):
 *
 * - a downstream is synchronised at {@link hostFrame}, the frame after the upstream host's (client
 *   0) newest INPUT, and then gets every client's INPUT in order from that frame;
 * - client 0's INPUT, NOINPUT, CRC, LOAD_SAVESTATE and MODE go out live, in upstream order, so a
 *   savestate asked for at the join (`RetroArchClient.requestSavestate`) arrives exactly when the
 *   downstream's count of host frames reaches it;
 * - other clients' INPUT, which the upstream host forwards as soon as it arrives (players run
 *   ahead), is replayed in order from a buffer of the last `history` frames kept per client.
 *
 * Frames are copied into the buffer (one copy per INPUT frame); everything else is relayed as the
 * bytes received.
 */
export class RetroArchSessionRelay {
  private readonly recent = new Map<number, Map<number, Uint8Array>>();
  private readonly attachments: Attachment[] = [];
  private next0 = 0;

  constructor(private readonly history = 600) {}

  /** The frame a downstream joining now is synchronised at. */
  get hostFrame(): number {
    return this.next0;
  }

  /**
   * Starts relaying to `sink` from frame `from` (the frame its SYNC carried, normally
   * {@link hostFrame} when it connected). Buffered INPUT from `from` on is sent at once.
   */
  attach(sink: RetroArchRelaySink, from: number): RetroArchRelayAttachment {
    const a: Attachment = { sink, from, next: new Map(), inputs: 0, others: {}, attached: true };
    this.attachments.push(a);
    for (const c of this.recent.keys()) this.pump(a, c);
    return {
      from,
      get inputs() {
        return a.inputs;
      },
      others: a.others,
      detach: () => {
        a.attached = false;
        const i = this.attachments.indexOf(a);
        if (i >= 0) this.attachments.splice(i, 1);
      },
    };
  }

  /** Feeds one whole frame received from upstream (command, then the frame's bytes). */
  onUpstream(command: number, bytes: Uint8Array): void {
    if (bytes.length < 8) return;
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (command === RetroArchCommand.Input) {
      if (bytes.length < 16) return;
      const frame = v.getUint32(8);
      const client = v.getUint32(12) & 0xffff;
      if (client === 0 && frame + 1 > this.next0) this.next0 = frame + 1;
      let m = this.recent.get(client);
      if (m === undefined) {
        m = new Map();
        this.recent.set(client, m);
      }
      m.set(frame, bytes.slice());
      m.delete(frame - this.history);
      for (const a of this.attachments) this.pump(a, client);
      return;
    }
    if (
      command !== RetroArchCommand.LoadSavestate &&
      command !== RetroArchCommand.Crc &&
      command !== RetroArchCommand.NoInput &&
      command !== RetroArchCommand.Mode
    ) {
      return;
    }
    const frame = bytes.length >= 12 ? v.getUint32(8) : 0;
    for (const a of this.attachments) {
      if (frame < a.from) continue;
      a.sink.relay(bytes);
      a.others[command] = (a.others[command] ?? 0) + 1;
    }
  }

  private pump(a: Attachment, client: number): void {
    const m = this.recent.get(client);
    if (m === undefined || !a.attached) return;
    let f = a.next.get(client) ?? a.from;
    for (let b = m.get(f); b !== undefined; b = m.get(f)) {
      a.sink.relay(b);
      a.inputs++;
      f++;
    }
    a.next.set(client, f);
  }
}

import { DecodeError } from '@netplay/protocol';
import {
  decodeFaMessageInto,
  encodeFaHostProgressInto,
  encodeFaPingInto,
  encodeFaPongInto,
  FA_HOST_PROGRESS_SIZE,
  FaType,
  faMessageScratch,
} from './frame-advance-wire.js';
import type { Remote } from './mesh-remote.js';
import type { BufferPool, OutboxPool } from './pool.js';
import type { HostWatermark } from './watermark.js';

/**
 * The mesh's `ping` channel (the frame-advance wire's ping, pong and host progress): pings every
 * `intervalMs` to every remote, with the host's progress from the host; pongs answered, their
 * round trips added to the remote's ping history. Pooled buffers: no allocation per ping.
 */
export class MeshPings {
  private readonly msg = faMessageScratch();
  private readonly pingPool: BufferPool;
  private readonly pongPool: BufferPool;
  private readonly progressPool: BufferPool;
  private seq = 0;
  /** When the next pings are due. */
  nextAt = -Infinity;

  constructor(
    private readonly pool: OutboxPool,
    private readonly intervalMs: number,
    private readonly inputBytes: number,
    private readonly watermark: HostWatermark,
  ) {
    this.pingPool = pool.buffers(13);
    this.pongPool = pool.buffers(21);
    this.progressPool = pool.buffers(FA_HOST_PROGRESS_SIZE);
  }

  /** Sends the pings (and the host's progress `next`) if due. */
  tick(now: number, remotes: readonly Remote[], next: number): void {
    if (now < this.nextAt || remotes.length === 0) return;
    this.nextAt = now + this.intervalMs;
    const data = this.pingPool.take();
    encodeFaPingInto(this.seq++, now, data);
    for (let i = 0; i < remotes.length; i++) this.pool.push(remotes[i]!.id, 'ping', data);
    if (this.watermark.isHost) {
      const progress = this.progressPool.take();
      encodeFaHostProgressInto(next, progress);
      for (let i = 0; i < remotes.length; i++) this.pool.push(remotes[i]!.id, 'ping', progress);
    }
  }

  /**
   * A `ping` message from `from` (`r` if it is a remote; `fromHost` if it is the host). Returns
   * whether a round trip was added (the latency estimate changes).
   * @throws DecodeError on a bad message or host progress from a non-host.
   */
  receive(from: number, r: Remote | undefined, fromHost: boolean, data: Uint8Array, now: number): boolean {
    const m = decodeFaMessageInto(data, this.inputBytes, this.msg);
    if (m.type === FaType.Ping) {
      const out = this.pongPool.take();
      encodeFaPongInto(m.seq, m.sentAtUs, now, out);
      this.pool.push(from, 'ping', out);
    } else if (m.type === FaType.Pong && r && m.pingSentAtUs / 1000 <= now) {
      r.history.add(now - m.pingSentAtUs / 1000);
      return true;
    } else if (m.type === FaType.Progress && fromHost) this.watermark.heard(m.frame);
    else if (m.type === FaType.Progress) throw new DecodeError('bad-value', 0, 'host progress from a non-host');
    return false;
  }
}

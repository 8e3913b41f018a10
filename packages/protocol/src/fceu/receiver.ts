import { crc32 } from '../crc32.js';
import { readU32LE } from './le.js';
import { FCEU_UDP_HEADER_SIZE } from './packet.js';

/** What {@link FceuUdpReceiver.receive} did with a datagram. */
export type FceuReceiveResult =
  /** Kept: its data is now {@link FceuUdpReceiver.data}. */
  | 'accepted'
  /** Dropped: not 12 + `dataLength` bytes long. */
  | 'bad-length'
  /** Dropped: the CRC32 does not match magic, counter and data. */
  | 'bad-crc'
  /** Dropped: the magic number is not this session's. */
  | 'bad-magic'
  /** Dropped: a duplicate or an older counter than one already kept. */
  | 'stale';

/** How many datagrams were dropped, by reason. */
export interface FceuDropCounts {
  /** Datagrams of the wrong size. */
  badLength: number;
  /** Datagrams whose CRC32 did not match. */
  badCrc: number;
  /** Datagrams with another session's magic number. */
  badMagic: number;
  /** Duplicates and datagrams older than one already kept. */
  stale: number;
}

/** Options for {@link FceuUdpReceiver}. */
export interface FceuUdpReceiverOptions {
  /** The session's magic number (sent by the server in its init message). */
  magic: number;
  /** Data bytes per datagram: 1 on the server (controller byte), 5 on a client (frame data). */
  dataLength: number;
  /**
   * `highest` (default; what the FCE Ultra server does): keep any counter at or above the next
   * expected one and jump to it, so late and duplicate datagrams are dropped and lost ones are
   * skipped. `in-order` (what an FCE Ultra client does): keep only exactly the next counter.
   */
  mode?: 'highest' | 'in-order';
  /** The first counter expected (default 0: counters start at 0). */
  firstCounter?: number;
}

/**
 * The UDP receive rule of FCE Ultra 0.91 as a sans-I/O state machine: feed it datagrams, it
 * checks length, CRC32, magic (in that order, as FCE Ultra's `CheckUDP`) and counter, keeps the
 * data of the packet with the highest counter and counts every drop by reason. It allocates
 * nothing per datagram: the kept data is copied into {@link data}.
 *
 * Counter rule (`highest`): a datagram with counter `c` is kept when `c >= nextCounter`; then
 * `nextCounter = c + 1`. Fed any interleaving of datagrams, the data kept last is that of the
 * highest counter seen, and every duplicate or older counter is `stale`.
 */
export class FceuUdpReceiver {
  /** The data of the last datagram kept (zeros before the first). */
  readonly data: Uint8Array;
  /** Drops so far, by reason. */
  readonly drops: FceuDropCounts = { badLength: 0, badCrc: 0, badMagic: 0, stale: 0 };
  /** Datagrams kept so far. */
  accepted = 0;
  private next: number;
  private last = -1;
  private readonly magic: number;
  private readonly size: number;
  private readonly highest: boolean;

  constructor(options: FceuUdpReceiverOptions) {
    const { magic, dataLength } = options;
    if (!Number.isInteger(magic) || magic < 0 || magic > 0xffffffff) throw new RangeError(`magic ${magic}`);
    if (!Number.isInteger(dataLength) || dataLength < 0 || dataLength > 65_507 - FCEU_UDP_HEADER_SIZE) {
      throw new RangeError(`dataLength ${dataLength}`);
    }
    const first = options.firstCounter ?? 0;
    if (!Number.isInteger(first) || first < 0 || first > 0xffffffff) throw new RangeError(`firstCounter ${first}`);
    this.magic = magic;
    this.size = FCEU_UDP_HEADER_SIZE + dataLength;
    this.data = new Uint8Array(dataLength);
    this.highest = (options.mode ?? 'highest') === 'highest';
    this.next = first;
  }

  /** The lowest counter that would still be kept (2^32 once counter 0xFFFFFFFF was kept). */
  get nextCounter(): number {
    return this.next;
  }

  /** The counter of the last datagram kept, or -1 before the first. */
  get lastCounter(): number {
    return this.last;
  }

  /** Checks one datagram and keeps its data if it passes; returns what happened. */
  receive(datagram: Uint8Array): FceuReceiveResult {
    if (datagram.length !== this.size) {
      this.drops.badLength++;
      return 'bad-length';
    }
    if (crc32(datagram, 4) !== readU32LE(datagram, 0)) {
      this.drops.badCrc++;
      return 'bad-crc';
    }
    if (readU32LE(datagram, 4) !== this.magic) {
      this.drops.badMagic++;
      return 'bad-magic';
    }
    const counter = readU32LE(datagram, 8);
    if (this.highest ? counter < this.next : counter !== this.next) {
      this.drops.stale++;
      return 'stale';
    }
    this.next = counter + 1;
    this.last = counter;
    this.accepted++;
    this.data.set(datagram.subarray(FCEU_UDP_HEADER_SIZE));
    return 'accepted';
  }
}
